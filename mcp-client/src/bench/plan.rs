//! What a run measures ([`Plan`], [`Request`]) and what it tells a progress display
//! ([`Progress`]).

use rmcp::model::JsonObject;

/// The request every call of the run makes.
#[derive(Debug, Clone, PartialEq)]
pub enum Request {
    /// `tools/call` of this tool with these arguments.
    Tool {
        /// The tool's name, as the server lists it.
        name: String,
        /// Its arguments.
        arguments: JsonObject,
    },
    /// `ping`: the protocol's cheapest round trip, which every server answers.
    Ping,
}

impl Request {
    /// "tools/call NAME" or "ping".
    pub fn label(&self) -> String {
        match self {
            Self::Tool { name, .. } => format!("tools/call {name}"),
            Self::Ping => "ping".to_owned(),
        }
    }
}

/// What to measure.
#[derive(Debug, Clone, PartialEq)]
pub struct Plan {
    /// The request of every call.
    pub request: Request,
    /// Calls in each measured phase.
    pub calls: usize,
    /// Calls in flight in the concurrent phase; 1 skips that phase.
    pub concurrency: usize,
    /// Calls made before measuring (at least one is always made).
    pub warmup: usize,
    /// Whether a tool the server does not mark read-only (`readOnlyHint`) may be called: a
    /// run makes thousands of calls, each of which may change something real.
    pub allow_writes: bool,
}

impl Plan {
    /// Calls the run makes in all: the warm-up, then each measured phase.
    pub fn total_calls(&self) -> usize {
        let phases = if self.concurrency > 1 { 2 } else { 1 };
        self.warmup
            .max(1)
            .saturating_add(self.calls.saturating_mul(phases))
    }
}

/// What a run reports to a progress display while it runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Progress {
    /// A phase of `calls` calls begins.
    Phase {
        /// "warm-up", "sequential" or "concurrent".
        name: &'static str,
        /// Calls it will make.
        calls: usize,
    },
    /// One more call of the current phase has been answered.
    Call,
}
