//! The home as zwave-js-server describes it: the whole state (`start_listening`), a node's
//! state, a value's, and a value's change as a `value updated` event. Built by its own code,
//! none of the backend's.

use serde_json::{Value, json};

use crate::{network::NodeId, sim::change::Change};

/// The home id the simulated server gives.
pub(super) const HOME_ID: u64 = 3_735_928_559;

/// Where a value is, as an event's `args` name it: command class, endpoint, property, key.
pub(super) fn address(value: &Value) -> Value {
    let mut args = json!({
        "commandClass": value["commandClass"],
        "endpoint": value.get("endpoint").cloned().unwrap_or(json!(0)),
        "property": value["property"],
    });
    if let Some(key) = value.get("propertyKey").filter(|key| !key.is_null()) {
        args["propertyKey"] = key.clone();
    }
    args
}

/// A `value updated` event for a change.
pub(super) fn value_updated(change: &Change) -> String {
    let value = &change.value;
    let mut args = address(value);
    args["commandClassName"] = value["commandClassName"].clone();
    args["newValue"] = value.get("value").cloned().unwrap_or(Value::Null);
    args["prevValue"] = change.previous.clone();
    args["propertyName"] = value
        .get("propertyName")
        .cloned()
        .unwrap_or(value["property"].clone());
    json!({"type": "event", "event": {"source": "node", "event": "value updated",
        "nodeId": change.node["id"], "args": args}})
    .to_string()
}

/// The `statistics updated` events of a command counted: the controller's, then the node's
/// when they changed (the recorded order).
pub(super) fn statistics_updated(
    node: NodeId,
    statistics: Option<&Value>,
    controller: &Value,
) -> Vec<String> {
    let mut events = vec![
        json!({"type": "event", "event": {"source": "controller", "event": "statistics updated",
            "statistics": controller}})
        .to_string(),
    ];
    events.extend(statistics.map(|statistics| {
        json!({"type": "event", "event": {"source": "node", "event": "statistics updated",
            "nodeId": node, "statistics": statistics}})
        .to_string()
    }));
    events
}

/// A node's status event (`alive`, `dead`), with the status it had (zwave-js's numbers).
pub(super) fn status_event(node: NodeId, event: &str, old_status: &Value) -> String {
    json!({"type": "event", "event": {"source": "node", "event": event, "nodeId": node,
        "oldStatus": status_number(old_status)}})
    .to_string()
}

/// zwave-js's number of a status word.
fn status_number(status: &Value) -> u8 {
    match status.as_str().unwrap_or("Unknown") {
        "Asleep" => 1,
        "Awake" => 2,
        "Dead" => 3,
        "Alive" => 4,
        _ => 0,
    }
}

/// The `start_listening` state of a home: the driver, the controller, every node.
pub(super) fn state(nodes: &[Value]) -> Value {
    // The controller's own statistics, which Z-Wave JS UI lists on the controller node.
    let statistics = nodes
        .iter()
        .find(|node| node["isControllerNode"] == json!(true))
        .map_or(Value::Null, |node| node["statistics"].clone());
    json!({
        "driver": {"logConfig": {"enabled": true, "level": "info"}, "statisticsEnabled": false},
        "controller": {"type": 1, "homeId": HOME_ID, "ownNodeId": 1, "isSISPresent": true,
            "statistics": statistics},
        "nodes": nodes.iter().filter(|node| node["virtual"] != json!(true)).map(node_state).collect::<Vec<_>>(),
    })
}

/// A node as zwave-js-server describes it: status as a number, location, `lastSeen` as a
/// date, values as a list each with its metadata (states as a map).
pub(super) fn node_state(node: &Value) -> Value {
    let status = status_number(&node["status"]);
    let values: Vec<Value> = node["values"]
        .as_object()
        .into_iter()
        .flat_map(|values| values.values())
        .map(value_state)
        .collect();
    let ready = node["ready"].as_bool().unwrap_or(true);
    let mut state = json!({
        "nodeId": node["id"],
        "index": 0,
        "status": status,
        "ready": ready,
        "isControllerNode": node.get("isControllerNode").cloned().unwrap_or(json!(false)),
        // As recorded at driver start: the interview not begun, or done.
        "interviewStage": if ready { "Complete" } else { "None" },
        "deviceConfig": {"label": node["productLabel"], "manufacturer": node["manufacturer"]},
        "values": values,
    });
    // The controller node counts no commands to itself (its statistics are the controller's).
    state["statistics"] = if node["isControllerNode"] == json!(true) {
        json!({"commandsTX": 0, "commandsRX": 0, "commandsDroppedRX": 0, "commandsDroppedTX": 0,
            "timeoutResponse": 0})
    } else {
        node["statistics"].clone()
    };
    for (field, key) in [("name", "name"), ("loc", "location")] {
        if let Some(text) = node[field].as_str().filter(|text| !text.is_empty()) {
            state[key] = json!(text);
        }
    }
    if let Some(at) = node["lastActive"]
        .as_i64()
        .and_then(|ms| jiff::Timestamp::from_millisecond(ms).ok())
    {
        state["lastSeen"] = json!(at.to_string());
    }
    state
}

