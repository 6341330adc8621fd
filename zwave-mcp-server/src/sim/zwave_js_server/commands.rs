//! The commands the simulated zwave-js-server answers (`set_api_schema`, `start_listening`,
//! `node.set_value`, `node.poll_value`, `node.ping`, `node.get_state`, `node.set_name`,
//! `node.set_location`), each answered as the real server does, in its order, with the
//! `statistics updated` events of the commands that reach a device.

use std::sync::Arc;

use serde_json::{Value, json};

use super::{
    shared::ServerSim,
    state::{node_state, state, statistics_updated, status_event, value_updated},
    upkeep,
};
use crate::network::{NodeId, now_ms};
use crate::sim::{
    change::{Change, find_node, set_value as set_home_value},
    device,
    node::value_key_of,
    state::lock,
    statistics::{self, Outcome},
};

/// What to send for one command, in order.
pub(super) fn answer(
    sim: &Arc<ServerSim>,
    connection: u64,
    text: &str,
    listening: &mut bool,
) -> Vec<String> {
    let Ok(command) = serde_json::from_str::<Value>(text) else {
        return Vec::new();
    };
    lock(&sim.received).push(command.clone());
    if command
        .get("command")
        .and_then(Value::as_str)
        .is_some_and(|name| lock(&sim.unanswered).contains(name))
    {
        return Vec::new();
    }
    let id = command.get("messageId").cloned().unwrap_or(Value::Null);
    let ok = |result: Value| {
        json!({"type": "result", "success": true, "messageId": id, "result": result}).to_string()
    };
    let failed = |code: &str, extra: Value| {
        let mut failure =
            json!({"type": "result", "success": false, "messageId": id, "errorCode": code});
        if let (Value::Object(fields), Value::Object(extra)) = (&mut failure, extra) {
            fields.extend(extra);
        }
        failure.to_string()
    };
    let node_id = command
        .get("nodeId")
        .and_then(Value::as_u64)
        .and_then(|node| u16::try_from(node).ok())
        .map(NodeId);
    let known = node_id.filter(|node| find_node(&lock(&sim.nodes), *node).is_some());
    let not_found = || {
        failed(
            "node_not_found",
            json!({"message": "", "args": {"nodeId": command.get("nodeId")}}),
        )
    };
    match command.get("command").and_then(Value::as_str).unwrap_or("") {
        "set_api_schema" => vec![ok(json!({}))],
        "start_listening" => {
            *listening = true;
            vec![ok(json!({"state": state(&lock(&sim.nodes))}))]
        }
        "node.set_value" => match known {
            Some(node) => set_value(sim, connection, node, &command, ok),
            None => vec![not_found()],
        },
        "node.poll_value" => match known {
            Some(node) => {
                let mut messages = counted(sim, connection, node, Outcome::Answered);
                messages.extend(poll_value(sim, connection, node, &command, ok));
                messages
            }
            None => vec![not_found()],
        },
        "node.ping" => match known {
            Some(node) => ping(sim, connection, node, ok),
            None => vec![not_found()],
        },
        "node.get_state" => match known {
            Some(node) => {
                let nodes = lock(&sim.nodes);
                let state = find_node(&nodes, node).map(node_state).unwrap_or_default();
                vec![ok(json!({ "state": state }))]
            }
            None => vec![not_found()],
        },
        "node.set_name" | "node.set_location" => match known {
            Some(node) => {
                let (field, key) = if command["command"] == "node.set_name" {
                    ("name", "name")
                } else {
                    ("loc", "location")
                };
                let mut nodes = lock(&sim.nodes);
                if let Some(found) = nodes.iter_mut().find(|n| n["id"] == json!(node)) {
                    found[field] = command.get(key).cloned().unwrap_or_default();
                }
                vec![ok(json!({}))]
            }
            None => vec![not_found()],
        },
        "node.refresh_info" => match known {
            Some(node) => upkeep::refresh_info(sim, node, ok),
            None => vec![not_found()],
        },
        "node.check_lifeline_health" => match known {
            Some(node) => {
                upkeep::check_lifeline_health(sim, connection, node, &command, id.clone())
            }
            None => vec![not_found()],
        },
        "node.abort_health_check" => match known {
            Some(node) => upkeep::abort_health_check(sim, node, ok),
            None => vec![not_found()],
        },
        "controller.rebuild_node_routes" => {
            upkeep::rebuild_node_routes(sim, connection, node_id, id.clone())
        }
        other => vec![failed(
            "unknown_command",
            json!({"args": {"command": other}}),
        )],
    }
}

