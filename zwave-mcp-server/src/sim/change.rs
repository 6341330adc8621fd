//! The simulated home's values as both simulated servers change them: finding a node in the
//! home, and setting one of its values, which makes a [`Change`] for the server to publish.

use serde_json::{Value, json};

use crate::network::{NodeId, now_ms};

/// One value changed: the node and the value object after the change, and what it was.
#[derive(Debug, Clone)]
pub(super) struct Change {
    pub(super) node: Value,
    pub(super) value: Value,
    pub(super) previous: Value,
}

/// The node `id` of the home, as `getNodes` shows it.
pub(super) fn find_node(nodes: &[Value], id: NodeId) -> Option<&Value> {
    nodes.iter().find(|node| node["id"] == json!(id))
}

/// Sets a value; returns the node and the updated value object to publish, and the value
/// it had.
pub(super) fn set_value(
    nodes: &mut [Value],
    node: NodeId,
    key: &str,
    new: Value,
) -> Option<Change> {
    let node_json = nodes.iter_mut().find(|n| n["id"] == json!(node))?;
    let slot = node_json.get_mut("values")?.get_mut(key)?;
    let previous = std::mem::replace(&mut slot["value"], new);
    slot["lastUpdate"] = json!(now_ms());
    let value = slot.clone();
    node_json["lastActive"] = json!(now_ms());
    Some(Change {
        node: node_json.clone(),
        value,
        previous,
    })
}
