//! The backend-neutral core: what the server knows about the home and the path to it, shared
//! by the [`Gateway`](super::Gateway) handles and whichever backend feeds it (the MQTT event
//! loop or the zwave-js-server connection). Both backends write the same things here, under
//! the same rules: nodes and values as the devices reported them, the link's state and since
//! when it is down, and the writes in flight whose optimistic echo is not a report.

use std::{
    sync::{Mutex, MutexGuard, PoisonError, RwLock, RwLockReadGuard, RwLockWriteGuard},
    time::{Duration, Instant, SystemTime, UNIX_EPOCH},
};

use serde_json::Value;
use tokio::sync::watch;

use super::{Backend, HomeState, LinkState, NodeId, Nodes};

/// What the handles and the backend share.
pub(crate) struct Core {
    pub(crate) state: RwLock<HomeState>,
    /// Bumped after every change of the state, so waiters can look again.
    pub(crate) changes: watch::Sender<u64>,
    /// Called with every node list loaded ([`Gateway::on_nodes_loaded`]).
    ///
    /// [`Gateway::on_nodes_loaded`]: super::Gateway::on_nodes_loaded
    pub(crate) on_load: RwLock<Option<NodesLoaded>>,
    /// When a reload for a name not found last started.
    pub(crate) last_miss_reload: Mutex<Option<Instant>>,
    /// Writes sent whose answer has not come yet: zwave-js's optimistic echo of each (its own
    /// cache, updated the moment the Set is acknowledged, sent before the answer) is not the
    /// device's report and is kept out of the cache.
    pub(crate) writes_in_flight: Mutex<Vec<InFlightWrite>>,
}

/// The least time between two reloads of the node list for names not found in it.
pub const MISS_RELOAD_FLOOR: std::time::Duration = std::time::Duration::from_secs(5);

/// What is told of every node list loaded.
pub(crate) type NodesLoaded = Box<dyn Fn(&Nodes) + Send + Sync>;

impl Core {
    /// A core with no nodes, connecting through `backend`.
    pub(crate) fn new(backend: Backend) -> Self {
        Self {
            state: RwLock::new(HomeState {
                backend,
                link: LinkState::Connecting,
                gateway_online: None,
                driver_ready: None,
                nodes: Nodes::default(),
                nodes_loaded: false,
                refresh_error: None,
                link_down_since: None,
                gateway_offline_since: None,
                driver_down_since: None,
            }),
            changes: watch::Sender::new(0),
            on_load: RwLock::new(None),
            last_miss_reload: Mutex::new(None),
            writes_in_flight: Mutex::new(Vec::new()),
        }
    }

    /// Tells the waiters that something changed.
    pub(crate) fn changed(&self) {
        self.changes.send_modify(|version| *version += 1);
    }

    /// Tells the hook of a node list just loaded.
    pub(crate) fn loaded(&self) {
        if let Some(hook) = read(&self.on_load).as_ref() {
            hook(&read(&self.state).nodes);
        }
    }

    /// Stores the device's report of `value` for `key` of `node`; whether it was stored.
    pub(crate) fn store_value(&self, node: NodeId, key: &str, value: Option<Value>) -> bool {
        let stored = write(&self.state)
            .nodes
            .record_report(node, key, value, now_ms());
        if stored {
            self.changed();
        }
        stored
    }

    /// Whether a report of `value` for `key` of `node` is an optimistic echo of a write in
    /// flight (or just answered, within its echo window). Each echo comes once: it goes when
    /// seen, and the write with its last one.
    pub(crate) fn is_echo(&self, node: NodeId, key: &str, value: Option<&Value>) -> bool {
        let mut writes = self.writes();
        let now = Instant::now();
        writes.retain(|write| write.until.is_none_or(|until| until > now));
        let Some((at, echo)) = writes
            .iter()
            .enumerate()
            .find_map(|(at, write)| Some((at, write.echo_of(node, key, value)?)))
        else {
            return false;
        };
        writes[at].echoes.swap_remove(echo);
        if writes[at].echoes.is_empty() {
            writes.swap_remove(at);
        }
        true
    }

    /// Forgets the write `write` (answered, or its connection lost).
    pub(crate) fn forget_write(&self, write: &InFlightWrite) {
        let mut writes = self.writes();
        if let Some(at) = writes.iter().position(|w| w.same_write(write)) {
            writes.swap_remove(at);
        }
    }

    /// Keeps the write `write` as in flight for `window` more: its echo may still come.
    pub(crate) fn expect_echo_within(&self, write: &InFlightWrite, window: Duration) {
        let mut writes = self.writes();
        if let Some(found) = writes.iter_mut().find(|w| w.same_write(write)) {
            found.until = Some(Instant::now() + window);
        }
    }

    /// The writes in flight.
    pub(crate) fn writes(&self) -> MutexGuard<'_, Vec<InFlightWrite>> {
        lock(&self.writes_in_flight)
    }
}

/// A write whose answer has not come yet, or whose echoes may still come.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct InFlightWrite {
    pub(crate) node: NodeId,
    /// Which write this is (unique in the process): two equal writes are two writes.
    id: u64,
    /// zwave-js's optimistic updates of it not seen yet: the key of each value it sets at
    /// once (`37-0-currentValue`; a lock's `98-0-currentMode`; a colour's components) and
    /// the value it sets there. Each is echoed once.
    pub(crate) echoes: Vec<(String, Value)>,
    /// `None` while the write waits for its answer; then until when its echoes may come.
    pub(crate) until: Option<Instant>,
}

impl InFlightWrite {
    /// A write to `node` whose optimistic updates will be `echoes`.
    pub(crate) fn new(node: NodeId, echoes: Vec<(String, Value)>) -> Self {
        static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        Self {
            node,
            id: NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed),
            echoes,
            until: None,
        }
    }

    /// The same write, whatever its window and the echoes seen.
    fn same_write(&self, other: &Self) -> bool {
        self.id == other.id
    }

    /// Which of this write's echoes a report of `value` for `key` of `node` is.
    fn echo_of(&self, node: NodeId, key: &str, value: Option<&Value>) -> Option<usize> {
        if self.node != node {
            return None;
        }
        let value = value?;
        self.echoes
            .iter()
            .position(|(echo_key, echo)| echo_key == key && same_value(value, echo))
    }
}

/// Equal as values: numbers by their number (40 and 40.0), anything else exactly.
pub(crate) fn same_value(a: &Value, b: &Value) -> bool {
    match (a.as_f64(), b.as_f64()) {
        (Some(a), Some(b)) => (a - b).abs() < f64::EPSILON,
        _ => a == b,
    }
}

pub(crate) fn read<T>(lock: &RwLock<T>) -> RwLockReadGuard<'_, T> {
    // Writers only assign whole fields, so a poisoned lock holds consistent data.
    lock.read().unwrap_or_else(PoisonError::into_inner)
}

pub(crate) fn write<T>(lock: &RwLock<T>) -> RwLockWriteGuard<'_, T> {
    lock.write().unwrap_or_else(PoisonError::into_inner)
}

pub(crate) fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Wall-clock time in epoch milliseconds, the unit Z-Wave JS uses.
pub fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
        .unwrap_or_default()
}
