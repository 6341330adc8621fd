//! zwave-js-server's events, read into what they change in the node cache, and applied.
//!
//! Only what the tools show is kept: a value's new state, a node's status, its statistics
//! and when it was last heard from, the controller's statistics, a node's whole state when it
//! (re)appears, its removal. Interview stages and the like change nothing here.

use std::collections::HashMap;

use serde::Deserialize;
use serde_json::{Map, Value, value::RawValue};

use super::state::{StateError, key_of, node_from_state_raw};
use crate::network::{
    NodeId, NodeInfo, NodeStatus, Nodes,
    health::{
        statistics::{ControllerStatistics, NodeStatistics, StatisticsRefused},
        upkeep::UpkeepSignal,
    },
    values::{ValueRefused, parse_value},
};

/// Most bytes of one part of a value's address (`commandClass`, `endpoint`, `property`,
/// `propertyKey`: tens of bytes recorded); a longer one is no address.
const MAX_ADDRESS_BYTES: usize = 1024;

/// What one event says, as far as the cache is concerned.
#[derive(Debug, Clone)]
pub enum Event {
    /// A value changed (`value updated`, `value added`) or went away (`value removed`:
    /// `value` is `None`).
    Value {
        /// Its node.
        node: NodeId,
        /// Its key in the node's values (`38-0-currentValue`).
        key: String,
        /// Its new value.
        value: Option<Value>,
    },
    /// A value changed to one past the bounds of one value: never parsed, not stored.
    Refused {
        /// Its node.
        node: NodeId,
        /// Its key in the node's values.
        key: String,
        /// Why.
        why: ValueRefused,
    },
    /// The node's status changed (`dead`, `alive`, `sleep`, `wake up`).
    Status {
        /// The node.
        node: NodeId,
        /// What it is now.
        status: NodeStatus,
    },
    /// The node's statistics (`statistics updated`), with when it was last heard from.
    Statistics {
        /// The node.
        node: NodeId,
        /// Its statistics, read field by field.
        statistics: NodeStatistics,
    },
    /// The controller's statistics (`statistics updated` from the controller).
    ControllerStatistics(ControllerStatistics),
    /// Statistics past their bounds: not parsed, not kept.
    RefusedStatistics(StatisticsRefused),
    /// The node's whole state (`ready`, `node added`): names, values, all.
    Node(Box<NodeInfo>),
    /// The node left the network (`node removed`).
    Removed(NodeId),
    /// Something the cache keeps changed in a way only the whole state tells.
    Reread,
    /// What an upkeep operation under way is doing (interview stages, health-check rounds):
    /// nothing the cache keeps, told to the operation's waiter.
    Upkeep {
        /// The node.
        node: NodeId,
        /// What was heard.
        signal: UpkeepSignal,
    },
    /// Nothing the cache keeps.
    Other,
}

/// Why a node event does not read.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum EventError {
    /// No usable node id.
    #[error("a `{event}` event without a node id")]
    NoNodeId {
        /// The event's name (`value updated`, …).
        event: String,
    },
    /// A value event without the value's address.
    #[error("a `{event}` event without a value's address")]
    NoAddress {
        /// The event's name.
        event: String,
    },
    /// A `ready` or `node added` event without the node's state.
    #[error("a `{event}` event without the node's state")]
    NoNodeState {
        /// The event's name.
        event: String,
    },
    /// The node's state it carries does not read.
    #[error(transparent)]
    State(#[from] StateError),
}

/// A node event's `node` member, for its id alone (the rest, a whole node state, is skipped).
#[derive(Deserialize)]
struct NodeRef {
    #[serde(rename = "nodeId")]
    node_id: u64,
}

/// An object's members as text, each parsed only when read.
fn members(object: &RawValue) -> Option<HashMap<String, &RawValue>> {
    serde_json::from_str(object.get()).ok()
}

