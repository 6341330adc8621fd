//! What the simulated zwave-js-server's handle, its connections and their commands share
//! ([`ServerSim`]): the home, the knobs, the events for every listener, what was received.

use std::{
    collections::HashMap,
    sync::{
        Mutex,
        atomic::{AtomicBool, AtomicU64},
    },
};

use serde_json::Value;
use tokio::sync::broadcast;

use crate::network::NodeId;
use crate::sim::{
    device::Devices,
    state::{Knobs, ReportDelays},
};

/// A simulated zwave-js-server's state.
pub(super) struct ServerSim {
    pub(super) nodes: Mutex<Vec<Value>>,
    pub(super) knobs: Mutex<Knobs>,
    pub(super) last_levels: Mutex<HashMap<NodeId, u8>>,
    pub(super) latest_write: Mutex<HashMap<(NodeId, String), u64>>,
    pub(super) truth: Mutex<HashMap<(NodeId, String), Value>>,
    pub(super) reports: ReportDelays,
    /// Events for every listening client: `(the connection that caused it, the message)`;
    /// that connection has sent it already, in its place among its answers.
    pub(super) events: broadcast::Sender<(u64, String)>,
    /// Messages for one connection alone: `(the connection, the message)` (a long command's
    /// result, a health check's progress).
    pub(super) direct: broadcast::Sender<(u64, String)>,
    /// Every command received, in order.
    pub(super) received: Mutex<Vec<Value>>,
    /// The values of nodes whose interview runs, given back when it completes.
    pub(super) interviewing: Mutex<HashMap<NodeId, Value>>,
    /// Whether connections are served: a stopped server closes them and refuses new ones.
    pub(super) running: AtomicBool,
    /// Bumped when the server stops: connections of an older generation end.
    pub(super) generation: tokio::sync::watch::Sender<u64>,
    /// Whether the server is frozen, as a process stopped by SIGSTOP.
    pub(super) frozen: tokio::sync::watch::Sender<bool>,
    /// Commands received (and recorded) but never answered nor carried out: a server whose
    /// driver waits for ever on the device.
    pub(super) unanswered: Mutex<std::collections::HashSet<String>>,
    pub(super) next_connection: AtomicU64,
}

impl ServerSim {
    /// What a write works on, here.
    pub(super) fn devices(&self) -> Devices<'_> {
        Devices {
            nodes: &self.nodes,
            knobs: &self.knobs,
            last_levels: &self.last_levels,
            latest_write: &self.latest_write,
            truth: &self.truth,
            reports: self.reports,
        }
    }
}
