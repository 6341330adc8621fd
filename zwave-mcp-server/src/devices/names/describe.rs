//! How answers name a device: `"Living Room Light" (node 3, Living Room)`.

use crate::network::NodeInfo;

/// The name people use: the node's name, or `Node <id>` when it has none.
pub fn display_name(node: &NodeInfo) -> String {
    let name = node.name.trim();
    if name.is_empty() {
        format!("Node {}", node.id)
    } else {
        name.to_owned()
    }
}

/// `"Living Room Light" (node 3, Living Room)`.
pub fn describe(node: &NodeInfo) -> String {
    describe_parts(&display_name(node), node.id.0, &node.loc)
}

/// `"name" (node <id>, location)`, without the location when it has none.
pub(super) fn describe_parts(name: &str, id: u16, location: &str) -> String {
    if location.is_empty() {
        format!("\"{name}\" (node {id})")
    } else {
        format!("\"{name}\" (node {id}, {location})")
    }
}
