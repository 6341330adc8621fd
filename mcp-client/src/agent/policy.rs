//! The loop's policies as plain values: how many turns, whether to refine, a token
//! budget, how many calls at once, whether to retry failed idempotent tools, the system
//! prompt, and whether the first request must call a tool.

use std::time::Duration;

use crate::llm::ToolChoice;

/// At most 5 model turns unless configured.
pub const DEFAULT_MAX_TURNS: u32 = 5;
/// At most 2 tool iterations when refining.
pub const REFINEMENT_ITERATIONS: u32 = 2;
/// The follow-up after the first tool iteration (tools stay bound).
pub const REFINE_PROMPT: &str = "If you need more specific info, you may search again.";
/// The follow-up after the last tool iteration (tools are taken away).
pub const ANSWER_PROMPT: &str = "Answer in 1 sentence based on this information.";
/// Tool calls of one model answer that are run by default; the rest are answered as not run.
pub const DEFAULT_MAX_CALLS_PER_ANSWER: usize = 16;
/// Characters of one tool result a model reads by default; the rest is cut with a marker.
pub const DEFAULT_MAX_RESULT_CHARS: usize = 16_000;

/// How the agent runs a conversation.
#[derive(Debug, Clone, PartialEq)]
pub struct AgentOptions {
    /// Most model turns per question (each turn is one model request).
    pub max_turns: u32,
    /// At most two tool iterations, with its follow-up prompts.
    pub refinement: bool,
    /// Stop before a turn would take the question's tokens (input + output, as the provider
    /// reports them) past this.
    pub token_budget: Option<u64>,
    /// Tool calls of one turn running at once.
    pub parallel_tools: usize,
    /// Tool calls of one model answer that are run (at least 1): the first ones; each call
    /// past them is answered, without running, with a result saying so.
    pub max_calls_per_answer: usize,
    /// Retries of failed calls to idempotent tools (opt-in).
    pub tool_retry: Option<ToolRetry>,
    /// Sent first in a new conversation.
    pub system_prompt: Option<String>,
    /// Characters of one tool result the model reads.
    pub max_result_chars: Option<usize>,
    /// The tool choice of each question's first request (`Required` or a tool's name makes
    /// the model call one; later requests are `Auto`, so it can answer). `None` offers no
    /// tools at all.
    pub tool_choice: ToolChoice,
}

impl Default for AgentOptions {
    fn default() -> Self {
        Self {
            max_turns: DEFAULT_MAX_TURNS,
            refinement: false,
            token_budget: None,
            parallel_tools: crate::tools::executor::DEFAULT_PARALLEL,
            max_calls_per_answer: DEFAULT_MAX_CALLS_PER_ANSWER,
            tool_retry: None,
            system_prompt: None,
            max_result_chars: Some(DEFAULT_MAX_RESULT_CHARS),
            tool_choice: ToolChoice::Auto,
        }
    }
}

/// Retries of a failed call to an idempotent (or read-only) tool whose failure was transient
/// (a timeout, a server that died or is restarting): never of a tool that might act twice.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ToolRetry {
    /// Attempts in all, including the first.
    pub attempts: u32,
    /// Wait before the first retry; doubled for each later one.
    pub base_delay: Duration,
}

impl Default for ToolRetry {
    fn default() -> Self {
        Self {
            attempts: 3,
            base_delay: Duration::from_millis(500),
        }
    }
}

/// The follow-up prompt after `iteration` tool iterations when refining, and
/// whether tools stay bound after it.
pub fn refinement_follow_up(iteration: u32) -> Option<(&'static str, bool)> {
    match iteration {
        0 => None,
        n if n < REFINEMENT_ITERATIONS => Some((REFINE_PROMPT, true)),
        _ => Some((ANSWER_PROMPT, false)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn follow_ups_refine_once_then_force_an_answer() {
        assert_eq!(refinement_follow_up(0), None);
        assert_eq!(refinement_follow_up(1), Some((REFINE_PROMPT, true)));
        assert_eq!(refinement_follow_up(2), Some((ANSWER_PROMPT, false)));
    }
}
