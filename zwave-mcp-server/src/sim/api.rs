//! The simulated gateway's side of the MQTT API: what it publishes (on connecting, on every
//! value change) and how it answers API requests (`getNodes`, `writeValue`, ...), as the
//! captures show. [`SimGateway`](super::SimGateway) is the handle that starts it and turns
//! its knobs.

use std::sync::Arc;

use serde_json::{Value, json};
use tracing::debug;

use super::{
    change::{find_node, set_value},
    device, health,
    node::value_key_of,
    state::{PayloadType, ReceivedRequest, Sim, SimOptions, lock},
    statistics::Outcome,
    topics, upkeep,
};
use crate::network::{NodeId, now_ms};

pub(super) fn gateway_topic(options: &SimOptions) -> String {
    format!(
        "{}/_CLIENTS/ZWAVE_GATEWAY-{}",
        options.prefix, options.gateway_name
    )
}

pub(super) fn status_topic(options: &SimOptions) -> String {
    format!("{}/status", gateway_topic(options))
}

pub(super) fn value_topic(options: &SimOptions, node: &Value, value: &Value) -> String {
    topics::value_topic(&options.prefix, options.topics, node, value)
}

pub(super) fn value_payload(options: &SimOptions, value: &Value) -> Vec<u8> {
    let now = now_ms();
    match options.payload {
        PayloadType::TimeValue => {
            let mut payload = json!({"time": now});
            if let Some(current) = value.get("value") {
                payload["value"] = current.clone();
            }
            payload.to_string().into_bytes()
        }
        PayloadType::EntireValueId => value.to_string().into_bytes(),
        PayloadType::Raw => match value.get("value") {
            Some(Value::String(text)) => text.clone().into_bytes(),
            Some(current) => current.to_string().into_bytes(),
            None => Vec::new(),
        },
    }
}

pub(super) async fn publish(sim: &Sim, topic: String, payload: Vec<u8>, retain: bool) {
    sim.publish(topic, payload, retain).await;
}

pub(super) async fn publish_value(sim: &Sim, node: &Value, value: &Value) {
    let topic = value_topic(&sim.options, node, value);
    publish(sim, topic, value_payload(&sim.options, value), true).await;
}

/// Publishes what Z-Wave JS UI publishes (retained) when it connects.
pub(super) async fn publish_everything(sim: Arc<Sim>) {
    let options = &sim.options;
    let now = now_ms();
    let gateway = gateway_topic(options);
    publish(
        &sim,
        format!("{gateway}/version"),
        json!({"value": "11.22.2", "time": now})
            .to_string()
            .into_bytes(),
        true,
    )
    .await;
    publish(
        &sim,
        format!("{gateway}/status"),
        json!({"value": true, "time": now}).to_string().into_bytes(),
        true,
    )
    .await;
    let ready = lock(&sim.knobs).driver_ready;
    publish(
        &sim,
        format!("{}/driver/status", options.prefix),
        ready.to_string().into_bytes(),
        true,
    )
    .await;
    // One node at a time, each as its messages: a copy of the whole home held while it is
    // published was the largest allocation of the demo's start.
    let ids: Vec<Value> = lock(&sim.nodes)
        .iter()
        .filter(|node| node["virtual"] != json!(true))
        .map(|node| node["id"].clone())
        .collect();
    for id in ids {
        let messages = {
            let nodes = lock(&sim.nodes);
            let Some(node) = nodes.iter().find(|node| node["id"] == id) else {
                continue;
            };
            node_messages(options, node, now)
        };
        for (topic, payload) in messages {
            publish(&sim, topic, payload, true).await;
        }
    }
    sim.published.send_replace(true);
}