/// Reads one `{"type": "event", "event": {...}}` message's `event`, from its text: a value is
/// parsed only within the bounds of one value ([`parse_value`]), and nothing else of an event
/// but what the cache keeps is parsed at all (`prevValue` never is).
///
/// # Errors
/// A node event without a usable node id, or whose node state does not parse.
pub fn read(event: &RawValue) -> Result<Event, EventError> {
    let Some(event) = members(event) else {
        return Ok(Event::Other);
    };
    let text = |key: &str| {
        event
            .get(key)
            .and_then(|raw| serde_json::from_str::<String>(raw.get()).ok())
    };
    let name = text("event").unwrap_or_default();
    match text("source").as_deref() {
        Some("node") => {}
        Some("controller") if name == "statistics updated" => {
            return Ok(statistics(event.get("statistics").copied(), |text| {
                ControllerStatistics::parse(text).map(Event::ControllerStatistics)
            }));
        }
        _ => return Ok(Event::Other),
    }
    let node = || {
        event
            .get("nodeId")
            .and_then(|raw| serde_json::from_str::<u64>(raw.get()).ok())
            .or_else(|| {
                event
                    .get("node")
                    .and_then(|raw| serde_json::from_str::<NodeRef>(raw.get()).ok())
                    .map(|node| node.node_id)
            })
            .and_then(|id| u16::try_from(id).ok())
            .map(NodeId)
            .ok_or_else(|| EventError::NoNodeId {
                event: name.clone(),
            })
    };
    // The value's address, and the member that holds its new value.
    let value = |member: Option<&str>| -> Result<Event, EventError> {
        let args = event.get("args").copied().and_then(members);
        let Some(key) = args.as_ref().and_then(address) else {
            return Err(EventError::NoAddress {
                event: name.clone(),
            });
        };
        let node = node()?;
        let raw = member.and_then(|member| args.as_ref()?.get(member).copied());
        Ok(match raw.map(|raw| parse_value(raw.get())).transpose() {
            Ok(value) => Event::Value { node, key, value },
            Err(why) => Event::Refused { node, key, why },
        })
    };
    Ok(match name.as_str() {
        "value updated" | "value added" => value(Some("newValue"))?,
        "value removed" => value(None)?,
        // A stateless value (a scene button pressed, a code entered): its last event is its
        // value.
        "value notification" => value(Some("value"))?,
        // A value's label, unit, range or states changed: the cache keeps them, so the
        // whole state is read again.
        "metadata updated" => {
            node()?;
            Event::Reread
        }
        "dead" => status(node()?, NodeStatus::Dead),
        "alive" => status(node()?, NodeStatus::Alive),
        "sleep" => status(node()?, NodeStatus::Asleep),
        "wake up" => status(node()?, NodeStatus::Awake),
        "statistics updated" => {
            let node = node()?;
            statistics(event.get("statistics").copied(), |text| {
                NodeStatistics::parse(text).map(|statistics| Event::Statistics { node, statistics })
            })
        }
        "ready" => Event::Node(Box::new(node_from_state_raw(
            event
                .get("nodeState")
                .copied()
                .ok_or_else(|| EventError::NoNodeState {
                    event: name.clone(),
                })?,
        )?)),
        "node added" => Event::Node(Box::new(node_from_state_raw(
            event
                .get("node")
                .copied()
                .ok_or_else(|| EventError::NoNodeState {
                    event: name.clone(),
                })?,
        )?)),
        "node removed" => Event::Removed(node()?),
        other => match UpkeepSignal::of_event(other, &event) {
            Some(signal) => Event::Upkeep {
                node: node()?,
                signal,
            },
            None => Event::Other,
        },
    })
}

/// The key of the value an event's `args` address, from its address members alone.
fn address(args: &HashMap<String, &RawValue>) -> Option<String> {
    let parts: Map<String, Value> = ["commandClass", "endpoint", "property", "propertyKey"]
        .into_iter()
        .filter_map(|part| {
            let raw = args
                .get(part)
                .filter(|raw| raw.get().len() <= MAX_ADDRESS_BYTES)?;
            Some((part.to_owned(), serde_json::from_str(raw.get()).ok()?))
        })
        .collect();
    key_of(&Value::Object(parts))
}

/// A `statistics` member read by `parse`; none at all is nothing to keep.
fn statistics(
    raw: Option<&RawValue>,
    parse: impl FnOnce(&str) -> Result<Event, StatisticsRefused>,
) -> Event {
    match raw.map(|raw| parse(raw.get())) {
        Some(Ok(event)) => event,
        Some(Err(why)) => Event::RefusedStatistics(why),
        None => Event::Other,
    }
}

fn status(node: NodeId, status: NodeStatus) -> Event {
    Event::Status { node, status }
}

/// What applying an event did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Applied {
    /// The cache changed.
    Changed,
    /// Nothing to change.
    Unchanged,
    /// The event names a node or value the cache does not have: the whole state should be
    /// read again (`start_listening`).
    Unknown,
}