/// A value as zwave-js-server describes it: the address and the value, the rest in
/// `metadata`.
fn value_state(value: &Value) -> Value {
    let mut metadata = json!({
        "type": value.get("type").cloned().unwrap_or(json!("any")),
        "readable": value.get("readable").cloned().unwrap_or(json!(true)),
        "writeable": value.get("writeable").cloned().unwrap_or(json!(false)),
        "stateful": true,
        "secret": false,
    });
    for field in ["label", "unit", "min", "max"] {
        if let Some(found) = value.get(field).filter(|found| !found.is_null()) {
            metadata[field] = found.clone();
        }
    }
    if let Some(states) = value["states"].as_array() {
        let map: serde_json::Map<String, Value> = states
            .iter()
            .map(|state| {
                let key = match &state["value"] {
                    Value::String(text) => text.clone(),
                    other => other.to_string(),
                };
                (key, state["text"].clone())
            })
            .collect();
        metadata["states"] = Value::Object(map);
    }
    let mut state = json!({
        "endpoint": value.get("endpoint").cloned().unwrap_or(json!(0)),
        "commandClass": value["commandClass"],
        "commandClassName": value.get("commandClassName").cloned().unwrap_or_default(),
        "property": value["property"],
        "metadata": metadata,
    });
    for field in ["propertyName", "propertyKey", "propertyKeyName", "value"] {
        if let Some(found) = value.get(field).filter(|found| !found.is_null()) {
            state[field] = found.clone();
        }
    }
    state
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{
        network::zwave_js_server::state::nodes_from_state,
        network::{NodeId, now_ms},
        sim::home::demo_home,
    };

    /// The backend reads the simulator's state as the node model `getNodes` gives for the
    /// same home: names, kinds of value, units, states and what sets what.
    #[test]
    fn the_state_reads_back_as_the_same_home() {
        let home = demo_home(now_ms());
        let from_server = nodes_from_state(&state(&home)).unwrap();
        let mut from_mqtt = crate::network::parse_nodes(Value::Array(home)).unwrap();
        // zwave-js-server does not list Z-Wave JS UI's virtual broadcast node.
        from_mqtt.retain(|_, node| !node.is_virtual);
        assert_eq!(
            from_server.keys().collect::<Vec<_>>(),
            from_mqtt.keys().collect::<Vec<_>>()
        );
        for (id, node) in &from_mqtt {
            let other = &from_server[id];
            assert_eq!(
                (&other.name, &other.loc, other.ready),
                (&node.name, &node.loc, node.ready),
                "{id}"
            );
            assert_eq!(
                other.values.keys().collect::<Vec<_>>(),
                node.values.keys().collect::<Vec<_>>(),
                "{id}"
            );
            // A JavaScript object keeps its text keys in insertion order ("true" before
            // "false"); ours sorts them: the states are compared as a set.
            let states = |value: &crate::network::ValueInfo| {
                value.states.clone().map(|mut states| {
                    states.sort_by(|a, b| a.text.cmp(&b.text));
                    states
                })
            };
            for (key, value) in &node.values {
                let seen = &other.values[key];
                assert_eq!(
                    (
                        &seen.value,
                        &seen.unit,
                        &seen.kind,
                        seen.writeable,
                        states(seen)
                    ),
                    (
                        &value.value,
                        &value.unit,
                        &value.kind,
                        value.writeable,
                        states(value)
                    ),
                    "{id} {key}"
                );
                assert_eq!(seen.target_value, value.target_value, "{id} {key}");
            }
        }
        assert!(from_server.contains_key(&NodeId(2)));
    }
}
