//! The tool-call loop: each turn sends the conversation and the tools to the model
//! and collects its text and calls; no calls → done; calls → run them all through the
//! [`ToolExecutor`], append the assistant turn and one result per call id, and go on, until
//! the turn limit, the token budget, a provider error or a cancellation ends it. Each call
//! gets an id unique in the conversation here; how a turn's calls are answered is `calls`'
//! business.

use std::{
    collections::HashSet,
    hash::{BuildHasher as _, Hasher as _},
    sync::Arc,
};

use tokio_util::sync::CancellationToken;
use tracing::{debug, info};

use super::{
    event::{AgentEvent, Answer, DoneReason, EventSink},
    journal::{Approver, Journal, Outcome},
    policy::{self, AgentOptions},
    turn::{Progress, Turn},
};
use crate::{
    llm::{
        ChatRequest, FinishReason, Message, Provider, ProviderError, StreamEvent, ToolCallRequest,
        ToolChoice,
    },
    tools::{ToolCall, definition::ToolDefinition, executor::ToolExecutor},
};

/// A conversation: its id and every message so far.
#[derive(Debug, Clone, PartialEq)]
pub struct Conversation {
    /// Its id (stable across resumes).
    pub id: String,
    /// Every message, in order.
    pub messages: Vec<Message>,
}

impl Conversation {
    /// A new, empty conversation with a fresh id.
    pub fn new() -> Self {
        Self::resume(new_id(), Vec::new())
    }

    /// A stored conversation, to continue: each turn's results gathered in call order, and
    /// a call with none (the host was stopped mid-turn) answered as interrupted.
    pub fn resume(id: String, messages: Vec<Message>) -> Self {
        Self {
            id,
            messages: super::resume::repair(messages),
        }
    }
}

impl Default for Conversation {
    fn default() -> Self {
        Self::new()
    }
}

/// A sortable, unique id: the UTC time and 32 random bits (`20261122T211444-3f2a9c01`).
fn new_id() -> String {
    let random = std::hash::RandomState::new().build_hasher().finish() as u32;
    let now = jiff::Timestamp::now().strftime("%Y%m%dT%H%M%S");
    format!("{now}-{random:08x}")
}

/// Gives every call an id no other call of the conversation has, before any is run or
/// stored: a model may repeat an id within a turn, and ids a decoder invents for servers
/// that send none (`call_0`) repeat every turn. A later duplicate becomes `<id>_2` (`_3`, …);
/// its result carries the new id, so each result reaches its call.
fn unique_ids(conversation: &Conversation, calls: &mut [ToolCallRequest]) {
    let mut taken: HashSet<String> = conversation
        .messages
        .iter()
        .flat_map(|message| match message {
            Message::Assistant { tool_calls, .. } => tool_calls.as_slice(),
            _ => &[],
        })
        .map(|call| call.id.clone())
        .collect();
    for request in calls {
        let id = &mut request.call.id;
        if id.is_empty() || taken.contains(id.as_str()) {
            let base = if id.is_empty() { "call" } else { id.as_str() };
            let fresh = (2u32..)
                .map(|n| format!("{base}_{n}"))
                .find(|candidate| !taken.contains(candidate))
                .unwrap_or_default();
            debug!(old = %id, new = %fresh, "a tool call id already in the conversation was renamed");
            *id = fresh;
        }
        taken.insert(id.clone());
    }
}

/// Asks a model questions and runs the tools it calls.
#[derive(Clone)]
pub struct Agent {
    provider: Arc<dyn Provider>,
    pub(super) executor: ToolExecutor,
    pub(super) options: AgentOptions,
    pub(super) approver: Option<Arc<dyn Approver>>,
    pub(super) journal: Option<Arc<dyn Journal>>,
}

impl Agent {
    /// An agent asking `provider` and running tools through `executor`, with default options.
    pub fn new(provider: Arc<dyn Provider>, executor: ToolExecutor) -> Self {
        Self {
            provider,
            executor,
            options: AgentOptions::default(),
            approver: None,
            journal: None,
        }
    }

