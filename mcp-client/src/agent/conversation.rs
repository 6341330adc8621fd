//! The tool-call loop (spec 002): each turn sends the conversation and the tools to the model
//! and collects its text and calls; no calls → done; calls → run them all through the
//! [`ToolExecutor`], append the assistant turn and one result per call id, and go on, until
//! the turn limit, the token budget, a provider error or a cancellation ends it.

use std::{
    collections::HashSet,
    hash::{BuildHasher as _, Hasher as _},
    sync::Arc,
    time::Duration,
};

use common::Backoff;
use serde_json::Value;
use tokio_util::sync::CancellationToken;
use tracing::{debug, info, warn};

use super::{
    event::{AgentEvent, Answer, DoneReason},
    journal::{Approver, Journal, Outcome},
    policy::{self, AgentOptions},
};
use crate::{
    llm::{
        ChatRequest, FinishReason, Message, Provider, ProviderError, StreamEvent, ToolCallRequest,
        ToolChoice, ToolResult, Usage,
    },
    tools::{
        ToolCall, ToolError, ToolOutcome,
        definition::ToolDefinition,
        executor::{BatchProgressFn, ToolExecutor},
        results,
    },
};

/// Receives the loop's events as they happen (text deltas at once, as they arrive).
pub type EventSink = Arc<dyn Fn(AgentEvent) + Send + Sync>;

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

/// Asks a model questions and runs the tools it calls.
#[derive(Clone)]
pub struct Agent {
    provider: Arc<dyn Provider>,
    executor: ToolExecutor,
    options: AgentOptions,
    approver: Option<Arc<dyn Approver>>,
    journal: Option<Arc<dyn Journal>>,
}

/// What one model turn produced so far (kept when the turn is cancelled midway).
#[derive(Default)]
struct Turn {
    text: String,
    calls: Vec<ToolCallRequest>,
    /// What the server said it used; `None` when it did not say (llama.cpp's streams do not,
    /// even when asked).
    usage: Option<Usage>,
    finished: bool,
    /// It stopped at the output token limit.
    cut: bool,
}

/// One turn's results as they come: a slot per call, in call order.
struct Results {
    slots: Vec<Option<ToolResult>>,
    conversation: String,
    turn: u32,
}