/// Applies `event` to `nodes`, at `now_ms` (epoch milliseconds).
pub fn apply(nodes: &mut Nodes, event: Event, now_ms: i64) -> Applied {
    match event {
        Event::Value { node, key, value } => {
            // A live event: a value in it is news from the device (its echo of a write was
            // left out before this).
            if nodes.record_report(node, &key, value, now_ms, true) {
                Applied::Changed
            } else if nodes.get(&node).is_some_and(|known| !known.ready) {
                // A node being interviewed gains its values one by one; its `ready` event
                // brings them all, with their metadata.
                Applied::Unchanged
            } else {
                Applied::Unknown
            }
        }
        Event::Status { node, status } => match nodes.get_mut(&node) {
            Some(mut known) => {
                known.set_available(status != NodeStatus::Dead);
                known.set_status(status);
                Applied::Changed
            }
            None => Applied::Unknown,
        },
        // Every ~250 ms per node while it talks: the node changes only when it was heard
        // from later than known, and one the cache does not know is no reason to reload (a
        // new node comes with `node added`).
        Event::Statistics { node, statistics } => {
            let later = |known: &NodeInfo| {
                statistics
                    .last_seen_ms
                    .filter(|at| known.last_active.is_none_or(|was| was < *at))
            };
            match nodes.get(&node).and_then(later) {
                Some(at) => match nodes.get_mut(&node) {
                    Some(mut known) => {
                        known.set_last_active(at);
                        Applied::Changed
                    }
                    None => Applied::Unchanged,
                },
                None => Applied::Unchanged,
            }
        }
        Event::Node(info) => {
            nodes.put(*info);
            Applied::Changed
        }
        Event::Removed(node) => {
            if nodes.remove(node) {
                Applied::Changed
            } else {
                Applied::Unchanged
            }
        }
        Event::Reread => Applied::Unknown,
        Event::Refused { .. }
        | Event::ControllerStatistics(_)
        | Event::RefusedStatistics(_)
        | Event::Upkeep { .. }
        | Event::Other => Applied::Unchanged,
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    /// [`super::read`] of an event written as a tree (as text, the way it arrives), its error
    /// as said.
    fn read(event: &Value) -> Result<Event, String> {
        super::read(&serde_json::value::to_raw_value(event).unwrap()).map_err(|err| err.to_string())
    }

    /// Every event frame of a recorded session.
    fn recorded(name: &str) -> Vec<Value> {
        test_support::fixture_text(&format!("zwave-js-server/{name}"))
            .lines()
            .filter_map(|line| serde_json::from_str::<Value>(line).ok())
            .filter(|line| line["dir"] == "in" && line["msg"]["type"] == "event")
            .map(|line| line["msg"]["event"].clone())
            .collect()
    }

    #[test]
    fn every_recorded_event_reads() {
        let mut kinds = std::collections::BTreeSet::new();
        for file in ["ws-session.jsonl", "ws-startup.jsonl", "confirm-ws.jsonl"] {
            for event in recorded(file) {
                let read = read(&event).unwrap_or_else(|err| panic!("{err}: {event}"));
                kinds.insert(format!("{} → {}", event["event"], variant(&read)));
            }
        }
        assert_eq!(
            kinds.into_iter().collect::<Vec<_>>(),
            [
                "\"alive\" → status",
                "\"dead\" → status",
                "\"interview completed\" → upkeep",
                "\"interview stage completed\" → upkeep",
                "\"interview started\" → upkeep",
                "\"ready\" → node",
                "\"statistics updated\" → controller statistics",
                "\"statistics updated\" → statistics",
                "\"value added\" → value",
                "\"value updated\" → value",
            ]
        );
    }

    fn variant(event: &Event) -> &'static str {
        match event {
            Event::Value { .. } => "value",
            Event::Status { .. } => "status",
            Event::Statistics { .. } => "statistics",
            Event::ControllerStatistics(_) => "controller statistics",
            Event::RefusedStatistics(_) => "refused statistics",
            Event::Node(_) => "node",
            Event::Removed(_) => "removed",
            Event::Refused { .. } => "refused",
            Event::Reread => "reread",
            Event::Upkeep { .. } => "upkeep",
            Event::Other => "other",
        }
    }

    fn recorded_nodes() -> Nodes {
        let state: Value = serde_json::from_str(&test_support::fixture_text(
            "zwave-js-server/start_listening.result.json",
        ))
        .unwrap();
        Nodes::new(super::super::state::nodes_from_state(&state["result"]["state"]).unwrap())
    }

    #[test]
    fn values_statuses_and_nodes_change_the_cache() {
        let mut nodes = recorded_nodes();
        let event = read(
            &json!({"source": "node", "event": "value updated", "nodeId": 3,
            "args": {"commandClassName": "Multilevel Switch", "commandClass": 38, "endpoint": 0,
                     "property": "currentValue", "newValue": 40, "prevValue": 0}}),
        )
        .unwrap();
        assert!(
            matches!(&event, Event::Value { node: NodeId(3), key, value: Some(value) }
                if key == "38-0-currentValue" && *value == json!(40)),
            "{event:?}"
        );
        assert_eq!(apply(&mut nodes, event, 1_000), Applied::Changed);
        let value = &nodes[&NodeId(3)].values["38-0-currentValue"];
        assert_eq!(
            (&value.value, value.last_update),
            (&Some(json!(40)), Some(1_000))
        );

        // A value keyed by a property key (a notification's state).
        let added = read(
            &json!({"source": "node", "event": "value added", "nodeId": 10,
            "args": {"commandClass": 113, "endpoint": 0, "property": "Access Control",
                     "propertyKey": "Door state", "newValue": 22}}),
        )
        .unwrap();
        assert_eq!(apply(&mut nodes, added, 1_001), Applied::Changed);
        assert_eq!(
            nodes[&NodeId(10)].values["113-0-Access Control-Door state"].value,
            Some(json!(22))
        );

        let dead =
            read(&json!({"source": "node", "event": "dead", "nodeId": 2, "oldStatus": 4})).unwrap();
        assert_eq!(apply(&mut nodes, dead, 1_002), Applied::Changed);
        assert!(!nodes[&NodeId(2)].available);
        assert_eq!(nodes[&NodeId(2)].status, Some(NodeStatus::Dead));

        // A value of a node still being interviewed waits for the node's `ready`.
        let interviewing = read(&json!({"source": "node", "event": "value added", "nodeId": 11,
            "args": {"commandClass": 32, "endpoint": 0, "property": "currentValue", "newValue": 0}}))
        .unwrap();
        nodes.get_mut(&NodeId(11)).unwrap().set_ready(false);
        assert_eq!(apply(&mut nodes, interviewing, 1_003), Applied::Unchanged);

        // What the cache does not know of a ready node asks for the whole state again.
        let unknown = read(&json!({"source": "node", "event": "value added", "nodeId": 3,
            "args": {"commandClass": 32, "endpoint": 0, "property": "currentValue", "newValue": 255}}))
        .unwrap();
        assert_eq!(apply(&mut nodes, unknown, 1_003), Applied::Unknown);
        let stranger = read(&json!({"source": "node", "event": "alive", "nodeId": 99})).unwrap();
        assert_eq!(apply(&mut nodes, stranger, 1_004), Applied::Unknown);

        // A scene button's stateless value: its last event is its value.
        let scene = read(
            &json!({"source": "node", "event": "value notification", "nodeId": 3,
            "args": {"commandClass": 38, "endpoint": 0, "property": "currentValue", "value": 7}}),
        )
        .unwrap();
        assert_eq!(apply(&mut nodes, scene, 1_005), Applied::Changed);
        assert_eq!(
            nodes[&NodeId(3)].values["38-0-currentValue"].value,
            Some(json!(7))
        );
        // New metadata (a label, a unit, states) is in the whole state only.
        let metadata = read(&json!({"source": "node", "event": "metadata updated", "nodeId": 3,
            "args": {"commandClass": 38, "endpoint": 0, "property": "currentValue", "metadata": {}}}))
        .unwrap();
        assert_eq!(apply(&mut nodes, metadata, 1_005), Applied::Unknown);

        // A node's whole state replaces it; a removal removes it.
        let layout = nodes.layout();
        let renamed = read(&json!({"source": "node", "event": "ready", "nodeId": 3,
            "nodeState": {"nodeId": 3, "name": "Kitchen Dimmer", "status": 4, "ready": true, "values": []}}))
        .unwrap();
        assert_eq!(apply(&mut nodes, renamed, 1_005), Applied::Changed);
        assert_eq!(nodes[&NodeId(3)].name, "Kitchen Dimmer");
        assert_ne!(nodes.layout(), layout);
        let removed =
            read(&json!({"source": "node", "event": "node removed", "node": {"nodeId": 3}}))
                .unwrap();
        assert_eq!(apply(&mut nodes, removed, 1_006), Applied::Changed);
        assert!(!nodes.contains_key(&NodeId(3)));
    }

    #[test]
    fn a_value_report_moves_when_the_node_was_last_heard_from_never_back() {
        let mut nodes = recorded_nodes();
        let later = nodes[&NodeId(3)].last_active.unwrap_or(0) + 60_000;
        let report = || {
            read(
                &json!({"source": "node", "event": "value updated", "nodeId": 3,
                "args": {"commandClass": 38, "endpoint": 0, "property": "currentValue",
                         "newValue": 40, "prevValue": 0}}),
            )
            .unwrap()
        };
        assert_eq!(apply(&mut nodes, report(), later), Applied::Changed);
        assert_eq!(nodes[&NodeId(3)].last_active, Some(later));
        assert_eq!(apply(&mut nodes, report(), later - 1_000), Applied::Changed);
        assert_eq!(nodes[&NodeId(3)].last_active, Some(later));
    }

    #[test]
    fn a_value_past_its_bounds_is_refused_with_its_node_and_key_and_never_parsed() {
        let zeros = format!(
            "[{}0]",
            "0,".repeat(crate::network::values::MAX_VALUE_BYTES / 2)
        );
        let event = format!(
            r#"{{"source":"node","event":"value updated","nodeId":3,"args":{{"commandClass":38,"endpoint":0,"property":"currentValue","prevValue":{zeros},"newValue":{zeros}}}}}"#
        );
        let event = super::read(&RawValue::from_string(event).unwrap()).unwrap();
        assert!(
            matches!(&event, Event::Refused { node: NodeId(3), key, why: ValueRefused::TooLarge { bytes } }
                if key == "38-0-currentValue" && *bytes == zeros.len()),
            "{event:?}"
        );
        let mut nodes = recorded_nodes();
        let before = nodes[&NodeId(3)].values["38-0-currentValue"].clone();
        assert_eq!(apply(&mut nodes, event, 1_000), Applied::Unchanged);
        assert_eq!(nodes[&NodeId(3)].values["38-0-currentValue"], before);
        // A small new value beside a huge previous one: taken (`prevValue` is never read).
        let event = format!(
            r#"{{"source":"node","event":"value updated","nodeId":3,"args":{{"commandClass":38,"endpoint":0,"property":"currentValue","prevValue":{zeros},"newValue":40}}}}"#
        );
        assert!(matches!(
            super::read(&RawValue::from_string(event).unwrap()).unwrap(),
            Event::Value { value: Some(value), .. } if value == json!(40)
        ));
    }

    /// `statistics updated` comes every ~250 ms per node under traffic: it changes the node
    /// only when it was heard from later, and one for a node the cache does not know asks
    /// for nothing (no reload).
    #[test]
    fn a_statistics_storm_changes_a_node_only_when_it_was_heard_from_later() {
        let mut nodes = recorded_nodes();
        let seen = nodes[&NodeId(3)].last_active.unwrap_or(0);
        let statistics = |commands: u64, at: i64| {
            json!({"source": "node", "event": "statistics updated", "nodeId": 3,
                "statistics": {"commandsTX": commands, "rtt": 67.1,
                    "lastSeen": jiff::Timestamp::from_millisecond(at).unwrap().to_string()}})
        };
        let revision = nodes[&NodeId(3)].revision;
        for commands in 0..1_000 {
            let event = read(&statistics(commands, seen)).unwrap();
            assert_eq!(apply(&mut nodes, event, 0), Applied::Unchanged);
        }
        assert_eq!(
            nodes[&NodeId(3)].revision,
            revision,
            "no change: no new revision"
        );
        let later = read(&statistics(1_000, seen + 1_000)).unwrap();
        assert!(
            matches!(&later, Event::Statistics { statistics, .. } if statistics.commands_sent == Some(1_000))
        );
        assert_eq!(apply(&mut nodes, later, 0), Applied::Changed);
        assert_eq!(nodes[&NodeId(3)].last_active, Some(seen + 1_000));
        let stranger = read(
            &json!({"source": "node", "event": "statistics updated", "nodeId": 99,
            "statistics": {"commandsTX": 1}}),
        )
        .unwrap();
        assert_eq!(apply(&mut nodes, stranger, 0), Applied::Unchanged);
        // Statistics past their bounds are refused unparsed.
        let huge = json!({"source": "node", "event": "statistics updated", "nodeId": 3,
            "statistics": {"pad": "x".repeat(5_000)}});
        assert!(matches!(read(&huge).unwrap(), Event::RefusedStatistics(_)));
    }

    #[test]
    fn events_that_cannot_be_read_say_why() {
        assert_eq!(
            read(&json!({"source": "node", "event": "dead"})).unwrap_err(),
            "a `dead` event without a node id"
        );
        assert_eq!(
            read(&json!({"source": "node", "event": "value updated", "nodeId": 2, "args": {}}))
                .unwrap_err(),
            "a `value updated` event without a value's address"
        );
        assert!(matches!(
            read(&json!({"source": "controller", "event": "statistics updated"})),
            Ok(Event::Other)
        ));
    }
}