    /// Sets the options.
    pub fn with_options(mut self, options: AgentOptions) -> Self {
        self.executor = self.executor.with_parallel(options.parallel_tools);
        self.options = options;
        self
    }

    /// Asks `approver` before running tools that may change things.
    pub fn with_approver(mut self, approver: Arc<dyn Approver>) -> Self {
        self.approver = Some(approver);
        self
    }

    /// Records every conversation in `journal`.
    pub fn with_journal(mut self, journal: Arc<dyn Journal>) -> Self {
        self.journal = Some(journal);
        self
    }

    /// The options.
    pub fn options(&self) -> &AgentOptions {
        &self.options
    }

    /// Asks one question in a new conversation and returns just the answer.
    pub async fn run(&self, question: &str) -> Answer {
        let mut conversation = Conversation::new();
        let sink: EventSink = Arc::new(|_| {});
        self.ask(
            &mut conversation,
            question,
            &sink,
            &CancellationToken::new(),
        )
        .await
    }

    /// Asks `question` in `conversation`, telling `events` what happens, until the model
    /// answers or a policy, an error or `cancel` ends it. Every call the model made gets
    /// exactly one result in the conversation, whatever happened to it.
    pub async fn ask(
        &self,
        conversation: &mut Conversation,
        question: &str,
        events: &EventSink,
        cancel: &CancellationToken,
    ) -> Answer {
        if let Some(journal) = &self.journal {
            journal.begin(&conversation.id, &self.provider.describe(), question);
        }
        if conversation.messages.is_empty()
            && let Some(system) = &self.options.system_prompt
        {
            self.push(conversation, 0, Message::system(system.clone()));
        }
        self.push(conversation, 0, Message::user(question));
        let mut progress = Progress::new();
        let (reason, error) = self
            .turns(conversation, &mut progress, events, cancel)
            .await;
        if let Some(message) = &error {
            events(AgentEvent::Error {
                message: message.clone(),
            });
        }
        let outcome = Outcome {
            reason,
            turns: progress.turns,
            usage: progress.usage,
            error: error.clone(),
        };
        if let Some(journal) = &self.journal {
            journal.outcome(&conversation.id, &outcome);
        }
        match reason {
            DoneReason::Completed => {}
            DoneReason::MaxTurnsReached => {
                info!(max_turns = self.options.max_turns, "max turns reached")
            }
            other => info!(reason = other.as_str(), "conversation stopped"),
        }
        events(AgentEvent::Done {
            reason,
            turns: progress.turns,
            usage: progress.usage,
            conversation_id: conversation.id.clone(),
        });
        Answer {
            text: progress
                .texts
                .iter()
                .filter(|t| !t.trim().is_empty())
                .cloned()
                .collect::<Vec<_>>()
                .join("\n\n"),
            reason,
            error,
            turns: progress.turns,
            usage: progress.usage,
            tool_calls: progress.calls,
            tool_results: progress.results,
            conversation_id: conversation.id.clone(),
        }
    }

