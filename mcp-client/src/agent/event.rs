//! What the loop tells its host while it runs ([`AgentEvent`], serializable for `--json`), and
//! what it returns ([`Answer`]).

use std::sync::Arc;

use serde::Serialize;

use crate::{
    llm::{Usage, message::ToolResult},
    tools::ToolCall,
};

/// Receives the loop's events as they happen (text deltas at once, as they arrive).
pub type EventSink = Arc<dyn Fn(AgentEvent) + Send + Sync>;

/// Something that happened in a conversation.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum AgentEvent {
    /// The model wrote more of its answer.
    TextDelta {
        /// The new text.
        text: String,
    },
    /// A tool call is about to run (after approval, when asked).
    ToolCall {
        /// The call's id.
        id: String,
        /// The tool.
        name: String,
        /// Its arguments as the model gave them.
        args: serde_json::Value,
        /// Its arguments as sent to the server (names and values normalized).
        normalized_args: serde_json::Value,
    },
    /// A running tool reported progress (MCP progress notifications).
    ToolProgress {
        /// The call's id.
        id: String,
        /// Progress so far.
        progress: f64,
        /// Total, when known.
        #[serde(skip_serializing_if = "Option::is_none")]
        total: Option<f64>,
        /// The server's message.
        #[serde(skip_serializing_if = "Option::is_none")]
        message: Option<String>,
    },
    /// A tool call finished (or was refused before it ran).
    ToolResult {
        /// The call's id.
        id: String,
        /// The tool.
        name: String,
        /// The arguments the model gave.
        args: serde_json::Value,
        /// The arguments as sent to the server (names and values normalized), or as they
        /// would have been for a call that did not run.
        normalized_args: serde_json::Value,
        /// Whether it succeeded.
        success: bool,
        /// How long it took.
        duration_ms: u64,
        /// What the model reads.
        text: String,
    },
    /// The model asked for a second round of tools.
    Refinement {
        /// The tool iteration it starts (2).
        iteration: u32,
        /// The tool called.
        tool: String,
    },
    /// A model turn and its tools are done.
    TurnFinished {
        /// The turn's number, from 1.
        turn: u32,
        /// Tokens of that turn's request; `null` when the server did not say.
        usage: Option<Usage>,
    },
    /// The model's final answer was empty (a server that failed mid-answer may say so only
    /// this way); `Done` follows.
    EmptyAnswer,
    /// The loop failed; `Done` follows.
    Error {
        /// What went wrong.
        message: String,
    },
    /// The question is answered or the loop stopped; always the last event.
    Done {
        /// Why it stopped.
        reason: DoneReason,
        /// Model turns taken.
        turns: u32,
        /// Tokens of every turn; `null` when a server did not say for one of them.
        usage: Option<Usage>,
        /// The conversation, to resume it.
        conversation_id: String,
    },
}

/// Why a conversation's question ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DoneReason {
    /// The model answered without calling tools.
    Completed,
    /// The turn limit was reached.
    MaxTurnsReached,
    /// Another turn would have gone past the token budget.
    TokenBudgetReached,
    /// The host cancelled it.
    Cancelled,
    /// The answer was cut off at the output token limit (`--max-tokens`).
    Truncated,
    /// The provider failed.
    Error,
}

impl DoneReason {
    /// Its name as stored and shown (`completed`, `max_turns_reached`, ...).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Completed => "completed",
            Self::MaxTurnsReached => "max_turns_reached",
            Self::TokenBudgetReached => "token_budget_reached",
            Self::Cancelled => "cancelled",
            Self::Truncated => "truncated",
            Self::Error => "error",
        }
    }
}

/// The outcome of one question.
#[derive(Debug, Clone, PartialEq)]
pub struct Answer {
    /// Every text the model wrote for it, turn after turn.
    pub text: String,
    /// Why it ended.
    pub reason: DoneReason,
    /// The provider's error, when it failed.
    pub error: Option<String>,
    /// Model turns taken.
    pub turns: u32,
    /// Tokens of every turn; `None` when a server did not say for one of them.
    pub usage: Option<Usage>,
    /// Every tool call made, in order.
    pub tool_calls: Vec<ToolCall>,
    /// Every result, in order (one per call).
    pub tool_results: Vec<ToolResult>,
    /// The conversation it belongs to.
    pub conversation_id: String,
}
