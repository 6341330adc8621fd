//! What a write did at once ([`Write`]: the answer, zwave-js's optimistic update) and what
//! comes after ([`Report`]: the device's own reports, each after its delay).

use std::time::Duration;

use serde_json::Value;

use super::super::change::Change;
use crate::network::NodeId;

/// What a write did at once, and what comes after.
#[derive(Debug)]
pub(in crate::sim) struct Write {
    /// The answer: `{"status": …, "message"?: …}`.
    pub(in crate::sim) result: Value,
    /// zwave-js's optimistic update, already applied: the target, then the current value.
    pub(in crate::sim) optimistic: Vec<Change>,
    /// The device's own reports, each to apply after its delay (from the reply).
    pub(in crate::sim) reports: Vec<Report>,
}

/// A report of the device after a write, due `delay` after the reply.
#[derive(Debug, Clone)]
pub(in crate::sim) struct Report {
    pub(in crate::sim) delay: Duration,
    pub(super) node: NodeId,
    /// The state value the write is about: only the latest write of it is reported.
    pub(super) watch: String,
    pub(super) generation: u64,
    /// The values the report sets, in order.
    pub(super) set: Vec<(String, Value)>,
}

impl Write {
    /// A write answered at once with `result`, and nothing else.
    pub(super) fn answered(result: Value) -> Self {
        Self {
            result,
            optimistic: Vec::new(),
            reports: Vec::new(),
        }
    }
}
