//! [`HealthBook`]: what the core keeps of the network's health beside the node list: the
//! statistics that came after the list was loaded (the `statistics updated` events), the
//! controller's statistics, and since when each node has had its status.
//!
//! Statistics events come every ~250 ms per node while it talks; each one only replaces the
//! node's entry (the latest wins: they are totals since the driver started), under a short
//! lock, and wakes nobody: reading them is the health read's business, not a waiter's.

use std::{collections::HashMap, time::Instant};

use super::statistics::{ControllerStatistics, ListedStatistics, NodeStatistics};
use crate::network::{NodeId, NodeStatus, Nodes};

/// The network's health as the backends feed it. Bounded by the node list: an entry is kept
/// only for a node the list has, and a new list takes the others out.
#[derive(Debug, Default)]
pub struct HealthBook {
    /// Statistics received after the node list was loaded (newer than the list's), by node.
    statistics: HashMap<NodeId, Received<NodeStatistics>>,
    /// The controller's latest statistics.
    controller: Option<Received<ControllerStatistics>>,
    /// Each node's status as last seen, and since when (when a change was seen).
    statuses: HashMap<NodeId, StatusSeen>,
    /// When the node list was last loaded.
    loaded_at: Option<Instant>,
    /// When a statistics event last came (MQTT: only when Z-Wave JS UI sends events); once
    /// one has, they keep the statistics current.
    last_event_at: Option<Instant>,
    /// When a command this server sent to a device (a write, a poll, a ping) was last
    /// answered: the statistics moved then.
    commanded_at: Option<Instant>,
}

/// Something received, and when.
#[derive(Debug, Clone)]
struct Received<T> {
    what: T,
    at: Instant,
}

/// A node's status as last seen, and since when.
#[derive(Debug, Clone, PartialEq, Eq)]
struct StatusSeen {
    status: NodeStatus,
    /// When this server saw it change to `status` (epoch ms); `None` when it had it from the
    /// first list it loaded, so since when is not known.
    since_ms: Option<i64>,
}

impl HealthBook {
    /// A node list was loaded at `now_ms` (a request sent at `sent`): statistics received
    /// before `sent` are older than the list's and go; statuses that differ from the last
    /// seen changed now; the controller's statistics are `controller`, or those Z-Wave JS UI
    /// lists on the controller node.
    pub fn loaded(
        &mut self,
        nodes: &Nodes,
        controller: Option<ControllerStatistics>,
        sent: Instant,
        now_ms: i64,
    ) {
        let now = Instant::now();
        self.statistics
            .retain(|id, received| received.at > sent && nodes.contains_key(id));
        self.statuses.retain(|id, _| nodes.contains_key(id));
        for node in nodes.values() {
            if let Some(status) = &node.status {
                self.saw_status(node.id, status, now_ms);
            }
        }
        let listed = nodes.values().find_map(|node| match &node.statistics {
            Some(ListedStatistics::Controller(statistics)) if node.is_controller_node => {
                Some(statistics.clone())
            }
            _ => None,
        });
        if let Some(what) = controller.or(listed) {
            self.controller = Some(Received { what, at: now });
        }
        self.loaded_at = Some(now);
    }

    /// `node`'s statistics came in an event (it is in the list: the caller checked).
    pub fn record(&mut self, node: NodeId, what: NodeStatistics) {
        let at = Instant::now();
        self.last_event_at = Some(at);
        self.statistics.insert(node, Received { what, at });
    }

    /// The controller's statistics came in an event.
    pub fn record_controller(&mut self, what: ControllerStatistics) {
        let at = Instant::now();
        self.last_event_at = Some(at);
        self.controller = Some(Received { what, at });
    }

    /// `node` has `status` as of `now_ms`: when that is a change from the status last seen,
    /// it is its status since then.
    pub fn saw_status(&mut self, node: NodeId, status: &NodeStatus, now_ms: i64) {
        match self.statuses.get_mut(&node) {
            Some(seen) if seen.status == *status => {}
            Some(seen) => {
                *seen = StatusSeen {
                    status: status.clone(),
                    since_ms: Some(now_ms),
                };
            }
            None => {
                self.statuses.insert(
                    node,
                    StatusSeen {
                        status: status.clone(),
                        since_ms: None,
                    },
                );
            }
        }
    }

    /// `node`'s statistics received since the list was loaded, if any (the list's are older).
    pub fn statistics(&self, node: NodeId) -> Option<&NodeStatistics> {
        self.statistics.get(&node).map(|received| &received.what)
    }

    /// The controller's latest statistics.
    pub fn controller(&self) -> Option<&ControllerStatistics> {
        self.controller.as_ref().map(|received| &received.what)
    }

