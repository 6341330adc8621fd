//! The backend-neutral core: what the server knows about the home and the path to it, shared
//! by the [`Network`](super::Network) handles and whichever backend feeds it (the MQTT event
//! loop or the zwave-js-server connection). Both backends write the same things here, under
//! the same rules: nodes and values as the devices reported them, the link's state and since
//! when it is down, and the writes in flight whose optimistic echo is not a report.

use std::{
    collections::{BTreeMap, HashMap},
    sync::{Mutex, MutexGuard, PoisonError, RwLock, RwLockReadGuard, RwLockWriteGuard},
    time::{Duration, Instant, SystemTime, UNIX_EPOCH},
};

use serde_json::Value;
use tokio::sync::{broadcast, watch};

use super::{
    Backend, HomeState, LinkState, NodeId, NodeInfo, NodeStatus, Nodes,
    health::{
        book::HealthBook,
        statistics::{ControllerStatistics, NodeStatistics},
        upkeep::{UpkeepBook, UpkeepSignal},
    },
};

/// Upkeep signals a slow listener may fall behind by before it misses some (each is only
/// progress: an operation's end is its command's answer, or its last event, seen in turn).
const UPKEEP_SIGNALS: usize = 64;

/// What the handles and the backend share.
pub(crate) struct Core {
    pub(crate) state: RwLock<HomeState>,
    /// Bumped after every change of the state, so waiters can look again.
    pub(crate) changes: watch::Sender<u64>,
    /// Called with every node list loaded ([`Network::on_nodes_loaded`]).
    ///
    /// [`Network::on_nodes_loaded`]: super::Network::on_nodes_loaded
    pub(crate) on_load: RwLock<Option<NodesLoaded>>,
    /// When a reload for a name not found last started.
    pub(crate) last_miss_reload: Mutex<Option<Instant>>,
    /// Writes sent whose answer has not come yet: zwave-js's optimistic echo of each (its own
    /// cache, updated the moment the Set is acknowledged, sent before the answer) is not the
    /// device's report and is kept out of the cache.
    pub(crate) writes_in_flight: Mutex<Vec<InFlightWrite>>,
    /// The values writes set in zwave-js's cache at once (their echoes) whose device report
    /// has not come yet, by node and key: which write, and the value it set there. Kept past
    /// the write's answer and echo window, until the device reports the key: a reload of the
    /// whole state (the driver's cache) that shows that value there is not the device's word,
    /// and does not replace its last report.
    pub(crate) awaiting_reports: Mutex<HashMap<(NodeId, String), (u64, Value)>>,
    /// The network's health beside the node list: newer statistics, the controller's,
    /// since when each status holds. Lock order: `state` first when both are held.
    pub(crate) health: Mutex<HealthBook>,
    /// Which upkeep operation runs on which node, and outcomes that came late.
    pub(crate) upkeep: Mutex<UpkeepBook>,
    /// What the backend hears of upkeep operations under way (zwave-js-server's events).
    pub(crate) upkeep_signals: broadcast::Sender<(NodeId, UpkeepSignal)>,
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
                reload_error: None,
                link_down_since: None,
                gateway_offline_since: None,
                driver_down_since: None,
                driver_reports: 0,
            }),
            changes: watch::Sender::new(0),
            on_load: RwLock::new(None),
            last_miss_reload: Mutex::new(None),
            writes_in_flight: Mutex::new(Vec::new()),
            awaiting_reports: Mutex::new(HashMap::new()),
            health: Mutex::new(HealthBook::default()),
            upkeep: Mutex::new(UpkeepBook::default()),
            upkeep_signals: broadcast::channel(UPKEEP_SIGNALS).0,
        }
    }

    /// Tells the waiters that something changed.
    pub(crate) fn changed(&self) {
        self.changes.send_modify(|version| *version += 1);
    }

    /// A node list was just loaded, asked for at `sent`: the health book takes what it says
    /// (the controller's statistics: `controller`, or those listed on the controller node),
    /// and the hook is told.
    pub(crate) fn loaded(&self, sent: Instant, controller: Option<ControllerStatistics>) {
        {
            let state = read(&self.state);
            lock(&self.health).loaded(&state.nodes, controller, sent, now_ms());
        }
        if let Some(hook) = read(&self.on_load).as_ref() {
            hook(&read(&self.state).nodes);
        }
    }

    /// The driver says `node` has `status` now (an event, a status topic): the health book
    /// notes since when.
    pub(crate) fn saw_status(&self, node: NodeId, status: &NodeStatus) {
        lock(&self.health).saw_status(node, status, now_ms());
    }

    /// `node`'s statistics came in an event: kept when the node is in the list (an unknown
    /// node's are dropped: they would only grow the book). Nobody is woken: they change no
    /// state a waiter waits for. Returns whether the node is known.
    pub(crate) fn record_statistics(&self, node: NodeId, statistics: NodeStatistics) -> bool {
        let state = read(&self.state);
        if !state.nodes.contains_key(&node) {
            return false;
        }
        lock(&self.health).record(node, statistics);
        true
    }

    /// A command this server sent to a device (a write, a poll, a ping) was answered, or
    /// failed: the driver counted it in the device's statistics.
    pub(crate) fn commanded(&self) {
        lock(&self.health).commanded();
    }

    /// `node` was heard from at `at_ms` (it answered a ping): its last activity moves there,
    /// never back.
    pub(crate) fn heard_from(&self, node: NodeId, at_ms: i64) {
        let moved = {
            let mut state = write(&self.state);
            match state.nodes.get_mut(&node) {
                Some(mut info) if info.last_active.is_none_or(|was| was < at_ms) => {
                    info.set_last_active(at_ms);
                    true
                }
                _ => false,
            }
        };
        if moved {
            self.changed();
        }
    }

    /// The controller's statistics came in an event.
    pub(crate) fn record_controller_statistics(&self, statistics: ControllerStatistics) {
        lock(&self.health).record_controller(statistics);
    }

    /// Stores the device's report of `value` for `key` of `node`; whether it was stored.
    /// `live`: the report as it came from the device (not a retained copy the broker replays
    /// on subscribing): it ends the wait for the key's report and moves when the node was
    /// last heard from.
    pub(crate) fn store_value(
        &self,
        node: NodeId,
        key: &str,
        value: Option<Value>,
        live: bool,
    ) -> bool {
        if live {
            self.reported(node, key);
        }
        let stored = write(&self.state)
            .nodes
            .record_report(node, key, value, now_ms(), live);
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

    /// Keeps `write` (when there is one) in flight while the returned guard is held: see
    /// [`WriteInFlight`]. Writes whose window ended leave here too, not only when a report
    /// comes, so a home where nothing reports holds no more than the writes of one window.
    pub(crate) fn keep_in_flight(
        &self,
        write: Option<&InFlightWrite>,
        window: Duration,
    ) -> WriteInFlight<'_> {
        if let Some(write) = write {
            let mut writes = self.writes();
            let now = Instant::now();
            writes.retain(|kept| kept.until.is_none_or(|until| until > now));
            writes.push(write.clone());
        }
        WriteInFlight {
            core: self,
            write: write.cloned(),
            window,
        }
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

    /// From now until the device reports each, `write`'s optimistic values are not reports,
    /// in a reload either (a later write of the same key takes its place).
    pub(crate) fn await_reports(&self, write: &InFlightWrite) {
        let mut awaiting = lock(&self.awaiting_reports);
        for (key, value) in &write.echoes {
            awaiting.insert((write.node, key.clone()), (write.id, value.clone()));
        }
        drop(awaiting);
        // What a device shows now includes zwave-js's echo: watchers look again.
        self.changed();
    }

    /// `write` never reached the driver, or the driver refused it: it set nothing.
    pub(crate) fn stop_awaiting(&self, write: &InFlightWrite) {
        lock(&self.awaiting_reports).retain(|_, (id, _)| *id != write.id);
    }

    /// The device reported `key` of `node`: what it said is its state from now on.
    pub(crate) fn reported(&self, node: NodeId, key: &str) {
        let mut awaiting = lock(&self.awaiting_reports);
        // Nearly always empty: then a report costs no key built and hashed.
        if !awaiting.is_empty() {
            awaiting.remove(&(node, key.to_owned()));
        }
    }

    /// Whether `value` for `key` of `node` is the optimistic value of a write whose report is
    /// still awaited (the broker's retained copy of its echo, replayed on a reconnection).
    pub(crate) fn is_awaited(&self, node: NodeId, key: &str, value: Option<&Value>) -> bool {
        let Some(value) = value else { return false };
        let awaiting = lock(&self.awaiting_reports);
        if awaiting.is_empty() {
            return false;
        }
        awaiting
            .get(&(node, key.to_owned()))
            .is_some_and(|(_, optimistic)| same_value(value, optimistic))
    }

    /// In a node list just loaded (`fresh`), every value that shows the optimistic value of a
    /// write whose report is awaited gets back the device's last report from `cached` (its
    /// value, when it changed and when it was seen): the driver's cache is not the device.
    /// When the node was last heard from never moves back: this server may have heard it
    /// later than the list says (a ping it answered; Z-Wave JS UI's `lastActive` moves only
    /// on some of the frames a device sends).
    pub(crate) fn keep_reports(&self, fresh: &mut BTreeMap<NodeId, NodeInfo>, cached: &Nodes) {
        for (id, node) in fresh.iter_mut() {
            self.keep_reports_of(node, cached.get(id));
        }
    }

    /// [`Core::keep_reports`] for one node (a node's whole state in a `ready` event).
    pub(crate) fn keep_reports_of(&self, fresh: &mut NodeInfo, cached: Option<&NodeInfo>) {
        let Some(cached) = cached else { return };
        if let Some(heard) = cached.last_active
            && fresh.last_active.is_none_or(|listed| listed < heard)
        {
            fresh.last_active = Some(heard);
        }
        let id = fresh.id;
        let awaiting = lock(&self.awaiting_reports);
        for ((_, key), (_, optimistic)) in awaiting.iter().filter(|((node, _), _)| *node == id) {
            let (Some(slot), Some(report)) = (
                fresh.values.get_mut(key.as_str()),
                cached.values.get(key.as_str()),
            ) else {
                continue;
            };
            if slot
                .value
                .as_ref()
                .is_some_and(|value| same_value(value, optimistic))
            {
                slot.value.clone_from(&report.value);
                slot.last_update = report.last_update;
                slot.seen_at = report.seen_at;
            }
        }
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

/// A write in flight for as long as its sender waits for the answer. Whoever sees the answer
/// settles the write in the core (forgets it, or keeps it for an echo still to come) and says
/// so ([`WriteInFlight::settled`]); a sender that stops waiting first (its time ran out, or its
/// future was dropped: a cancelled call, a task aborted) leaves the write in flight for
/// `window` more, never for ever: a report after that is the device's.
#[must_use = "the write leaves flight when the guard is dropped"]
pub(crate) struct WriteInFlight<'a> {
    core: &'a Core,
    /// `None` once settled, or when there is no write.
    write: Option<InFlightWrite>,
    /// How long after its sender stopped waiting the write's echo may still come.
    window: Duration,
}

impl WriteInFlight<'_> {
    /// The answer came, and whoever saw it settled the write.
    pub(crate) fn settled(mut self) {
        self.write = None;
    }

    /// The write was never sent: it is not in flight.
    pub(crate) fn not_sent(mut self) {
        if let Some(write) = self.write.take() {
            self.core.forget_write(&write);
        }
    }
}

