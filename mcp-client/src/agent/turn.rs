//! The loop's state: what one model turn produced so far ([`Turn`]) and what one question
//! produced so far ([`Progress`]), shared by the loop (`conversation`) and the answering of
//! a turn's calls (`calls`).

use crate::{
    llm::{ToolCallRequest, ToolResult, Usage},
    tools::ToolCall,
};

/// What one model turn produced so far (kept when the turn is cancelled midway).
#[derive(Default)]
pub(super) struct Turn {
    pub(super) text: String,
    pub(super) calls: Vec<ToolCallRequest>,
    /// What the server said it used; `None` when it did not say (llama.cpp's streams do not,
    /// even when asked).
    pub(super) usage: Option<Usage>,
    pub(super) finished: bool,
    /// It stopped at the output token limit.
    pub(super) cut: bool,
}

/// What one question produced so far.
pub(super) struct Progress {
    pub(super) turns: u32,
    pub(super) tool_iterations: u32,
    /// Tokens of every turn; `None` once a turn's usage is unknown (a partial sum would be
    /// taken for the whole).
    pub(super) usage: Option<Usage>,
    pub(super) last_turn: Usage,
    pub(super) texts: Vec<String>,
    pub(super) calls: Vec<ToolCall>,
    pub(super) results: Vec<ToolResult>,
}

impl Progress {
    /// Nothing yet: no turns, no tokens.
    pub(super) fn new() -> Self {
        Self {
            turns: 0,
            tool_iterations: 0,
            usage: Some(Usage::default()),
            last_turn: Usage::default(),
            texts: Vec::new(),
            calls: Vec::new(),
            results: Vec::new(),
        }
    }
}
