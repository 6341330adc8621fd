//! The network as zwave-js-server describes it (the `state` of `start_listening`, and a
//! node's state in `node ready`/`node added` events), turned into the node model the rest of
//! the server knows ([`NodeInfo`], first made for Z-Wave JS UI's `getNodes`).
//!
//! The two describe the same driver's nodes differently: a value's type, label, unit, range
//! and states sit in its `metadata` (states as a map, not a list), the node's status is a
//! number, its location is `location`, when it was last heard from is `lastSeen` (a date),
//! and no value says which value sets it. The translation goes through the same parser as
//! `getNodes`, so every text is escaped and capped the same way.

use std::collections::BTreeMap;

use serde_json::{Map, Value, json, value::RawValue};
use tracing::warn;

use crate::network::{
    NodeId, NodeInfo, health::statistics::ControllerStatistics, values::parse_value,
};

/// Most bytes of one member of a node state other than its `values` (names, flags, device
/// class, endpoints: under 1 KB recorded); a larger one is left out, unparsed. A value's
/// members are bounded as one value is ([`parse_value`]).
const MAX_MEMBER_BYTES: usize = 64 * 1024;

/// Why the server's state, or a node's, does not read.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StateError {
    /// The state has no `nodes` array (`got`: what it has instead).
    #[error("the server's state has no node list (got {got})")]
    NoNodeList {
        /// What JSON `nodes` is: `null`, `an object`, …
        got: &'static str,
    },
    /// A node's state is no JSON object.
    #[error("a node state that is no object ({0})")]
    NotAnObject(serde_json::Error),
    /// A member of a node's state does not parse, or has the wrong type.
    #[error("{0}")]
    Unreadable(serde_json::Error),
}

/// The member `name` of the JSON object `object`, as text.
fn member<'a>(object: Option<&'a RawValue>, name: &str) -> Option<&'a RawValue> {
    let members: BTreeMap<String, &'a RawValue> = serde_json::from_str(object?.get()).ok()?;
    members.get(name).copied()
}

/// What JSON `raw` is, from its first character (as [`common::kind`] says it of a tree).
fn kind_of(raw: &RawValue) -> &'static str {
    match raw.get().as_bytes().first() {
        Some(b'{') => "an object",
        Some(b'[') => "an array",
        Some(b'"') => "a string",
        Some(b't' | b'f') => "a boolean",
        Some(b'n') | None => "null",
        Some(_) => "a number",
    }
}

/// The nodes of `start_listening`'s result (`{"state": {driver, controller, nodes}}`), read
/// from its text one node at a time: no tree of the whole state is built, and every member
/// of a node is bounded before it is parsed ([`node_from_state_raw`]).
///
/// # Errors
/// The result has no `state.nodes` array.
pub fn nodes_from_result(
    result: Option<&RawValue>,
) -> Result<BTreeMap<NodeId, NodeInfo>, StateError> {
    let nodes = member(member(result, "state"), "nodes");
    let Some(items) =
        nodes.and_then(|nodes| serde_json::from_str::<Vec<&RawValue>>(nodes.get()).ok())
    else {
        return Err(StateError::NoNodeList {
            got: nodes.map_or("null", kind_of),
        });
    };
    let mut parsed = BTreeMap::new();
    for node in items {
        match node_from_state_raw(node) {
            Ok(info) => {
                parsed.insert(info.id, info);
            }
            Err(err) => {
                let id = member(Some(node), "nodeId").map(RawValue::get);
                warn!(node = ?id, error = %err, "skipping a node that does not parse");
            }
        }
    }
    Ok(parsed)
}

/// The controller's statistics in `start_listening`'s result (`state.controller.statistics`),
/// when it has readable ones.
pub fn controller_statistics(result: Option<&RawValue>) -> Option<ControllerStatistics> {
    let statistics = member(member(member(result, "state"), "controller"), "statistics")?;
    ControllerStatistics::parse(statistics.get())
        .inspect_err(
            |why| warn!(%why, "the controller's statistics in the server's state were refused"),
        )
        .ok()
}