    /// Since when `node` has had `status` (epoch ms), when this server saw it change.
    pub fn status_since(&self, node: NodeId, status: &NodeStatus) -> Option<i64> {
        self.statuses
            .get(&node)
            .filter(|seen| seen.status == *status)
            .and_then(|seen| seen.since_ms)
    }

    /// A command this server sent to a device was answered: the statistics moved.
    pub fn commanded(&mut self) {
        self.commanded_at = Some(Instant::now());
    }

    /// Whether the statistics held may be out of date. Once statistics events come, they
    /// keep them current (a quiet network sends none: nothing changed). Until then, the
    /// list's are out of date when older than `age`, or than a command this server sent.
    pub fn is_out_of_date(&self, age: std::time::Duration) -> bool {
        if self.last_event_at.is_some() {
            return false;
        }
        match self.loaded_at {
            None => true,
            Some(loaded) => {
                loaded.elapsed() >= age || self.commanded_at.is_some_and(|at| at > loaded)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::*;
    use crate::network::parse_nodes;

    fn demo() -> Nodes {
        Nodes::new(parse_nodes(Value::Array(crate::sim::home::demo_home(0))).unwrap())
    }

    #[test]
    fn an_event_newer_than_the_list_wins_and_a_new_list_takes_older_ones_out() {
        let nodes = demo();
        let mut book = HealthBook::default();
        let before = Instant::now();
        book.loaded(&nodes, None, before, 1_000);
        assert!(book.statistics(NodeId(2)).is_none());
        let sent = NodeStatistics {
            commands_sent: Some(40),
            ..NodeStatistics::default()
        };
        book.record(NodeId(2), sent.clone());
        assert_eq!(book.statistics(NodeId(2)), Some(&sent));
        // A list requested before the event came is older: the event stays.
        book.loaded(&nodes, None, before, 2_000);
        assert_eq!(book.statistics(NodeId(2)), Some(&sent));
        // One requested after it is newer.
        book.loaded(&nodes, None, Instant::now(), 3_000);
        assert!(book.statistics(NodeId(2)).is_none());
    }

    #[test]
    fn since_when_a_status_holds_is_known_only_from_a_change_seen() {
        let nodes = demo();
        let mut book = HealthBook::default();
        book.loaded(&nodes, None, Instant::now(), 1_000);
        // Node 7 was dead in the first list: since when is not known.
        assert_eq!(book.status_since(NodeId(7), &NodeStatus::Dead), None);
        book.saw_status(NodeId(2), &NodeStatus::Dead, 5_000);
        assert_eq!(book.status_since(NodeId(2), &NodeStatus::Dead), Some(5_000));
        // The same status again is no change.
        book.saw_status(NodeId(2), &NodeStatus::Dead, 6_000);
        assert_eq!(book.status_since(NodeId(2), &NodeStatus::Dead), Some(5_000));
        // A list that shows it alive again: alive since that list.
        book.loaded(&nodes, None, Instant::now(), 7_000);
        assert_eq!(
            book.status_since(NodeId(2), &NodeStatus::Alive),
            Some(7_000)
        );
        assert_eq!(book.status_since(NodeId(2), &NodeStatus::Dead), None);
    }

    #[test]
    fn the_controllers_statistics_come_from_the_list_or_the_state_and_then_events() {
        let mut home = crate::sim::home::demo_home(0);
        home[0]["statistics"] = json!({"messagesTX": 11, "messagesRX": 101, "NAK": 0});
        let nodes = Nodes::new(parse_nodes(Value::Array(home)).unwrap());
        let mut book = HealthBook::default();
        book.loaded(&nodes, None, Instant::now(), 0);
        assert_eq!(book.controller().unwrap().messages_received, Some(101));
        let given = ControllerStatistics {
            nak: Some(3),
            ..ControllerStatistics::default()
        };
        book.loaded(&nodes, Some(given.clone()), Instant::now(), 0);
        assert_eq!(book.controller(), Some(&given));
        book.record_controller(ControllerStatistics::default());
        assert_eq!(book.controller(), Some(&ControllerStatistics::default()));
        let age = std::time::Duration::from_secs(5);
        let mut quiet = HealthBook::default();
        assert!(quiet.is_out_of_date(age), "never loaded");
        quiet.loaded(&nodes, None, Instant::now(), 0);
        assert!(!quiet.is_out_of_date(age));
        assert!(quiet.is_out_of_date(std::time::Duration::ZERO));
        // A command answered after the list: its figures no longer count it.
        quiet.commanded();
        assert!(quiet.is_out_of_date(age));
        // Events keep them current from the first one on.
        assert!(!book.is_out_of_date(std::time::Duration::ZERO));
    }
}