/// `node.set_value`, answered in the real server's order.
fn set_value(
    sim: &Arc<ServerSim>,
    connection: u64,
    node: NodeId,
    command: &Value,
    ok: impl Fn(Value) -> String,
) -> Vec<String> {
    let key = value_key(command.get("valueId").unwrap_or(&Value::Null));
    let value = command.get("value").cloned().unwrap_or(Value::Null);
    let write = device::write(&sim.devices(), node, &key, value);
    let result = ok(json!({ "result": write.result }));
    let events: Vec<String> = write.optimistic.iter().map(value_updated).collect();
    // Every other listener gets the events; this connection gets them in their place.
    for event in &events {
        let _ = sim.events.send((connection, event.clone()));
    }
    let outcome = if write.result["status"] == json!(2) {
        Outcome::Lost
    } else {
        Outcome::Acknowledged
    };
    let mut messages = counted(sim, connection, node, outcome);
    let mut events = events.into_iter();
    if write.result["status"] == json!(255) {
        // The target value's event, the result, then the rest.
        messages.extend(events.next());
    }
    messages.push(result);
    messages.extend(events);
    for report in write.reports {
        let sim = Arc::clone(sim);
        tokio::spawn(async move {
            tokio::time::sleep(report.delay).await;
            for change in device::report(&sim.devices(), &report) {
                let _ = sim.events.send((0, value_updated(&change)));
            }
        });
    }
    messages
}

/// `node.ping`: the statistics, `{"responded": …}`, then the status the driver gives the
/// node when that changed (`alive`, `dead`): the recorded order.
fn ping(
    sim: &Arc<ServerSim>,
    connection: u64,
    node: NodeId,
    ok: impl Fn(Value) -> String,
) -> Vec<String> {
    // The real controller gives up on a node that does not answer after ~3 s; here at once.
    let responded = !lock(&sim.knobs).unanswering.contains(&node);
    let outcome = if responded {
        Outcome::Acknowledged
    } else {
        Outcome::Lost
    };
    let mut messages = counted(sim, connection, node, outcome);
    messages.push(ok(json!({ "responded": responded })));
    let (status, event) = if responded {
        ("Alive", "alive")
    } else {
        ("Dead", "dead")
    };
    let was = {
        let mut nodes = lock(&sim.nodes);
        nodes
            .iter_mut()
            .find(|found| found["id"] == json!(node))
            .filter(|found| found["status"] != json!(status))
            .map(|found| {
                found["available"] = json!(responded);
                std::mem::replace(&mut found["status"], json!(status))
            })
    };
    if let Some(was) = was {
        let event = status_event(node, event, &was);
        let _ = sim.events.send((connection, event.clone()));
        messages.push(event);
    }
    messages
}

/// A command to `node` ended as `outcome`: the statistics count it, and every listener gets
/// their `statistics updated` events (this connection before the command's result, as
/// recorded).
fn counted(sim: &ServerSim, connection: u64, node: NodeId, outcome: Outcome) -> Vec<String> {
    let counted = statistics::count(
        &mut lock(&sim.nodes),
        node,
        outcome,
        statistics::ROUND_TRIP_MS,
        now_ms(),
    );
    let Some((statistics, controller)) = counted else {
        return Vec::new();
    };
    let events = statistics_updated(node, statistics.as_ref(), &controller);
    for event in &events {
        let _ = sim.events.send((connection, event.clone()));
    }
    events
}

/// `node.poll_value`: the device answers with its value, which is also an event.
fn poll_value(
    sim: &Arc<ServerSim>,
    connection: u64,
    node: NodeId,
    command: &Value,
    ok: impl Fn(Value) -> String,
) -> Vec<String> {
    let key = value_key(command.get("valueId").unwrap_or(&Value::Null));
    let mut nodes = lock(&sim.nodes);
    let Some(found) = find_node(&nodes, node) else {
        return Vec::new();
    };
    let Some(value) = found["values"].get(&key) else {
        return vec![ok(json!({}))];
    };
    let cached = value.get("value").cloned().unwrap_or(Value::Null);
    // The device answers the Get with its own state, which the driver then caches.
    let answer = sim.devices().answer(node, &key, cached.clone());
    let change = if answer == cached {
        Some(Change {
            node: found.clone(),
            value: value.clone(),
            previous: cached,
        })
    } else {
        set_home_value(&mut nodes, node, &key, answer.clone())
    };
    let Some(change) = change else {
        return vec![ok(json!({ "value": answer }))];
    };
    let event = value_updated(&change);
    let _ = sim.events.send((connection, event.clone()));
    vec![ok(json!({ "value": answer })), event]
}

/// The key the simulator keeps a value under, of a command's `valueId`.
fn value_key(value_id: &Value) -> String {
    let mut id = value_id.clone();
    if id.get("endpoint").is_none() {
        id["endpoint"] = json!(0);
    }
    value_key_of(&id)
}
