//! The properties the server's input handling must keep whatever the gateway or a model sends.
//! Shared by the proptests (`properties/mod.rs`, run by `cargo test`) and the fuzz targets
//! (`fuzz/fuzz_targets/`, run by `scripts/fuzz.sh`): each returns what was violated.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use serde_json::Value;
use zwave_mcp_server::{
    devices::{self, Purpose, resolve},
    network::{
        NodeId, NodeInfo, parse_nodes,
        topics::{Route, TopicIndex, TopicStyle, ValueRef, node_path, value_path, value_tails},
    },
};

/// A `getNodes` reply is parsed without panicking, and every topic of the nodes it describes,
/// in every topic style, either routes back to exactly its own node and value, or is known
/// to be shared (and then routes nowhere): a value update never lands on another device.
pub fn get_nodes_reply(bytes: &[u8]) -> Result<(), String> {
    let Ok(mut reply) = serde_json::from_slice::<Value>(bytes) else {
        return Ok(());
    };
    // The API's whole reply (`{"success": true, "result": [...]}`) or its result alone.
    if let Some(result) = reply.get_mut("result") {
        reply = result.take();
    }
    let Ok(nodes) = parse_nodes(reply) else {
        return Ok(());
    };
    topics_route_home(&nodes)?;
    index_equals_every_topic_spelled_out(&nodes)
}

/// Every node's and value's topic routes to itself or is marked ambiguous.
pub fn topics_route_home(nodes: &BTreeMap<NodeId, NodeInfo>) -> Result<(), String> {
    let index = TopicIndex::build("zwave", nodes.values());
    for node in nodes.values() {
        for style in TopicStyle::ALL {
            let base = node_path("zwave", node, style);
            let status = format!("{base}/status");
            match index.route(&status) {
                Some(Route::NodeStatus(id)) if *id == node.id => {}
                None if index.is_ambiguous(&status) => {}
                other => {
                    return Err(format!(
                        "{status} routes to {other:?}, not node {}",
                        node.id
                    ));
                }
            }
            for value in node.values.values() {
                let topic = format!("{base}/{}", value_path(value, style.kind));
                match index.route(&topic) {
                    Some(Route::Value(found))
                        if found.node == node.id && *found.key == *value.key().as_str() => {}
                    None if index.is_ambiguous(&topic) => {}
                    other => {
                        return Err(format!(
                            "{topic} ({:?}) routes to {other:?}, not node {} value {}",
                            style.kind,
                            node.id,
                            value.key()
                        ));
                    }
                }
            }
        }
    }
    Ok(())
}

/// The two-level index answers exactly as a map of every topic spelled out would: every
/// pairing of a node path (every style) and a tail routes to its one meaning, a topic with
/// several meanings routes nowhere and is listed with its nodes, and nothing else routes.
pub fn index_equals_every_topic_spelled_out(
    nodes: &BTreeMap<NodeId, NodeInfo>,
) -> Result<(), String> {
    let index = TopicIndex::build("zwave", nodes.values());
    let mut spelled: HashMap<String, Vec<Route>> = HashMap::new();
    for node in nodes.values() {
        let mut tails = vec![
            ("status".to_owned(), Route::NodeStatus(node.id)),
            ("lastActive".to_owned(), Route::NodeLastActive(node.id)),
        ];
        for value in node.values.values() {
            let route = Route::Value(ValueRef {
                node: node.id,
                key: value.key().as_str().into(),
            });
            tails.extend(value_tails(value).into_iter().map(|t| (t, route.clone())));
        }
        for style in TopicStyle::ALL {
            let path = node_path("zwave", node, style);
            for (tail, route) in &tails {
                let routes = spelled.entry(format!("{path}/{tail}")).or_default();
                if !routes.contains(route) {
                    routes.push(route.clone());
                }
            }
        }
    }
    let mut ambiguous = 0;
    for (topic, routes) in &spelled {
        if let [route] = routes.as_slice() {
            if index.route(topic) != Some(route) || index.is_ambiguous(topic) {
                return Err(format!(
                    "{topic} means only {route:?}, the index says {:?}",
                    index.route(topic)
                ));
            }
        } else {
            ambiguous += 1;
            let sharing: BTreeSet<NodeId> = routes.iter().map(Route::node).collect();
            if index.route(topic).is_some()
                || !index.is_ambiguous(topic)
                || index.ambiguous().get(topic) != Some(&sharing)
            {
                return Err(format!(
                    "{topic} means {routes:?}, the index routes it to {:?} and lists {:?}",
                    index.route(topic),
                    index.ambiguous().get(topic)
                ));
            }
        }
        let longer = format!("{topic}/more");
        if !spelled.contains_key(&longer) && index.route(&longer).is_some() {
            return Err(format!("{longer} is no topic, yet it routes"));
        }
    }
    if index.ambiguous().len() != ambiguous {
        return Err(format!(
            "{ambiguous} topics have several meanings, the index lists {}: {:?}",
            index.ambiguous().len(),
            index.ambiguous().keys().collect::<Vec<_>>()
        ));
    }
    Ok(())
}

/// Any payload on a value or status topic decodes to something or nothing, never a panic.
pub fn payloads(bytes: &[u8]) -> Result<(), String> {
    use zwave_mcp_server::network::topics::{
        decode_epoch_ms, decode_flag, decode_node_status, decode_value,
    };
    let _ = (
        decode_value(bytes),
        decode_node_status(bytes),
        decode_flag(bytes),
        decode_epoch_ms(bytes),
    );
    Ok(())
}

/// Whatever name a model gives, resolution never panics; a name good enough to switch a
/// device names the same device when read, so a write can never reach a device other than
/// the one a read of the same name shows.
pub fn device_name(nodes: &BTreeMap<NodeId, NodeInfo>, query: &str) -> Result<(), String> {
    let devices: Vec<&NodeInfo> = nodes.values().filter(|n| devices::is_device(n)).collect();
    let control = resolve(&devices, query, Purpose::Control);
    let read = resolve(&devices, query, Purpose::Read);
    if let Ok(target) = control {
        match read {
            Ok(shown) if shown.id == target.id => {}
            other => {
                return Err(format!(
                    "{query:?} switches node {} but reads as {:?}",
                    target.id,
                    other.map(|n| n.id)
                ));
            }
        }
    }
    Ok(())
}
