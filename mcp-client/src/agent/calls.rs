//! One turn's tool calls (their ids already unique in the conversation), answered: the calls
//! past the per-answer bound (`max_calls_per_answer`) answered as not run, calls with unusable
//! arguments or declined by the user answered at once, every approval asked before any call
//! is said to run, the rest run concurrently with each result recorded as it comes (a call
//! that finished before a cancel or a crash keeps its result), failed idempotent calls
//! retried when asked, and exactly one result per call, in call order.

use std::{sync::Arc, time::Duration};

use common::Backoff;
use serde_json::Value;
use tokio_util::sync::CancellationToken;
use tracing::{debug, info, warn};

use super::{
    conversation::{Agent, Conversation},
    event::{AgentEvent, EventSink},
    policy,
    turn::{Progress, Turn},
};
use crate::{
    llm::{Message, ToolCallRequest, ToolResult},
    tools::{ToolCall, ToolError, ToolOutcome, executor::BatchProgressFn, results},
};

/// A call that may run: its index in the turn, the call, its normalized arguments.
type Runnable = (usize, ToolCall, Value);

/// One turn's results as they come: a slot per call, in call order.
struct Results {
    slots: Vec<Option<ToolResult>>,
    conversation: String,
    turn: u32,
}

impl Agent {
    /// Answers the calls of `turn` (all with an error when `answer_only`: the refinement
    /// allows no more); their results join the conversation in call order. Returns whether
    /// the question was cancelled meanwhile.
    pub(super) async fn answer_calls(
        &self,
        conversation: &mut Conversation,
        progress: &mut Progress,
        turn_number: u32,
        turn: &mut Turn,
        answer_only: bool,
        (events, cancel): (&EventSink, &CancellationToken),
    ) -> bool {
        let calls: Vec<ToolCall> = turn.calls.iter().map(|c| c.call.clone()).collect();
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
        if self.options.refinement && progress.tool_iterations + 1 == policy::REFINEMENT_ITERATIONS
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
            let bound = self.options.max_calls_per_answer.max(1);
            let (first, rest) = turn.calls.split_at(bound.min(turn.calls.len()));
            if !rest.is_empty() {
                warn!(
                    calls = turn.calls.len(),
                    max = bound,
                    "the model asked for more tool calls in one answer than are run; the rest are answered as not run"
                );
                let reason = format!(
                    "not run: at most {bound} tool calls per answer; ask again for the rest"
                );
                let over: Vec<(usize, ToolResult)> = rest
                    .iter()
                    .enumerate()
                    .map(|(n, request)| (first.len() + n, error_result(&request.call, &reason)))
                    .collect();
                self.settle_all(&mut results, over);
            }
            tokio::select! {
                () = self.run_tools(first, &mut results, events) => false,
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
        cancelled
    }

    /// Runs one turn's calls: bad arguments and declined calls get their error result at
    /// once; the rest run concurrently; failed idempotent calls are retried if asked.
    async fn run_tools(
        &self,
        calls: &[ToolCallRequest],
        results: &mut Results,
        events: &EventSink,
    ) {
        let runnable = self.screen(calls, results, events).await;
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
        let mut runnable: Vec<Option<Runnable>> = runnable.into_iter().map(Some).collect();
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
            let took = Duration::from_millis(outcome.execution_time_ms);
            report(events, &call, normalized, &result, took);
            self.settle(results, index, result);
        }
    }

    /// Answers the calls that cannot run (arguments unusable, declined by the user) and
    /// returns the others, with their index and normalized arguments.
    async fn screen(
        &self,
        calls: &[ToolCallRequest],
        results: &mut Results,
        events: &EventSink,
    ) -> Vec<Runnable> {
        let mut runnable = Vec::new();
        for (index, request) in calls.iter().enumerate() {
            let call = &request.call;
            if let Some(problem) = &request.invalid_arguments {
                // The ✗ line says it; the log only when asked.
                debug!(tool = %call.name, problem = %problem, "tool call with unusable arguments");
                let reason = format!(
                    "{problem}; call `{}` again with a JSON object of arguments",
                    call.name
                );
                let result = error_result(call, &reason);
                report(events, call, call.args.clone(), &result, Duration::ZERO);
                self.settle(results, index, result);
                continue;
            }
            let normalized = self
                .executor
                .normalized_arguments(&call.name, call.args.clone());
            if !self.approved(call, &normalized).await {
                info!(tool = %call.name, "the user declined a tool call");
                let reason = format!(
                    "the user declined to run `{}`; it was not executed",
                    call.name
                );
                let result = error_result(call, &reason);
                report(events, call, normalized, &result, Duration::ZERO);
                self.settle(results, index, result);
                continue;
            }
            runnable.push((index, call.clone(), normalized));
        }
        runnable
    }

    /// Whether `call` may run: always for a read-only tool or without an approver; else
    /// the approver is shown the arguments as they would be sent.
    async fn approved(&self, call: &ToolCall, normalized: &Value) -> bool {
        let manager = self.executor.manager();
        let tool = manager.find(&call.name).map(|t| &t.definition);
        let (Some(approver), Some(tool)) = (&self.approver, tool) else {
            return true;
        };
        if tool.hints.read_only {
            return true;
        }
        let shown = ToolCall {
            args: normalized.clone(),
            ..call.clone()
        };
        approver.approve(&shown, tool).await
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

    /// [`Agent::settle`] for many results at once, journaled as one message.
    fn settle_all(&self, results: &mut Results, settled: Vec<(usize, ToolResult)>) {
        if let Some(journal) = &self.journal {
            journal.message(
                &results.conversation,
                results.turn,
                &Message::ToolResults {
                    results: settled.iter().map(|(_, result)| result.clone()).collect(),
                },
            );
        }
        for (index, result) in settled {
            if let Some(slot) = results.slots.get_mut(index) {
                *slot = Some(result);
            }
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
