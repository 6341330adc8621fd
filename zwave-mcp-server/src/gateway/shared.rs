//! What the [`Gateway`](super::Gateway) handles and the event loop task share, and the small
//! helpers both sides use on it: poison-tolerant locks, storing a reported value, the clock.

use std::{
    sync::{RwLock, atomic::AtomicBool},
    time::{SystemTime, UNIX_EPOCH},
};

use rumqttc::AsyncClient;
use serde_json::Value;
use tokio::sync::watch;

use super::{HomeState, MqttSettings, NodeId, PendingRequests, topics::TopicIndex};

/// What the handles and the event loop task share.
pub(super) struct Shared {
    pub(super) client: AsyncClient,
    pub(super) settings: MqttSettings,
    /// `settings.gateway_topic()`, computed once: it is compared with every message.
    pub(super) gateway_topic: String,
    pub(super) pending: PendingRequests,
    pub(super) state: RwLock<HomeState>,
    pub(super) topics: RwLock<TopicIndex>,
    /// Bumped after every value change, so waiters can re-check the cache.
    pub(super) changes: watch::Sender<u64>,
    /// Serializes node refreshes so reconnect storms do not stack `getNodes` calls.
    pub(super) refresh_lock: tokio::sync::Mutex<()>,
    /// Held to hand a request to rumqttc, and by the event loop task while it marks the
    /// connection down and empties rumqttc's queues. So a request is handed over only while
    /// the connection is up, and one handed over on a connection that is then lost is
    /// discarded, never sent after the reconnection (a caller that got an error must not see
    /// its command carried out later).
    pub(super) send_gate: std::sync::Mutex<()>,
    /// Background node-list reloads, coalesced.
    pub(super) reloads: ReloadRequests,
    /// Called with every node list loaded from the gateway ([`Gateway::on_nodes_loaded`]).
    ///
    /// [`Gateway::on_nodes_loaded`]: super::Gateway::on_nodes_loaded
    pub(super) on_load: RwLock<Option<NodesLoaded>>,
    /// When a reload for a name not found last started.
    pub(super) last_miss_reload: std::sync::Mutex<Option<std::time::Instant>>,
    /// Writes sent whose API reply has not come yet: zwave-js's optimistic echo of each (its
    /// own cache, updated the moment the Set is acknowledged, published before the reply)
    /// is not the device's report and is kept out of the cache.
    pub(super) writes_in_flight: std::sync::Mutex<Vec<InFlightWrite>>,
}

/// A write whose API reply has not come yet.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct InFlightWrite {
    pub(super) node: NodeId,
    /// The key of the value the device reports its state in (`37-0-currentValue`).
    pub(super) current_key: String,
    /// What was written.
    pub(super) value: Value,
}

impl InFlightWrite {
    /// Whether a report of `value` for `key` of `node` is this write's optimistic echo.
    pub(super) fn echoes(&self, node: NodeId, key: &str, value: Option<&Value>) -> bool {
        self.node == node
            && self.current_key == key
            && value.is_some_and(|value| same_value(value, &self.value))
    }
}

/// Equal as values: numbers by their number (40 and 40.0), anything else exactly.
pub(super) fn same_value(a: &Value, b: &Value) -> bool {
    match (a.as_f64(), b.as_f64()) {
        (Some(a), Some(b)) => (a - b).abs() < f64::EPSILON,
        _ => a == b,
    }
}

/// The least time between two reloads of the node list for names not found in it.
pub const MISS_RELOAD_FLOOR: std::time::Duration = std::time::Duration::from_secs(5);

/// What is told of every node list loaded.
pub(super) type NodesLoaded = Box<dyn Fn(&super::Nodes) + Send + Sync>;

/// Background reload requests, coalesced.
/// Invariant: at most one reload task runs (`running`); a request made while it runs sets
/// `wanted`, and the task runs once more for all such requests.
#[derive(Debug, Default)]
pub(super) struct ReloadRequests {
    pub(super) wanted: AtomicBool,
    /// A full reload was asked for (not only "load if missing").
    pub(super) force: AtomicBool,
    pub(super) running: AtomicBool,
}

/// Requests the rumqttc client queues before `try_publish` refuses more.
pub(super) const CLIENT_QUEUE: usize = 64;

pub(super) fn read<T>(lock: &RwLock<T>) -> std::sync::RwLockReadGuard<'_, T> {
    // Writers only assign whole fields, so a poisoned lock holds consistent data.
    lock.read()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

pub(super) fn write<T>(lock: &RwLock<T>) -> std::sync::RwLockWriteGuard<'_, T> {
    lock.write()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Wall-clock time in epoch milliseconds, the unit Z-Wave JS UI uses.
pub fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
        .unwrap_or_default()
}

pub(super) fn store_value(shared: &Shared, node: NodeId, key: &str, value: Value) -> bool {
    let stored = write(&shared.state)
        .nodes
        .record_report(node, key, Some(value), now_ms());
    if stored {
        shared.changes.send_modify(|version| *version += 1);
    }
    stored
}
