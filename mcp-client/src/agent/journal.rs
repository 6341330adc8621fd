//! Where a conversation is recorded as it happens ([`Journal`]; the SQLite history store is
//! one), and who approves tool calls that change things ([`Approver`]).

use std::{future::Future, pin::Pin};

use super::event::DoneReason;
use crate::{
    llm::{Message, Usage},
    tools::{ToolCall, definition::ToolDefinition},
};

/// How a question ended, as recorded.
#[derive(Debug, Clone, PartialEq)]
pub struct Outcome {
    /// Why it ended.
    pub reason: DoneReason,
    /// Model turns taken.
    pub turns: u32,
    /// Tokens used; `None` when a server did not say for one of its turns.
    pub usage: Option<Usage>,
    /// The provider's error, if any.
    pub error: Option<String>,
}

/// Records conversations. Calls must not block: a store hands the writes to its own thread.
pub trait Journal: Send + Sync {
    /// A conversation starts (or is resumed) with `provider`; `title` is its first question.
    fn begin(&self, conversation: &str, provider: &str, title: &str);
    /// A message was added to the conversation.
    fn message(&self, conversation: &str, turn: u32, message: &Message);
    /// The question ended.
    fn outcome(&self, conversation: &str, outcome: &Outcome);
}

/// Decides whether a call that may change things runs (MCP `readOnlyHint` not true).
pub trait Approver: Send + Sync {
    /// Whether `call` of `tool` may run; its arguments are shown as they would be sent
    /// (normalized).
    fn approve<'a>(
        &'a self,
        call: &'a ToolCall,
        tool: &'a ToolDefinition,
    ) -> Pin<Box<dyn Future<Output = bool> + Send + 'a>>;
}