    async fn turns(
        &self,
        conversation: &mut Conversation,
        progress: &mut Progress,
        events: &EventSink,
        cancel: &CancellationToken,
    ) -> (DoneReason, Option<String>) {
        let mut tools = Vec::new();
        let mut first = true;
        loop {
            // Each turn offers the tools as they are now: a server that connected late, came
            // back after a crash or changed its tools (`tools/list_changed`) is seen at once.
            if self.executor.refresh().await || first {
                first = false;
                tools = self
                    .executor
                    .manager()
                    .all()
                    .iter()
                    .map(|tool| tool.definition.clone())
                    .collect::<Vec<ToolDefinition>>();
            }
            if let Some(limit) = self.limit_reached(progress, conversation) {
                return (limit, None);
            }
            progress.turns += 1;
            let turn_number = progress.turns;
            let answer_only = self.options.refinement
                && progress.tool_iterations >= policy::REFINEMENT_ITERATIONS;
            let tool_choice = match self.tool_choice(turn_number, answer_only, &tools) {
                Ok(choice) => choice,
                Err(message) => return (DoneReason::Error, Some(message)),
            };
            let request = ChatRequest {
                messages: &conversation.messages,
                tools: &tools,
                tool_choice,
            };
            let mut turn = Turn::default();
            let streamed = tokio::select! {
                result = self.stream_turn(&request, &mut turn, events) => Some(result),
                () = cancel.cancelled() => None,
            };
            if let Some(end) = self.keep_turn(
                conversation,
                progress,
                turn_number,
                &mut turn,
                streamed,
                events,
            ) {
                return end;
            }
            if self
                .answer_calls(
                    conversation,
                    progress,
                    turn_number,
                    &mut turn,
                    answer_only,
                    (events, cancel),
                )
                .await
            {
                return (DoneReason::Cancelled, None);
            }
            if !answer_only {
                progress.tool_iterations += 1;
            }
            if self.options.refinement
                && let Some((prompt, _)) = policy::refinement_follow_up(progress.tool_iterations)
                && !answer_only
            {
                self.push(conversation, turn_number, Message::user(prompt));
            }
            events(AgentEvent::TurnFinished {
                turn: turn_number,
                usage: turn.usage,
            });
        }
    }

    /// Counts the turn's usage and adds it to the conversation; returns how the question
    /// ends when it ends with this turn: cancelled or failed midway (only the text already
    /// shown is kept; calls of a cut turn never run), an uncountable budget, or an answer
    /// without calls.
    fn keep_turn(
        &self,
        conversation: &mut Conversation,
        progress: &mut Progress,
        turn_number: u32,
        turn: &mut Turn,
        streamed: Option<Result<(), ProviderError>>,
        events: &EventSink,
    ) -> Option<(DoneReason, Option<String>)> {
        progress.usage = progress.usage.zip(turn.usage).map(|(mut sum, turn)| {
            sum.add(turn);
            sum
        });
        progress.last_turn = turn.usage.unwrap_or_default();
        let shown_only = |agent: &Self, conversation: &mut Conversation, turn: &Turn| {
            if !turn.text.is_empty() {
                agent.push(
                    conversation,
                    turn_number,
                    assistant(turn.text.clone(), Vec::new()),
                );
            }
        };
        let uncounted = self.options.token_budget.is_some() && turn.usage.is_none();
        if !(uncounted && matches!(streamed, Some(Ok(())))) {
            progress.texts.push(turn.text.clone());
        }
        let end = match streamed {
            None => Some((DoneReason::Cancelled, None)),
            Some(Err(err)) => Some((DoneReason::Error, Some(err.to_string()))),
            // A budget that cannot be counted is not enforced silently.
            Some(Ok(())) if uncounted => Some((
                DoneReason::Error,
                Some(
                    "the model server did not say how many tokens it used, so --token-budget cannot be kept: use --no-stream with --token-budget (servers report usage for whole responses), or leave the budget out".to_owned(),
                ),
            )),
            Some(Ok(())) => None,
        };
        if end.is_some() {
            shown_only(self, conversation, turn);
            return end;
        }
        unique_ids(conversation, &mut turn.calls);
        let calls: Vec<ToolCall> = turn.calls.iter().map(|c| c.call.clone()).collect();
        progress.calls.extend(calls.iter().cloned());
        let answered = calls.is_empty();
        self.push(
            conversation,
            turn_number,
            assistant(turn.text.clone(), calls),
        );
        if !answered {
            return None;
        }
        events(AgentEvent::TurnFinished {
            turn: turn_number,
            usage: turn.usage,
        });
        if turn.text.trim().is_empty() {
            tracing::debug!(turn = turn_number, "the model's final answer is empty");
            events(AgentEvent::EmptyAnswer);
        }
        let reason = if turn.cut {
            DoneReason::Truncated
        } else {
            DoneReason::Completed
        };
        Some((reason, None))
    }