/// What one question produced so far.
struct Progress {
    turns: u32,
    tool_iterations: u32,
    /// Tokens of every turn; `None` once a turn's usage is unknown (a partial sum would be
    /// taken for the whole).
    usage: Option<Usage>,
    last_turn: Usage,
    texts: Vec<String>,
    calls: Vec<ToolCall>,
    results: Vec<ToolResult>,
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
    /// exactly one result in the conversation, whatever happened to it (spec 000).
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
        let mut progress = Progress {
            turns: 0,
            tool_iterations: 0,
            usage: Some(Usage::default()),
            last_turn: Usage::default(),
            texts: Vec::new(),
            calls: Vec::new(),
            results: Vec::new(),
        };
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
            if progress.turns >= self.options.max_turns {
                return (DoneReason::MaxTurnsReached, None);
            }
            if let Some(budget) = self.options.token_budget
                && progress.turns > 0
                && progress
                    .usage
                    .map_or(0, |usage| usage.total())
                    .saturating_add(next_turn_estimate(progress, conversation))
                    > budget
            {
                return (DoneReason::TokenBudgetReached, None);
            }
            progress.turns += 1;
            let turn_number = progress.turns;
            let answer_only = self.options.refinement
                && progress.tool_iterations >= policy::REFINEMENT_ITERATIONS;
            let tool_choice = match &self.options.tool_choice {
                _ if answer_only => ToolChoice::None,
                ToolChoice::None => ToolChoice::None,
                ToolChoice::Tool(name) if turn_number == 1 => {
                    if !tools.iter().any(|tool| &tool.name == name) {
                        return (DoneReason::Error, Some(unknown_tool_choice(name, &tools)));
                    }
                    ToolChoice::Tool(name.clone())
                }
                forced if turn_number == 1 => forced.clone(),
                // Forcing every request would never let the model answer.
                _ => ToolChoice::Auto,
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
            progress.usage = progress.usage.zip(turn.usage).map(|(mut sum, turn)| {
                sum.add(turn);
                sum
            });
            progress.last_turn = turn.usage.unwrap_or_default();
            if streamed.as_ref().is_some_and(Result::is_ok)
                && self.options.token_budget.is_some()
                && turn.usage.is_none()
            {
                // A budget that cannot be counted is not enforced silently.
                // Its calls never run: keep only what the person already saw.
                if !turn.text.is_empty() {
                    self.push(
                        conversation,
                        turn_number,
                        assistant(turn.text.clone(), Vec::new()),
                    );
                }
                return (
                    DoneReason::Error,
                    Some(
                        "the model server did not say how many tokens it used, so --token-budget cannot be kept: use --no-stream with --token-budget (servers report usage for whole responses), or leave the budget out".to_owned(),
                    ),
                );
            }
            progress.texts.push(turn.text.clone());
            unique_ids(conversation, &mut turn.calls);
            let calls: Vec<ToolCall> = turn.calls.iter().map(|c| c.call.clone()).collect();
            match streamed {
                None => {
                    // Keep what the person already saw; calls of a cut turn never run.
                    if !turn.text.is_empty() {
                        self.push(conversation, turn_number, assistant(turn.text, Vec::new()));
                    }
                    return (DoneReason::Cancelled, None);
                }
                Some(Err(err)) => {
                    if !turn.text.is_empty() {
                        self.push(conversation, turn_number, assistant(turn.text, Vec::new()));
                    }
                    return (DoneReason::Error, Some(err.to_string()));
                }
                Some(Ok(())) => {}
            }
            self.push(
                conversation,
                turn_number,
                assistant(turn.text.clone(), calls.clone()),
            );
            progress.calls.extend(calls.iter().cloned());
            if calls.is_empty() {
                events(AgentEvent::TurnFinished {
                    turn: turn_number,
                    usage: turn.usage,
                });
                let reason = if turn.cut {
                    DoneReason::Truncated
                } else {
                    DoneReason::Completed
                };
                if turn.text.trim().is_empty() {
                    tracing::debug!(turn = turn_number, "the model's final answer is empty");
                    events(AgentEvent::EmptyAnswer);
                }
                return (reason, None);
            }
            if turn.cut {
                // A call whose arguments the limit cut off is not run: the model is told why.
                for call in &mut turn.calls {
                    if call.invalid_arguments.is_some() {
                        call.invalid_arguments = Some(
                            "its arguments were cut off at the output token limit (max_tokens), so it was not run; call it again with complete arguments".to_owned(),
                        );
                    }
                }
            }
            if self.options.refinement
                && progress.tool_iterations + 1 == policy::REFINEMENT_ITERATIONS
            {
                for call in &calls {
                    info!(iteration = policy::REFINEMENT_ITERATIONS, tool = %call.name, "Model requesting refinement search");
                    events(AgentEvent::Refinement {
                        iteration: policy::REFINEMENT_ITERATIONS,
                        tool: call.name.clone(),
                    });
                }
            }
            // Each result is recorded as it comes (a call that finished before a cancel or a
            // crash keeps its result); the conversation gets them together, in call order.
            let mut results = Results {
                slots: vec![None; calls.len()],
                conversation: conversation.id.clone(),
                turn: turn_number,
            };
            let cancelled = if answer_only {
                for (index, call) in calls.iter().enumerate() {
                    self.settle(&mut results, index, error_result(
                        call,
                        "no more tool calls are allowed in this conversation; answer with the information you have",
                    ));
                }
                false
            } else {
                tokio::select! {
                    () = self.run_tools(&turn.calls, &mut results, events) => false,
                    () = cancel.cancelled() => true,
                }
            };
            for (index, call) in calls.iter().enumerate() {
                if results.slots[index].is_none() {
                    let result = error_result(call, "the call was cancelled before it finished");
                    self.settle(&mut results, index, result);
                }
            }
            let results: Vec<ToolResult> = results.slots.into_iter().flatten().collect();
            progress.results.extend(results.iter().cloned());
            conversation.messages.push(Message::ToolResults { results });
            if cancelled {
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

    /// Runs one turn's calls: bad arguments and declined calls get their error result at
    /// once; the rest run concurrently; failed idempotent calls are retried if asked.
    async fn run_tools(
        &self,
        calls: &[ToolCallRequest],
        results: &mut Results,
        events: &EventSink,
    ) {
        let mut runnable: Vec<(usize, ToolCall, Value)> = Vec::new();
        for (index, request) in calls.iter().enumerate() {
            let call = &request.call;
            if let Some(problem) = &request.invalid_arguments {
                // The ✗ line says it; the log only when asked.
                debug!(tool = %call.name, problem = %problem, "tool call with unusable arguments");
                let result = error_result(
                    call,
                    &format!(
                        "{problem}; call `{}` again with a JSON object of arguments",
                        call.name
                    ),
                );
                report(events, call, call.args.clone(), &result, Duration::ZERO);
                self.settle(results, index, result);
                continue;
            }
            let normalized = self
                .executor
                .normalized_arguments(&call.name, call.args.clone());
            let manager = self.executor.manager();
            let tool = manager.find(&call.name).map(|t| &t.definition);
            if let (Some(approver), Some(tool)) = (&self.approver, tool)
                && !tool.hints.read_only
                && !approver
                    .approve(
                        &ToolCall {
                            args: normalized.clone(),
                            ..call.clone()
                        },
                        tool,
                    )
                    .await
            {
                info!(tool = %call.name, "the user declined a tool call");
                let result = error_result(
                    call,
                    &format!(
                        "the user declined to run `{}`; it was not executed",
                        call.name
                    ),
                );
                report(events, call, normalized, &result, Duration::ZERO);
                self.settle(results, index, result);
                continue;
            }
            runnable.push((index, call.clone(), normalized));
        }
        if runnable.is_empty() {
            return;
        }
        // Every approval is asked before any call is said to run (a host's spinner must not
        // draw over the next prompt); then they all start.
        for (_, call, normalized) in &runnable {
            events(AgentEvent::ToolCall {
                id: call.id.clone(),
                name: call.name.clone(),
                args: call.args.clone(),
                normalized_args: normalized.clone(),
            });
        }
        let batch: Vec<ToolCall> = runnable.iter().map(|(_, call, _)| call.clone()).collect();
        let sink = Arc::clone(events);
        let progress: BatchProgressFn = Arc::new(move |id: &str, update| {
            sink(AgentEvent::ToolProgress {
                id: id.to_owned(),
                progress: update.progress,
                total: update.total,
                message: update.message,
            });
        });
        let mut running = self.executor.start_all(&batch, Some(progress));
        let mut runnable: Vec<Option<(usize, ToolCall, Value)>> =
            runnable.into_iter().map(Some).collect();
        while let Some((position, outcome)) = running.next().await {
            let Some((index, call, normalized)) = runnable.get_mut(position).and_then(Option::take)
            else {
                continue;
            };
            let outcome = self.retry(&call, outcome).await;
            let result = ToolResult {
                call_id: call.id.clone(),
                tool_name: call.name.clone(),
                result: results::for_model(&outcome, self.options.max_result_chars),
            };
            report(
                events,
                &call,
                normalized,
                &result,
                Duration::from_millis(outcome.execution_time_ms),
            );
            self.settle(results, index, result);
        }
    }

    /// Records the result of call `index` in the journal and keeps it for the conversation.
    fn settle(&self, results: &mut Results, index: usize, result: ToolResult) {
        if let Some(journal) = &self.journal {
            journal.message(
                &results.conversation,
                results.turn,
                &Message::ToolResults {
                    results: vec![result.clone()],
                },
            );
        }
        if let Some(slot) = results.slots.get_mut(index) {
            *slot = Some(result);
        }
    }

    /// Runs a failed call again when the policy allows it: opt-in, an idempotent tool, and a
    /// transient failure.
    async fn retry(&self, call: &ToolCall, mut outcome: ToolOutcome) -> ToolOutcome {
        let Some(retry) = self.options.tool_retry else {
            return outcome;
        };
        let idempotent = self
            .executor
            .manager()
            .find(&call.name)
            .is_some_and(|tool| tool.definition.hints.idempotent);
        let mut attempt = 1;
        while outcome.error().is_some_and(ToolError::is_retryable)
            && idempotent
            && attempt < retry.attempts
        {
            let wait = Backoff::exponential(retry.base_delay, Duration::MAX).after(attempt);
            warn!(tool = %call.name, attempt, wait = ?wait, error = ?outcome.error_text(), "retrying an idempotent tool call");
            tokio::time::sleep(wait).await;
            attempt += 1;
            outcome = self.executor.execute(&call.name, call.args.clone()).await;
        }
        outcome
    }

    fn push(&self, conversation: &mut Conversation, turn: u32, message: Message) {
        if let Some(journal) = &self.journal {
            journal.message(&conversation.id, turn, &message);
        }
        conversation.messages.push(message);
    }
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

fn assistant(text: String, tool_calls: Vec<ToolCall>) -> Message {
    Message::Assistant { text, tool_calls }
}

fn error_result(call: &ToolCall, reason: &str) -> ToolResult {
    ToolResult {
        call_id: call.id.clone(),
        tool_name: call.name.clone(),
        result: results::for_model(&ToolOutcome::not_run(&call.name, reason), None),
    }
}

/// Tells the host a call's outcome; `normalized` are its arguments as sent to the server (as
/// they would have been, for a call that did not run).
fn report(
    events: &EventSink,
    call: &ToolCall,
    normalized: Value,
    result: &ToolResult,
    took: Duration,
) {
    events(AgentEvent::ToolResult {
        id: result.call_id.clone(),
        name: result.tool_name.clone(),
        args: call.args.clone(),
        normalized_args: normalized,
        success: !result.result.is_error,
        duration_ms: u64::try_from(took.as_millis()).unwrap_or(u64::MAX),
        text: result.result.text.clone(),
    });
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
