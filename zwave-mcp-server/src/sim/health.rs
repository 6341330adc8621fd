//! The simulated gateway's side of the network's health: `pingNode` answered as the driver
//! does it (a node that stopped answering is marked dead, one that answers again alive, each
//! with its status topic), and the statistics each command counts, published as Z-Wave JS UI
//! does: the node's `lastActive` topic, and with "send events" on the
//! `_EVENTS/ZWAVE_GATEWAY-<name>/{node,controller}/statistics_updated` topics (captures, run 2).

use std::sync::Arc;

use serde_json::{Value, json};

use super::{
    change::find_node,
    state::{Sim, lock},
    statistics::{self, Outcome},
    topics,
};
use crate::network::{NodeId, now_ms};

/// `pingNode [nodeId]`: whether the node answered, as Z-Wave JS UI answers it.
pub(super) async fn ping(sim: &Arc<Sim>, args: &[Value]) -> Result<Value, String> {
    let node = args
        .first()
        .and_then(Value::as_u64)
        .and_then(|id| u16::try_from(id).ok())
        .map(NodeId)
        .filter(|id| find_node(&lock(&sim.nodes), *id).is_some())
        // Z-Wave JS UI calls `ping()` on the driver's node, which it does not have.
        .ok_or("Cannot read properties of undefined (reading 'ping')")?;
    // The real controller gives up on a node that does not answer after ~3 s
    // (`captures/ws/FACTS.md`); here at once, in the same order.
    let answers = !lock(&sim.knobs).unanswering.contains(&node);
    let outcome = if answers {
        Outcome::Acknowledged
    } else {
        Outcome::Lost
    };
    counted(sim, node, outcome).await;
    set_status(sim, node, if answers { "Alive" } else { "Dead" }).await;
    Ok(json!(answers))
}

/// A command to `node` ended as `outcome`: the statistics count it, and are published.
pub(super) async fn counted(sim: &Arc<Sim>, node: NodeId, outcome: Outcome) {
    let now = now_ms();
    let counted = {
        let mut nodes = lock(&sim.nodes);
        statistics::count(&mut nodes, node, outcome, statistics::ROUND_TRIP_MS, now)
            .and_then(|counts| Some((counts, find_node(&nodes, node)?.clone())))
    };
    let Some(((node_statistics, controller), found)) = counted else {
        return;
    };
    let options = &sim.options;
    if node_statistics.is_some() {
        let path = topics::node_topic(&options.prefix, options.topics, &found);
        let payload = json!({"time": now, "value": now});
        sim.publish(
            format!("{path}/lastActive"),
            payload.to_string().into_bytes(),
            false,
        )
        .await;
    }
    if options.send_events {
        let events = format!(
            "{}/_EVENTS/ZWAVE_GATEWAY-{}",
            options.prefix, options.gateway_name
        );
        let controller = json!({ "data": [controller] });
        sim.publish(
            format!("{events}/controller/statistics_updated"),
            controller.to_string().into_bytes(),
            false,
        )
        .await;
        // Z-Wave JS UI sends the node (without its values) and its statistics.
        if let Some(node_statistics) = node_statistics {
            let about = json!({"id": found["id"], "name": found["name"],
                "status": found["status"], "ready": found["ready"]});
            let event = json!({ "data": [about, node_statistics] });
            sim.publish(
                format!("{events}/node/statistics_updated"),
                event.to_string().into_bytes(),
                false,
            )
            .await;
        }
    }
}

/// `node` has `status` now: when that is a change, it is served from now on and its status
/// topic says so (`{"value": <available>, "status": …, "nodeId": …}`, retained).
pub(super) async fn set_status(sim: &Arc<Sim>, node: NodeId, status: &str) {
    let changed = {
        let mut nodes = lock(&sim.nodes);
        let Some(found) = nodes.iter_mut().find(|n| n["id"] == json!(node)) else {
            return;
        };
        if found["status"] == json!(status) {
            return;
        }
        found["status"] = json!(status);
        found["available"] = json!(status != "Dead");
        found.clone()
    };
    let options = &sim.options;
    let topic = format!(
        "{}/status",
        topics::node_topic(&options.prefix, options.topics, &changed)
    );
    let payload =
        json!({"time": now_ms(), "value": status != "Dead", "status": status, "nodeId": node});
    sim.publish(topic, payload.to_string().into_bytes(), true)
        .await;
}