/// What Z-Wave JS UI publishes (retained) about `node` when it connects: its status, when it
/// was last active, and each of its values.
fn node_messages(options: &SimOptions, node: &Value, now: i64) -> Vec<(String, Vec<u8>)> {
    let path = topics::node_topic(&options.prefix, options.topics, node);
    // getNodes leaves `available` out when it is true.
    let available = node["available"].as_bool().unwrap_or(true);
    let status =
        json!({"time": now, "value": available, "status": node["status"], "nodeId": node["id"]});
    let mut messages = vec![(format!("{path}/status"), status.to_string().into_bytes())];
    if let Some(at) = node["lastActive"].as_i64() {
        messages.push((
            format!("{path}/lastActive"),
            json!({"time": now, "value": at}).to_string().into_bytes(),
        ));
    }
    for value in node["values"]
        .as_object()
        .into_iter()
        .flat_map(|values| values.values())
    {
        messages.push((
            value_topic(options, node, value),
            value_payload(options, value),
        ));
    }
    messages
}

pub(super) async fn handle_request(sim: Arc<Sim>, topic: String, payload: Vec<u8>) {
    let Some(api) = topic
        .strip_prefix(&format!("{}/api/", gateway_topic(&sim.options)))
        .and_then(|rest| rest.strip_suffix("/set"))
        .map(str::to_owned)
    else {
        return;
    };
    let origin: Value = serde_json::from_slice(&payload).unwrap_or_else(|_| json!({}));
    lock(&sim.received).push(ReceivedRequest {
        at: std::time::Instant::now(),
        api: api.clone(),
        payload: origin.clone(),
    });
    let (silent, delay, driver_ready, refusal) = {
        let knobs = lock(&sim.knobs);
        (
            knobs.silent,
            knobs.delays.get(&api).copied(),
            knobs.driver_ready,
            knobs.refusals.get(&api).cloned(),
        )
    };
    if silent {
        debug!(%api, "simulated gateway stays silent");
        return;
    }
    if let Some(delay) = delay {
        tokio::time::sleep(delay).await;
    }
    let args = origin.get("args").cloned().unwrap_or(Value::Null);
    let reply_topic = topic.trim_end_matches("/set").to_owned();
    if api == "getNodes" && refusal.is_none() && driver_ready && args.is_array() {
        // The home is written out under its lock, never copied first: a copy of it was the
        // demo's largest allocation (a third of a MiB for the demo home).
        let reply = serde_json::to_vec(&NodesReply {
            args: &args,
            message: "Success zwave api call",
            origin: &origin,
            result: &lock(&sim.nodes),
            success: true,
        });
        if let Ok(reply) = reply {
            publish(&sim, reply_topic, reply, false).await;
            return;
        }
    }
    let reply = match &args {
        Value::Array(_) if let Some(message) = refusal => {
            json!({"success": false, "message": message, "args": args})
        }
        Value::Array(items) if driver_ready => match answer(&sim, &api, items).await {
            Ok(result) => {
                let mut reply =
                    json!({"success": true, "message": "Success zwave api call", "args": args});
                if !result.is_null() {
                    reply["result"] = result;
                }
                reply
            }
            Err(message) => json!({"success": false, "message": message, "args": args}),
        },
        Value::Array(_) => {
            json!({"success": false, "message": "Z-Wave client not connected", "args": args})
        }
        _ => json!({"success": false, "message": "Args must be an array"}),
    };
    let mut reply = reply;
    reply["origin"] = origin;
    publish(&sim, reply_topic, reply.to_string().into_bytes(), false).await;
}

/// A successful `getNodes` reply as [`handle_request`] builds the others (a JSON object's
/// members in key order: the same text), the home borrowed rather than copied.
#[derive(serde::Serialize)]
struct NodesReply<'a> {
    args: &'a Value,
    message: &'a str,
    origin: &'a Value,
    result: &'a [Value],
    success: bool,
}