/// One node's state from its text ([`node_from_state`]), each member parsed only within its
/// bounds: a value past the bounds of one value is left undefined, and logged with its node
/// and key; any other member past `MAX_MEMBER_BYTES` is left out.
///
/// # Errors
/// As [`node_from_state`], or the state is no JSON object.
pub fn node_from_state_raw(node: &RawValue) -> Result<NodeInfo, StateError> {
    let members: BTreeMap<String, &RawValue> =
        serde_json::from_str(node.get()).map_err(StateError::NotAnObject)?;
    let id = members.get("nodeId").map_or("?", |id| id.get());
    let mut tree = Map::new();
    for (name, raw) in &members {
        if name == "values" {
            let values: Vec<&RawValue> = serde_json::from_str(raw.get()).unwrap_or_default();
            let values = values
                .into_iter()
                .filter_map(|value| bounded_value(id, value))
                .collect();
            tree.insert(name.clone(), Value::Array(values));
        } else if raw.get().len() > MAX_MEMBER_BYTES {
            warn!(node = id, member = %name, bytes = raw.get().len(), max_bytes = MAX_MEMBER_BYTES, "left out a member of zwave-js-server's node state larger than any");
        } else {
            let parsed = serde_json::from_str(raw.get()).map_err(StateError::Unreadable)?;
            tree.insert(name.clone(), parsed);
        }
    }
    node_from_state(&Value::Object(tree))
}

/// One of a node state's values as a tree, each member parsed within the bounds of one value;
/// one past them (its `value`, or outsized metadata) is left out and logged. `None`: no object.
fn bounded_value(node: &str, raw: &RawValue) -> Option<Value> {
    let members: BTreeMap<String, &RawValue> = serde_json::from_str(raw.get()).ok()?;
    let mut tree = Map::new();
    let mut refused = Vec::new();
    for (name, raw) in members {
        match parse_value(raw.get()) {
            Ok(parsed) => {
                tree.insert(name, parsed);
            }
            Err(why) => refused.push((name, why)),
        }
    }
    let tree = Value::Object(tree);
    for (member, why) in refused {
        warn!(node, key = key_of(&tree).as_deref().unwrap_or("?"), %member, %why, "refused part of a value in zwave-js-server's node state: left out");
    }
    Some(tree)
}

/// The nodes of a `start_listening` state (`{driver, controller, nodes}`).
///
/// # Errors
/// `state` has no `nodes` array.
pub fn nodes_from_state(state: &Value) -> Result<BTreeMap<NodeId, NodeInfo>, StateError> {
    let nodes = state
        .get("nodes")
        .and_then(Value::as_array)
        .ok_or_else(|| StateError::NoNodeList {
            got: common::kind(state.get("nodes").unwrap_or(&Value::Null)),
        })?;
    let mut parsed = BTreeMap::new();
    for node in nodes {
        match node_from_state(node) {
            Ok(info) => {
                parsed.insert(info.id, info);
            }
            Err(err) => {
                warn!(node = ?node.get("nodeId"), error = %err, "skipping a node that does not parse");
            }
        }
    }
    Ok(parsed)
}

