//! What the reader did with the server's stdout lines: counters and the last dropped lines.

use std::sync::atomic::{AtomicU64, Ordering};

/// Counters of stdout lines that were not delivered as messages.
#[derive(Debug, Default)]
pub struct ReadStats {
    pub(super) messages: AtomicU64,
    pub(super) not_json: AtomicU64,
    pub(super) not_jsonrpc: AtomicU64,
    pub(super) invalid_message: AtomicU64,
    pub(super) oversized: AtomicU64,
    pub(super) invalid_utf8: AtomicU64,
    /// The last dropped lines, as `<kind>: <preview>`.
    pub(super) recent: std::sync::Mutex<std::collections::VecDeque<String>>,
    /// The last notes on tools left out of a `tools/list` answer (nested too deep).
    pub(super) left_out: std::sync::Mutex<std::collections::VecDeque<String>>,
}

/// Dropped lines remembered for diagnostics.
const RECENT_DROPPED: usize = 20;

/// A snapshot of [`ReadStats`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct ReadCounts {
    /// Messages delivered.
    pub messages: u64,
    /// Lines that were not JSON at all.
    pub not_json: u64,
    /// JSON lines that were not JSON-RPC 2.0.
    pub not_jsonrpc: u64,
    /// JSON-RPC lines that did not fit any MCP message.
    pub invalid_message: u64,
    /// Lines over the size limit.
    pub oversized: u64,
    /// Messages with invalid UTF-8, delivered decoded lossily.
    pub invalid_utf8: u64,
}

impl ReadCounts {
    /// Lines dropped, all kinds together.
    pub fn dropped(&self) -> u64 {
        self.not_json + self.not_jsonrpc + self.invalid_message + self.oversized
    }
}

impl ReadStats {
    pub(super) fn remember(&self, kind: &str, preview: &str) {
        let mut recent = self
            .recent
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if recent.len() == RECENT_DROPPED {
            recent.pop_front();
        }
        recent.push_back(format!("{kind}: {preview}"));
    }

    /// Notes that a tool was left out of a `tools/list` answer (the last 20 kept).
    pub(super) fn left_out(&self, note: String) {
        let mut left_out = self
            .left_out
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if left_out.len() == RECENT_DROPPED {
            left_out.pop_front();
        }
        left_out.push_back(note);
    }

    /// The notes on tools left out (at most 20), oldest first.
    pub fn tools_left_out(&self) -> Vec<String> {
        self.left_out
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .iter()
            .cloned()
            .collect()
    }

    /// The last dropped lines (at most 20), oldest first, as `<kind>: <preview>`.
    pub fn recent(&self) -> Vec<String> {
        self.recent
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .iter()
            .cloned()
            .collect()
    }

    /// The current counts.
    pub fn counts(&self) -> ReadCounts {
        let get = |c: &AtomicU64| c.load(Ordering::Relaxed);
        ReadCounts {
            messages: get(&self.messages),
            not_json: get(&self.not_json),
            not_jsonrpc: get(&self.not_jsonrpc),
            invalid_message: get(&self.invalid_message),
            oversized: get(&self.oversized),
            invalid_utf8: get(&self.invalid_utf8),
        }
    }
}