/// The result of one API call, or the error message Z-Wave JS UI would give.
async fn answer(sim: &Arc<Sim>, api: &str, args: &[Value]) -> Result<Value, String> {
    if let Some(forced) = lock(&sim.knobs).forced.get(api).cloned() {
        return Ok(forced);
    }
    match api {
        "getNodes" => Ok(Value::Array(lock(&sim.nodes).clone())),
        "getInfo" => Ok(json!({
            "homeid": 3_735_928_559_u32, "name": "demo", "controllerId": 1, "status": "scan done",
            "cntStatus": "Scan completed", "inclusionState": 0, "appVersion": "11.22.2",
            "zwaveVersion": "15.29.0", "serverVersion": "3.10.2",
        })),
        "writeValue" => Ok(write_value(sim, args).await),
        "pollValue" => {
            let polled = poll_value(sim, args)?;
            if let Some((node, _)) = address(args.first()) {
                health::counted(sim, node, Outcome::Answered).await;
            }
            Ok(polled)
        }
        "refreshValues" | "refreshCCValues" => Ok(Value::Null),
        "pingNode" => health::ping(sim, args).await,
        "refreshInfo" => upkeep::gateway::refresh_info(sim, args).await,
        "checkLifelineHealth" => upkeep::gateway::check_lifeline_health(sim, args).await,
        "abortHealthCheck" => upkeep::gateway::abort_health_check(sim, args),
        "rebuildNodeRoutes" => upkeep::gateway::rebuild_node_routes(sim, args).await,
        _ => Err("Unknown API".into()),
    }
}

/// `pollValue [valueId]`: the device's answer to a Get, which the driver then caches.
fn poll_value(sim: &Arc<Sim>, args: &[Value]) -> Result<Value, String> {
    let (node, key) =
        address(args.first()).ok_or("Cannot read properties of undefined (reading 'pollValue')")?;
    let nodes = lock(&sim.nodes);
    let node = find_node(&nodes, node)
        .ok_or("Cannot read properties of undefined (reading 'pollValue')")?;
    if node["status"] == json!("Dead") {
        return Err("Failed to poll value: the node is dead (ZW0204)".into());
    }
    let cached = node["values"]
        .get(&key)
        .and_then(|v| v.get("value"))
        .cloned()
        .unwrap_or(Value::Null);
    let Some(id) = node["id"]
        .as_u64()
        .and_then(|id| u16::try_from(id).ok())
        .map(NodeId)
    else {
        return Ok(cached);
    };
    // The device answers the Get with its own state, which the driver then caches.
    let answer = devices(sim).answer(id, &key, cached.clone());
    if answer != cached {
        drop(nodes);
        set_value(&mut lock(&sim.nodes), id, &key, answer.clone());
    }
    Ok(answer)
}

/// `(nodeId, value key)` of a valueId argument.
fn address(arg: Option<&Value>) -> Option<(NodeId, String)> {
    let arg = arg?;
    let node = NodeId(u16::try_from(arg.get("nodeId")?.as_u64()?).ok()?);
    let mut id = arg.clone();
    if id.get("endpoint").is_none() {
        id["endpoint"] = json!(0);
    }
    Some((node, value_key_of(&id)))
}

/// `writeValue` as the real driver carries it out (`device`), in Z-Wave JS UI's order: the
/// optimistic update is published just before the API reply, the device's report after its
/// delay.
async fn write_value(sim: &Arc<Sim>, args: &[Value]) -> Value {
    let Some((node, key)) = address(args.first()) else {
        return json!({"status": 2});
    };
    let Some(new) = args.get(1).cloned() else {
        return json!({"status": 2});
    };
    let write = device::write(&devices(sim), node, &key, new);
    let outcome = if write.result["status"] == json!(2) {
        Outcome::Lost
    } else {
        Outcome::Acknowledged
    };
    health::counted(sim, node, outcome).await;
    for change in &write.optimistic {
        publish_value(sim, &change.node, &change.value).await;
    }
    for report in write.reports {
        let sim = Arc::clone(sim);
        tokio::spawn(async move {
            tokio::time::sleep(report.delay).await;
            let changes = device::report(&devices(&sim), &report);
            for change in &changes {
                publish_value(&sim, &change.node, &change.value).await;
            }
        });
    }
    write.result
}

/// The simulated gateway's devices, for a write.
fn devices(sim: &Sim) -> device::Devices<'_> {
    device::Devices {
        nodes: &sim.nodes,
        knobs: &sim.knobs,
        last_levels: &sim.last_levels,
        latest_write: &sim.latest_write,
        truth: &sim.truth,
        reports: sim.options.reports,
    }
}