/// One node's state, as zwave-js-server sends it.
///
/// # Errors
/// It has no usable `nodeId`, or a field has the wrong type.
pub fn node_from_state(node: &Value) -> Result<NodeInfo, StateError> {
    let status = node.get("status").and_then(Value::as_u64);
    let mut values = Map::new();
    let all: Vec<&Value> = node
        .get("values")
        .and_then(Value::as_array)
        .map(|values| values.iter().collect())
        .unwrap_or_default();
    for value in &all {
        let translated = value_from_state(value, &all);
        if let Some(key) = key_of(&translated) {
            values.insert(key, translated);
        }
    }
    let shaped = json!({
        "id": node.get("nodeId").cloned().unwrap_or(Value::Null),
        "name": node.get("name").cloned().unwrap_or_default(),
        "loc": node.get("location").cloned().unwrap_or_default(),
        "ready": node.get("ready").and_then(Value::as_bool).unwrap_or(false),
        // zwave-js's NodeStatus: 3 is Dead.
        "available": status != Some(3),
        "status": node.get("status").cloned().unwrap_or(Value::Null),
        "isControllerNode": node.get("isControllerNode").and_then(Value::as_bool).unwrap_or(false),
        "lastActive": last_seen(node),
        "statistics": node.get("statistics").cloned().unwrap_or(Value::Null),
        "productLabel": node.pointer("/deviceConfig/label").cloned().unwrap_or(Value::Null),
        "manufacturer": node.pointer("/deviceConfig/manufacturer").cloned().unwrap_or(Value::Null),
        "values": values,
    });
    serde_json::from_value(shaped).map_err(StateError::Unreadable)
}

/// `lastSeen` (an ISO date) as epoch milliseconds.
fn last_seen(node: &Value) -> Value {
    node.get("lastSeen")
        .and_then(Value::as_str)
        .and_then(|date| date.parse::<jiff::Timestamp>().ok())
        .map_or(Value::Null, |at| json!(at.as_millisecond()))
}

/// A value with its metadata, in `getNodes`' shape. `siblings`: the node's other values, to
/// find the value that sets this one.
fn value_from_state(value: &Value, siblings: &[&Value]) -> Value {
    let meta = value.get("metadata").unwrap_or(&Value::Null);
    let field = |key: &str| meta.get(key).cloned().unwrap_or(Value::Null);
    let mut shaped = json!({
        "commandClass": value.get("commandClass").cloned().unwrap_or(Value::Null),
        "commandClassName": value.get("commandClassName").cloned().unwrap_or_default(),
        "endpoint": value.get("endpoint").cloned().unwrap_or(json!(0)),
        "property": value.get("property").cloned().unwrap_or(Value::Null),
        "propertyName": value.get("propertyName").cloned().unwrap_or(Value::Null),
        "propertyKey": value.get("propertyKey").cloned().unwrap_or(Value::Null),
        "propertyKeyName": value.get("propertyKeyName").cloned().unwrap_or(Value::Null),
        "type": meta.get("type").cloned().unwrap_or_default(),
        "readable": meta.get("readable").and_then(Value::as_bool).unwrap_or(true),
        "writeable": meta.get("writeable").and_then(Value::as_bool).unwrap_or(false),
        "label": field("label"),
        "unit": field("unit"),
        "min": field("min"),
        "max": field("max"),
        "states": states(meta.get("states")),
        "value": value.get("value").cloned().unwrap_or(Value::Null),
    });
    // `currentX` is set by `targetX` of the same command class and endpoint (currentValue by
    // targetValue, a lock's currentMode by targetMode), as the gateway pairs them.
    let target_property = value
        .get("property")
        .and_then(Value::as_str)
        .and_then(|property| property.strip_prefix("current"))
        .map(|rest| format!("target{rest}"));
    if let Some(target_property) = target_property
        && let Some(target) = siblings.iter().find(|other| {
            other.get("property").and_then(Value::as_str) == Some(target_property.as_str())
                && other.get("commandClass") == value.get("commandClass")
                && other.get("endpoint") == value.get("endpoint")
                && other.get("propertyKey") == value.get("propertyKey")
        })
        && let Some(key) = key_of(&json!({
            "commandClass": target.get("commandClass"),
            "endpoint": target.get("endpoint").cloned().unwrap_or(json!(0)),
            "property": target_property,
            "propertyKey": target.get("propertyKey"),
        }))
    {
        shaped["isCurrentValue"] = json!(true);
        shaped["targetValue"] = json!(key);
    }
    // Absent fields, not nulls: the model's defaults apply.
    if let Value::Object(fields) = &mut shaped {
        fields.retain(|_, field| !field.is_null());
    }
    shaped
}