impl Drop for WriteInFlight<'_> {
    fn drop(&mut self) {
        if let Some(write) = self.write.take() {
            if self.window.is_zero() {
                self.core.forget_write(&write);
            } else {
                self.core.expect_echo_within(&write, self.window);
            }
        }
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

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::network::parse_nodes;

    /// A write leaves flight on every path: settled by whoever saw its answer, at once when
    /// never sent, and one window after its sender stopped waiting (a timeout, a dropped
    /// future): the device's next report of the same value is then stored, not swallowed.
    #[test]
    fn a_write_leaves_flight_however_its_wait_ends() {
        let core = Core::new(Backend::ZwaveJsServer);
        let mode = "98-0-currentMode";
        let write = InFlightWrite::new(NodeId(8), vec![(mode.to_owned(), json!(255))]);

        // The sender stopped waiting: after the window, the same value is the device's report.
        drop(core.keep_in_flight(Some(&write), Duration::from_millis(30)));
        assert_eq!(core.writes().len(), 1);
        std::thread::sleep(Duration::from_millis(60));
        assert!(!core.is_echo(NodeId(8), mode, Some(&json!(255))));
        assert!(core.writes().is_empty());

        // Answered: the backend settled it; the guard leaves it so.
        let flight = core.keep_in_flight(Some(&write), Duration::from_secs(1));
        core.forget_write(&write);
        flight.settled();
        assert!(core.writes().is_empty());

        // Never sent: out at once.
        core.keep_in_flight(Some(&write), Duration::from_secs(1))
            .not_sent();
        assert!(core.writes().is_empty());

        // Expired writes go when the next one starts, even if nothing reports.
        drop(core.keep_in_flight(Some(&write), Duration::from_millis(1)));
        std::thread::sleep(Duration::from_millis(5));
        let other = InFlightWrite::new(
            NodeId(2),
            vec![("37-0-currentValue".to_owned(), json!(true))],
        );
        let flight = core.keep_in_flight(Some(&other), Duration::ZERO);
        assert_eq!(core.writes().len(), 1);
        drop(flight);
        assert!(core.writes().is_empty());
    }

    const STATE: &str = "37-0-currentValue";

    /// The demo home as the driver's cache shows it, Switch One (node 2) showing `on`.
    fn reloaded(on: bool) -> BTreeMap<NodeId, NodeInfo> {
        let mut nodes = parse_nodes(Value::Array(crate::sim::home::demo_home(0))).unwrap();
        let node = nodes.get_mut(&NodeId(2)).unwrap();
        node.values.get_mut(STATE).unwrap().value = Some(json!(on));
        nodes
    }

    #[test]
    fn a_reload_showing_a_writes_optimistic_value_keeps_the_devices_last_report() {
        let core = Core::new(Backend::ZwaveJsServer);
        write(&core.state).nodes = Nodes::new(reloaded(false));
        let switch_on = InFlightWrite::new(NodeId(2), vec![(STATE.to_owned(), json!(true))]);
        core.await_reports(&switch_on);
        // Answered and its echo window over: the device has still not reported.
        core.forget_write(&switch_on);
        let mut fresh = reloaded(true);
        core.keep_reports(&mut fresh, &read(&core.state).nodes);
        assert_eq!(fresh[&NodeId(2)].values[STATE].value, Some(json!(false)));
        // A retained copy of the echo is no report either.
        assert!(core.is_awaited(NodeId(2), STATE, Some(&json!(true))));
        // The device reports (here: that it stayed off): from then on a reload shows what the
        // driver has.
        assert!(core.store_value(NodeId(2), STATE, Some(json!(false)), true));
        let mut fresh = reloaded(true);
        core.keep_reports(&mut fresh, &read(&core.state).nodes);
        assert_eq!(fresh[&NodeId(2)].values[STATE].value, Some(json!(true)));
        // A write that never reached the driver is not awaited.
        let refused = InFlightWrite::new(NodeId(2), vec![(STATE.to_owned(), json!(true))]);
        core.await_reports(&refused);
        core.stop_awaiting(&refused);
        assert!(!core.is_awaited(NodeId(2), STATE, Some(&json!(true))));
    }

    /// A statistics event is kept for a node the list has, and wakes no waiter.
    #[test]
    fn statistics_are_kept_for_known_nodes_and_wake_nobody() {
        let core = Core::new(Backend::ZwaveJsServer);
        write(&core.state).nodes = Nodes::new(reloaded(false));
        let changes = core.changes.subscribe();
        let statistics = NodeStatistics {
            commands_sent: Some(7),
            ..NodeStatistics::default()
        };
        assert!(core.record_statistics(NodeId(2), statistics.clone()));
        assert!(!core.record_statistics(NodeId(99), statistics.clone()));
        assert!(!changes.has_changed().unwrap());
        assert_eq!(lock(&core.health).statistics(NodeId(2)), Some(&statistics));
        assert!(lock(&core.health).statistics(NodeId(99)).is_none());
        // A ping answered: heard from now, and that is a change.
        core.heard_from(NodeId(2), now_ms());
        assert!(changes.has_changed().unwrap());
    }

    #[test]
    fn a_live_report_moves_when_the_node_was_last_heard_from_and_a_retained_one_does_not() {
        let core = Core::new(Backend::Mqtt);
        write(&core.state).nodes = Nodes::new(reloaded(false));
        let heard = |core: &Core| read(&core.state).nodes[&NodeId(2)].last_active;
        let before = heard(&core);
        assert!(core.store_value(NodeId(2), STATE, Some(json!(true)), false));
        assert_eq!(
            heard(&core),
            before,
            "a retained copy is no news from the device"
        );
        assert!(core.store_value(NodeId(2), STATE, Some(json!(false)), true));
        assert!(heard(&core) > before, "{:?} → {:?}", before, heard(&core));
    }

    /// Found in the lab over MQTT: a ping answered, then a health read loaded the list again,
    /// whose `lastActive` (Z-Wave JS UI's) was 35 s older: "last heard from 35 s ago".
    #[test]
    fn a_reload_never_moves_when_a_node_was_last_heard_from_back() {
        let core = Core::new(Backend::Mqtt);
        write(&core.state).nodes = Nodes::new(reloaded(false));
        let listed = read(&core.state).nodes[&NodeId(2)].last_active.unwrap();
        core.heard_from(NodeId(2), listed + 35_000);
        let mut fresh = reloaded(false);
        core.keep_reports(&mut fresh, &read(&core.state).nodes);
        assert_eq!(fresh[&NodeId(2)].last_active, Some(listed + 35_000));
        // A list that heard from it later than this server did wins.
        let mut later = reloaded(false);
        later.get_mut(&NodeId(2)).unwrap().last_active = Some(listed + 60_000);
        core.keep_reports(&mut later, &read(&core.state).nodes);
        assert_eq!(later[&NodeId(2)].last_active, Some(listed + 60_000));
    }
}
