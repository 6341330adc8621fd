//! The simulated gateway's side of the MQTT API: what it publishes (on connecting, on every
//! value change) and how it answers API requests (`getNodes`, `writeValue`, ...), as the
//! captures show. [`SimControl`](super::SimControl) is the handle that starts it and turns
//! its knobs.

use std::sync::{Arc, atomic::Ordering};

use rumqttc::QoS;

use serde_json::{Value, json};
use tracing::{debug, warn};

use super::{
    node::value_key_of,
    state::{PayloadType, ReceivedRequest, Sim, SimOptions, lock},
    topics,
};
use crate::gateway::now_ms;

pub(super) fn gateway_topic(options: &SimOptions) -> String {
    format!(
        "{}/_CLIENTS/ZWAVE_GATEWAY-{}",
        options.prefix, options.gateway_name
    )
}

pub(super) fn status_topic(options: &SimOptions) -> String {
    format!("{}/status", gateway_topic(options))
}

pub(super) fn find_node(nodes: &[Value], id: u16) -> Option<&Value> {
    nodes.iter().find(|node| node["id"] == json!(id))
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

/// Sets a value; returns the node and the updated value object to publish.
pub(super) fn set_value(
    nodes: &mut [Value],
    node: u16,
    key: &str,
    new: Value,
) -> Option<(Value, Value)> {
    let node_json = nodes.iter_mut().find(|n| n["id"] == json!(node))?;
    let slot = node_json.get_mut("values")?.get_mut(key)?;
    slot["value"] = new;
    slot["lastUpdate"] = json!(now_ms());
    let value = slot.clone();
    node_json["lastActive"] = json!(now_ms());
    Some((node_json.clone(), value))
}

pub(super) async fn publish(sim: &Sim, topic: String, payload: Vec<u8>, retain: bool) {
    match sim
        .client
        .publish(topic.clone(), QoS::AtLeastOnce, retain, payload)
        .await
    {
        Ok(()) => {
            sim.sent.fetch_add(1, Ordering::SeqCst);
        }
        Err(err) => warn!(%topic, error = %err, "simulated gateway cannot publish"),
    }
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
    let nodes = lock(&sim.nodes).clone();
    for node in nodes.iter().filter(|node| node["virtual"] != json!(true)) {
        let path = topics::node_topic(&options.prefix, options.topics, node);
        // getNodes leaves `available` out when it is true.
        let available = node["available"].as_bool().unwrap_or(true);
        let status = json!({"time": now, "value": available, "status": node["status"], "nodeId": node["id"]});
        publish(
            &sim,
            format!("{path}/status"),
            status.to_string().into_bytes(),
            true,
        )
        .await;
        if let Some(at) = node["lastActive"].as_i64() {
            publish(
                &sim,
                format!("{path}/lastActive"),
                json!({"time": now, "value": at}).to_string().into_bytes(),
                true,
            )
            .await;
        }
        for value in node["values"]
            .as_object()
            .into_iter()
            .flat_map(|values| values.values())
        {
            publish_value(&sim, node, value).await;
        }
    }
    sim.published.send_replace(true);
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
    let reply_topic = topic.trim_end_matches("/set").to_owned();
    publish(&sim, reply_topic, reply.to_string().into_bytes(), false).await;
}

/// The result of one API call, or the error message Z-Wave JS UI would give.
async fn answer(sim: &Arc<Sim>, api: &str, args: &[Value]) -> Result<Value, String> {
    match api {
        "getNodes" => Ok(Value::Array(lock(&sim.nodes).clone())),
        "getInfo" => Ok(json!({
            "homeid": 3_735_928_559_u32, "name": "demo", "controllerId": 1, "status": "scan done",
            "cntStatus": "Scan completed", "inclusionState": 0, "appVersion": "11.22.2",
            "zwaveVersion": "15.29.0", "serverVersion": "3.10.2",
        })),
        "writeValue" => Ok(write_value(sim, args).await),
        "pollValue" => {
            let (node, key) = address(args.first())
                .ok_or("Cannot read properties of undefined (reading 'pollValue')")?;
            let nodes = lock(&sim.nodes);
            let node = find_node(&nodes, node)
                .ok_or("Cannot read properties of undefined (reading 'pollValue')")?;
            if node["status"] == json!("Dead") {
                return Err("Failed to poll value: the node is dead (ZW0204)".into());
            }
            Ok(node["values"]
                .get(&key)
                .and_then(|v| v.get("value"))
                .cloned()
                .unwrap_or(Value::Null))
        }
        "refreshValues" | "refreshCCValues" | "refreshInfo" => Ok(Value::Null),
        "pingNode" => {
            let id = args
                .first()
                .and_then(Value::as_u64)
                .and_then(|id| u16::try_from(id).ok())
                .unwrap_or(0);
            let nodes = lock(&sim.nodes);
            Ok(json!(
                find_node(&nodes, id).is_some_and(|node| node["status"] != json!("Dead"))
            ))
        }
        _ => Err("Unknown API".into()),
    }
}

/// `(nodeId, value key)` of a valueId argument.
fn address(arg: Option<&Value>) -> Option<(u16, String)> {
    let arg = arg?;
    let node = u16::try_from(arg.get("nodeId")?.as_u64()?).ok()?;
    let mut id = arg.clone();
    if id.get("endpoint").is_none() {
        id["endpoint"] = json!(0);
    }
    Some((node, value_key_of(&id)))
}

/// `writeValue` as the real driver carries it out (`captures/confirm/FACTS.md`): zwave-js
/// updates its own cache the moment the Set is acknowledged and Z-Wave JS UI publishes that
/// optimistic value before the reply (a restore, 255, only as `targetValue`). Without
/// Supervision the reply is 254 and the device's own report follows the verification Get
/// (`ReportDelays`), showing its real state: the new one, or the old one when it is stuck.
/// With Supervision the reply is 255 and nothing follows.
async fn write_value(sim: &Arc<Sim>, args: &[Value]) -> Value {
    let fail = json!({"status": 2});
    let Some((node_id, key)) = address(args.first()) else {
        return fail;
    };
    let Some(new) = args.get(1).cloned() else {
        return fail;
    };
    let (forced, confirm, stuck, supervised) = {
        let knobs = lock(&sim.knobs);
        (
            knobs.write_status,
            knobs.confirm_writes,
            knobs.stuck.contains(&node_id),
            knobs.supervised.contains(&node_id) && !knobs.stuck.contains(&node_id),
        )
    };
    if let Some(status) = forced {
        return json!({"status": status});
    }
    let (target, current_key) = {
        let nodes = lock(&sim.nodes);
        let Some(node) = find_node(&nodes, node_id) else {
            return fail;
        };
        if node["status"] == json!("Dead") {
            return fail;
        }
        let Some(target) = node["values"].get(&key).cloned() else {
            return fail;
        };
        (
            target,
            node["values"].as_object().and_then(|values| {
                values
                    .iter()
                    .find(|(_, v)| v["targetValue"] == json!(key))
                    .map(|(k, _)| k.clone())
            }),
        )
    };
    let cc_name = target["commandClassName"]
        .as_str()
        .unwrap_or("Unknown")
        .to_owned();
    if target["writeable"] != json!(true) {
        return json!({"status": 4, "message": format!("The {cc_name} CC does not support setting values")});
    }
    let expected = target["type"].as_str().unwrap_or("any");
    let received = match &new {
        Value::Bool(_) => "boolean",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        _ => "object",
    };
    if (expected == "boolean" || expected == "number") && expected != received {
        let property = target["property"].as_str().unwrap_or("value");
        return json!({
            "status": 5,
            "message": format!("{cc_name}: \"{property}\" must be of type \"{expected}\", received \"{received}\" (ZW0322)"),
        });
    }
    // A multilevel switch stores 0–99; 255 restores the last non-zero level.
    let stored = if target["commandClass"] == json!(38) {
        let level = new.as_f64().unwrap_or(0.0);
        let level = if level >= 255.0 {
            let last = lock(&sim.last_levels).get(&node_id).copied().unwrap_or(99);
            f64::from(last)
        } else {
            level.clamp(0.0, 99.0)
        };
        json!(level.round() as u8)
    } else {
        new.clone()
    };
    let dimmer = target["commandClass"] == json!(38);
    let restore = dimmer && new.as_f64().is_some_and(|level| level >= 255.0);
    let before = current_key.as_ref().and_then(|current| {
        let nodes = lock(&sim.nodes);
        find_node(&nodes, node_id).and_then(|node| node["values"][current]["value"].clone().into())
    });
    // What the device really is after the Set.
    let real = if stuck {
        before.clone().unwrap_or(Value::Null)
    } else {
        stored.clone()
    };
    if dimmer
        && !stuck
        && let Some(level) = stored
            .as_u64()
            .and_then(|l| u8::try_from(l).ok())
            .filter(|l| *l > 0)
    {
        lock(&sim.last_levels).insert(node_id, level);
    }
    // zwave-js's optimistic update, published just before the API reply.
    let mut optimistic = Vec::new();
    {
        let mut nodes = lock(&sim.nodes);
        let echoed = if restore { new.clone() } else { stored.clone() };
        optimistic.extend(set_value(&mut nodes, node_id, &key, echoed));
        if !restore && let Some(current_key) = &current_key {
            optimistic.extend(set_value(&mut nodes, node_id, current_key, stored.clone()));
        }
        if supervised && target["commandClass"] == json!(37) {
            optimistic.extend(set_value(&mut nodes, node_id, POWER_KEY, watts_of(&real)));
        }
    }
    for (node, value) in &optimistic {
        publish_value(sim, node, value).await;
    }
    if supervised {
        return json!({"status": 255});
    }
    if confirm && let Some(current_key) = current_key {
        let delay = if dimmer {
            sim.options.reports.dimmer
        } else {
            sim.options.reports.switch
        };
        let generation = {
            let mut latest = lock(&sim.latest_write);
            let slot = latest.entry((node_id, current_key.clone())).or_default();
            *slot += 1;
            *slot
        };
        let sim = Arc::clone(sim);
        tokio::spawn(async move {
            tokio::time::sleep(delay).await;
            if lock(&sim.latest_write).get(&(node_id, current_key.clone())) != Some(&generation) {
                return;
            }
            let mut report = Vec::new();
            {
                let mut nodes = lock(&sim.nodes);
                // A plug's power comes first: whoever waits for the switch's report then reads
                // a state with the power that goes with it (tests compare whole summaries).
                if !dimmer {
                    report.extend(set_value(&mut nodes, node_id, POWER_KEY, watts_of(&real)));
                }
                report.extend(set_value(&mut nodes, node_id, &current_key, real.clone()));
                if dimmer {
                    report.extend(set_value(&mut nodes, node_id, &key, real.clone()));
                }
            }
            for (node, value) in &report {
                publish_value(&sim, node, value).await;
            }
        });
    }
    json!({"status": 254})
}

/// A plug's power meter value.
const POWER_KEY: &str = "50-0-value-66049";

/// What a plug draws in state `on`.
fn watts_of(on: &Value) -> Value {
    if on == &json!(true) {
        json!(42.5)
    } else {
        json!(0)
    }
}