/// Metadata states (`{"0": "idle", "true": "Start"}`) as `getNodes`' list of `{text, value}`,
/// each value its JSON type again (a number, a boolean, else the text).
fn states(states: Option<&Value>) -> Value {
    let Some(Value::Object(states)) = states else {
        return Value::Null;
    };
    // In the order the server meant (a JavaScript object's): integer keys ascending first.
    let mut ordered: Vec<(&String, &Value)> = states.iter().collect();
    ordered.sort_by_key(|(value, _)| value.parse::<u64>().map_or((1, 0), |n| (0, n)));
    ordered
        .into_iter()
        .map(|(value, text)| {
            let value = serde_json::from_str::<Value>(value)
                .ok()
                .filter(|parsed| parsed.is_number() || parsed.is_boolean())
                .unwrap_or_else(|| Value::String(value.clone()));
            json!({"text": text, "value": value})
        })
        .collect()
}

/// The key `getNodes` stores a value under (`"<cc>-<endpoint>-<property>[-<propertyKey>]"`),
/// of a value or of an event's `args` (both carry the same address fields).
pub(super) fn key_of(value: &Value) -> Option<String> {
    let part = |key: &str| match value.get(key)? {
        Value::String(text) => Some(text.clone()),
        other @ Value::Number(_) => Some(other.to_string()),
        _ => None,
    };
    let mut key = format!(
        "{}-{}-{}",
        part("commandClass")?,
        part("endpoint").unwrap_or_else(|| "0".to_owned()),
        part("property")?
    );
    if let Some(sub) = part("propertyKey") {
        key.push('-');
        key.push_str(&sub);
    }
    Some(key)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::network::parse_nodes;

    fn recorded() -> (BTreeMap<NodeId, NodeInfo>, BTreeMap<NodeId, NodeInfo>) {
        let ws: Value = serde_json::from_str(&test_support::fixture_text(
            "zwave-js-server/start_listening.result.json",
        ))
        .unwrap();
        let zui: Value = serde_json::from_str(&test_support::fixture_text(
            "zwave-js-ui/captures/classes-getNodes.full.json",
        ))
        .unwrap();
        (
            nodes_from_state(&ws["result"]["state"]).unwrap(),
            parse_nodes(zui["result"].clone()).unwrap(),
        )
    }

    /// States as text pairs in one order: a JSON object's order of keys that are no integers
    /// (`{"true": "Start", "false": "Stop"}`) does not survive parsing, and means nothing.
    fn sorted(states: &Option<Vec<crate::network::values::ValueState>>) -> Option<Vec<String>> {
        states.as_ref().map(|states| {
            let mut pairs: Vec<String> = states
                .iter()
                .map(|state| format!("{}={}", state.value, state.text))
                .collect();
            pairs.sort();
            pairs
        })
    }

    #[test]
    fn the_servers_state_reads_as_the_gateways_node_list_of_the_same_network() {
        let (ws, zui) = recorded();
        // The gateway lists the broadcast node 255 too; it is no device either way.
        assert_eq!(ws.len(), 15);
        for (id, node) in &ws {
            let other = &zui[id];
            assert_eq!(
                (
                    &node.name,
                    &node.loc,
                    node.ready,
                    node.available,
                    &node.status
                ),
                (
                    &other.name,
                    &other.loc,
                    other.ready,
                    other.available,
                    &other.status
                ),
                "node {id}"
            );
            assert_eq!(
                node.is_controller_node, other.is_controller_node,
                "node {id}"
            );
            let keys: Vec<&str> = node.values.keys().map(|k| k.as_str()).collect();
            let other_keys: Vec<&str> = other.values.keys().map(|k| k.as_str()).collect();
            assert_eq!(keys, other_keys, "node {id}");
            for (key, value) in &node.values {
                let theirs = &other.values[key];
                // Everything but the value itself and when it changed (the two captures were
                // taken at different times).
                assert_eq!(
                    (
                        &value.command_class_name,
                        &value.property_name,
                        &value.property_key_name,
                        &value.kind,
                        value.readable,
                        value.writeable,
                        &value.label,
                        &value.unit,
                        value.min,
                        value.max,
                        (
                            sorted(&value.states),
                            value.is_current_value,
                            &value.target_value
                        ),
                    ),
                    (
                        &theirs.command_class_name,
                        &theirs.property_name,
                        &theirs.property_key_name,
                        &theirs.kind,
                        theirs.readable,
                        theirs.writeable,
                        &theirs.label,
                        &theirs.unit,
                        theirs.min,
                        theirs.max,
                        (
                            sorted(&theirs.states),
                            theirs.is_current_value,
                            &theirs.target_value
                        ),
                    ),
                    "node {id} value {key}"
                );
            }
        }
    }

    #[test]
    fn the_state_read_from_its_text_is_the_state_read_from_a_tree() {
        let text = test_support::fixture_text("zwave-js-server/start_listening.result.json");
        let members: BTreeMap<String, &RawValue> = serde_json::from_str(&text).unwrap();
        let from_text = nodes_from_result(members.get("result").copied()).unwrap();
        let (from_tree, _) = recorded();
        let shown = |nodes: &BTreeMap<NodeId, NodeInfo>| {
            nodes
                .iter()
                .map(|(id, node)| (*id, node.name.clone(), node.values.clone()))
                .collect::<Vec<_>>()
        };
        assert_eq!(shown(&from_text), shown(&from_tree));
        assert_eq!(
            nodes_from_result(None).unwrap_err().to_string(),
            "the server's state has no node list (got null)"
        );
        let no_list = RawValue::from_string(r#"{"state":{"nodes":{}}}"#.to_owned()).unwrap();
        assert_eq!(
            nodes_from_result(Some(&no_list)).unwrap_err().to_string(),
            "the server's state has no node list (got an object)"
        );
    }

    #[test]
    fn a_huge_value_in_a_node_state_is_left_undefined_and_the_node_kept() {
        let zeros = format!(
            "[{}0]",
            "0,".repeat(crate::network::values::MAX_VALUE_BYTES / 2)
        );
        let node = format!(
            r#"{{"nodeId":2,"name":"Plug","status":4,"ready":true,"values":[
                {{"commandClass":37,"endpoint":0,"property":"currentValue","metadata":{{"type":"boolean","label":"Current value"}},"value":{zeros}}},
                {{"commandClass":37,"endpoint":0,"property":"targetValue","metadata":{{"type":"boolean","writeable":true}},"value":false}}]}}"#
        );
        let node = node_from_state_raw(&RawValue::from_string(node).unwrap()).unwrap();
        let current = &node.values["37-0-currentValue"];
        assert_eq!(
            (&current.value, current.label.as_deref()),
            (&None, Some("Current value"))
        );
        assert_eq!(
            node.values["37-0-targetValue"].value,
            Some(Value::Bool(false))
        );
    }

    #[test]
    fn a_state_without_nodes_and_a_node_without_an_id_are_reported() {
        assert_eq!(
            nodes_from_state(&json!({"driver": {}}))
                .unwrap_err()
                .to_string(),
            "the server's state has no node list (got null)"
        );
        assert!(node_from_state(&json!({"name": "x"})).is_err());
        // A bad node is skipped, the others kept.
        let nodes =
            nodes_from_state(&json!({"nodes": [{"name": "x"}, {"nodeId": 2, "status": 3}]}))
                .unwrap();
        assert_eq!(nodes.len(), 1);
        assert!(!nodes[&NodeId(2)].available);
    }
}
