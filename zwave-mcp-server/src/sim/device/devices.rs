//! What a write works on ([`Devices`]): a simulated server's home and knobs, and what the
//! devices really are where the driver's cache may say otherwise; how one node behaves for
//! one write ([`Behaviour`]), read from the knobs once.

use std::{collections::HashMap, sync::Mutex};

use serde_json::Value;

use super::super::{
    change::find_node,
    state::{Knobs, ReportDelays, lock},
};
use crate::network::NodeId;

/// What a write works on: the home and the knobs of a simulated server.
pub(in crate::sim) struct Devices<'a> {
    pub(in crate::sim) nodes: &'a Mutex<Vec<Value>>,
    pub(in crate::sim) knobs: &'a Mutex<Knobs>,
    /// Last non-zero level of each dimmer, restored by a write of 255.
    pub(in crate::sim) last_levels: &'a Mutex<HashMap<NodeId, u8>>,
    /// The latest write to each value: the driver verifies only the latest Set of a value.
    pub(in crate::sim) latest_write: &'a Mutex<HashMap<(NodeId, String), u64>>,
    /// What a device really is where the driver's cache may say otherwise (its optimistic
    /// value of a write the device ignored, or before its report): a Get (a poll) is answered
    /// with it, as a real device answers with its own state.
    pub(in crate::sim) truth: &'a Mutex<HashMap<(NodeId, String), Value>>,
    pub(in crate::sim) reports: ReportDelays,
}

/// How a node behaves for one write, from the knobs as they were when it was asked for.
#[derive(Debug, Clone, Copy)]
pub(super) struct Behaviour {
    /// It acknowledges Sets and ignores them: its report shows the old state.
    pub(super) stuck: bool,
    /// It has Supervision (and is not stuck): done before the answer (255), no report after.
    pub(super) supervised: bool,
    /// A lock whose bolt jams.
    pub(super) jammed: bool,
    /// Devices report after writes (off: they never do).
    pub(super) confirm: bool,
}

impl Devices<'_> {
    /// What the device answers a Get of `key` of `node` with: its own state, else the cached
    /// value (`current`).
    pub(in crate::sim) fn answer(&self, node: NodeId, key: &str, current: Value) -> Value {
        lock(self.truth)
            .get(&(node, key.to_owned()))
            .cloned()
            .unwrap_or(current)
    }

    /// The device changed `key` of `node` by itself (a report, a button): that is its state.
    pub(in crate::sim) fn forget_truth(&self, node: NodeId, key: &str) {
        lock(self.truth).remove(&(node, key.to_owned()));
    }

    /// The status every write is answered with (a test's knob), and how `node` behaves.
    pub(super) fn behaviour(&self, node: NodeId) -> (Option<i64>, Behaviour) {
        let knobs = lock(self.knobs);
        let stuck = knobs.stuck.contains(&node);
        (
            knobs.write_status,
            Behaviour {
                stuck,
                supervised: knobs.supervised.contains(&node) && !stuck,
                jammed: knobs.jammed.contains(&node),
                confirm: knobs.confirm_writes,
            },
        )
    }

    /// The value of `key` of `node` in the home now (`Null`: no such node).
    pub(super) fn current(&self, node: NodeId, key: &str) -> Value {
        let nodes = lock(self.nodes);
        find_node(&nodes, node)
            .map(|node| node["values"][key]["value"].clone())
            .unwrap_or(Value::Null)
    }

    /// Whether `node` has the value `key`.
    pub(super) fn has_value(&self, node: NodeId, key: &str) -> bool {
        find_node(&lock(self.nodes), node).is_some_and(|node| node["values"].get(key).is_some())
    }

    /// A number for the latest write of `watch`: the driver verifies only the latest Set.
    pub(super) fn next_generation(&self, node: NodeId, watch: &str) -> u64 {
        let mut latest = lock(self.latest_write);
        let slot = latest.entry((node, watch.to_owned())).or_default();
        *slot += 1;
        *slot
    }
}