    /// Whether another turn would pass a limit: the turn limit, or the token budget.
    fn limit_reached(
        &self,
        progress: &Progress,
        conversation: &Conversation,
    ) -> Option<DoneReason> {
        if progress.turns >= self.options.max_turns {
            return Some(DoneReason::MaxTurnsReached);
        }
        let budget = self.options.token_budget?;
        let used = progress.usage.map_or(0, |usage| usage.total());
        (progress.turns > 0
            && used.saturating_add(next_turn_estimate(progress, conversation)) > budget)
            .then_some(DoneReason::TokenBudgetReached)
    }

    /// The tool choice of turn `turn_number`: the configured one for a question's first
    /// request, `auto` after it (forcing every request would never let the model answer),
    /// none when the refinement allows no more calls.
    ///
    /// # Errors
    /// The configured choice names a tool no server offers.
    fn tool_choice(
        &self,
        turn_number: u32,
        answer_only: bool,
        tools: &[ToolDefinition],
    ) -> Result<ToolChoice, String> {
        Ok(match &self.options.tool_choice {
            _ if answer_only => ToolChoice::None,
            ToolChoice::None => ToolChoice::None,
            ToolChoice::Tool(name) if turn_number == 1 => {
                if !tools.iter().any(|tool| &tool.name == name) {
                    return Err(unknown_tool_choice(name, tools));
                }
                ToolChoice::Tool(name.clone())
            }
            forced if turn_number == 1 => forced.clone(),
            _ => ToolChoice::Auto,
        })
    }

    /// Streams one model response into `turn`, forwarding text as it comes.
    async fn stream_turn(
        &self,
        request: &ChatRequest<'_>,
        turn: &mut Turn,
        events: &EventSink,
    ) -> Result<(), ProviderError> {
        let mut stream = self.provider.chat(request);
        while let Some(event) = stream.next().await {
            match event? {
                StreamEvent::TextDelta(text) => {
                    turn.text.push_str(&text);
                    events(AgentEvent::TextDelta { text });
                }
                StreamEvent::ToolCall(call) => turn.calls.push(call),
                StreamEvent::Usage(usage) => turn.usage = Some(usage),
                StreamEvent::Finished(reason) => {
                    turn.finished = true;
                    turn.cut = reason == FinishReason::Length;
                }
                StreamEvent::ToolCallStarted { .. }
                | StreamEvent::ToolCallArgumentsDelta { .. } => {}
            }
        }
        if turn.finished {
            Ok(())
        } else {
            Err(ProviderError::StreamCut {
                provider: "the model provider",
                detail: "the response stopped without finishing".into(),
            })
        }
    }

    fn push(&self, conversation: &mut Conversation, turn: u32, message: Message) {
        if let Some(journal) = &self.journal {
            journal.message(&conversation.id, turn, &message);
        }
        conversation.messages.push(message);
    }
}

fn assistant(text: String, tool_calls: Vec<ToolCall>) -> Message {
    Message::Assistant { text, tool_calls }
}

/// The error for a tool choice that names no tool offered.
fn unknown_tool_choice(name: &str, tools: &[ToolDefinition]) -> String {
    let offered: Vec<&str> = tools.iter().map(|tool| tool.name.as_str()).collect();
    format!(
        "--tool-choice names {name:?}, which no server offers; the tools offered: {}",
        if offered.is_empty() {
            "none".to_owned()
        } else {
            offered.join(", ")
        }
    )
}

/// Tokens the next turn will take at least: everything the last turn read and wrote, plus the
/// tool results added since (about 4 characters a token).
fn next_turn_estimate(progress: &Progress, conversation: &Conversation) -> u64 {
    let added: usize = match conversation.messages.last() {
        Some(Message::ToolResults { results }) => results.iter().map(|r| r.result.text.len()).sum(),
        Some(Message::User { text }) => text.len(),
        _ => 0,
    };
    progress
        .last_turn
        .total()
        .saturating_add(u64::try_from(added / 4).unwrap_or(u64::MAX))
}
