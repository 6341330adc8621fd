//! How the simulated devices take a write, whichever simulated server carries it (Z-Wave JS
//! UI's MQTT API or zwave-js-server's WebSocket API), as the real driver does
//! (`captures/confirm/FACTS.md`): zwave-js updates its own cache the moment the Set is
//! acknowledged (a restore, 255, only as `targetValue`); without Supervision the answer is
//! 254 and the device's own report follows the verification Get ([`ReportDelays`]), showing
//! its real state: the new one, or the old one when it is stuck. With Supervision the answer
//! is 255 and nothing follows. Each server sends these in its own order.

use std::{collections::HashMap, sync::Mutex, time::Duration};

use serde_json::{Value, json};

use super::{
    api::{find_node, set_value},
    state::{Knobs, ReportDelays, lock},
};

/// What a write works on: the home and the knobs of a simulated server.
pub(super) struct Devices<'a> {
    pub(super) nodes: &'a Mutex<Vec<Value>>,
    pub(super) knobs: &'a Mutex<Knobs>,
    /// Last non-zero level of each dimmer, restored by a write of 255.
    pub(super) last_levels: &'a Mutex<HashMap<u16, u8>>,
    /// The latest write to each value: the driver verifies only the latest Set of a value.
    pub(super) latest_write: &'a Mutex<HashMap<(u16, String), u64>>,
    pub(super) reports: ReportDelays,
}

/// One value changed: the node and the value object after the change, and what it was.
#[derive(Debug, Clone)]
pub(super) struct Change {
    pub(super) node: Value,
    pub(super) value: Value,
    pub(super) previous: Value,
}

/// What a write did at once, and what comes after.
#[derive(Debug)]
pub(super) struct Write {
    /// The answer: `{"status": …, "message"?: …}`.
    pub(super) result: Value,
    /// zwave-js's optimistic update, already applied: the target, then the current value.
    pub(super) optimistic: Vec<Change>,
    /// The device's own report, to apply after its delay.
    pub(super) report: Option<Report>,
}

/// The device's report of a write, due after `delay`.
#[derive(Debug, Clone)]
pub(super) struct Report {
    pub(super) delay: Duration,
    node: u16,
    key: String,
    current_key: String,
    generation: u64,
    real: Value,
    dimmer: bool,
}

impl Write {
    fn answered(result: Value) -> Self {
        Self {
            result,
            optimistic: Vec::new(),
            report: None,
        }
    }
}

/// Writes `new` to value `key` of node `node_id`.
pub(super) fn write(devices: &Devices<'_>, node_id: u16, key: &str, new: Value) -> Write {
    let fail = || Write::answered(json!({"status": 2}));
    let (forced, confirm, stuck, supervised) = {
        let knobs = lock(devices.knobs);
        (
            knobs.write_status,
            knobs.confirm_writes,
            knobs.stuck.contains(&node_id),
            knobs.supervised.contains(&node_id) && !knobs.stuck.contains(&node_id),
        )
    };
    if let Some(status) = forced {
        return Write::answered(json!({ "status": status }));
    }
    let (target, current_key) = {
        let nodes = lock(devices.nodes);
        let Some(node) = find_node(&nodes, node_id) else {
            return fail();
        };
        if node["status"] == json!("Dead") {
            return fail();
        }
        let Some(target) = node["values"].get(key).cloned() else {
            return fail();
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
    if let Some(refused) = refusal(&target, &new) {
        return Write::answered(refused);
    }
    let dimmer = target["commandClass"] == json!(38);
    // A multilevel switch stores 0–99; 255 restores the last non-zero level.
    let restore = dimmer && new.as_f64().is_some_and(|level| level >= 255.0);
    let stored = if dimmer {
        let level = new.as_f64().unwrap_or(0.0);
        let level = if restore {
            f64::from(
                lock(devices.last_levels)
                    .get(&node_id)
                    .copied()
                    .unwrap_or(99),
            )
        } else {
            level.clamp(0.0, 99.0)
        };
        json!(level.round() as u8)
    } else {
        new.clone()
    };
    let before = current_key.as_ref().and_then(|current| {
        let nodes = lock(devices.nodes);
        find_node(&nodes, node_id).and_then(|node| node["values"][current]["value"].clone().into())
    });
    // What the device really is after the Set.
    let real = if stuck {
        before.unwrap_or(Value::Null)
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
        lock(devices.last_levels).insert(node_id, level);
    }
    let mut optimistic = Vec::new();
    {
        let mut nodes = lock(devices.nodes);
        let echoed = if restore { new.clone() } else { stored.clone() };
        optimistic.extend(set_value(&mut nodes, node_id, key, echoed));
        if !restore && let Some(current_key) = &current_key {
            optimistic.extend(set_value(&mut nodes, node_id, current_key, stored.clone()));
        }
        if supervised && target["commandClass"] == json!(37) {
            optimistic.extend(set_value(&mut nodes, node_id, POWER_KEY, watts_of(&real)));
        }
    }
    if supervised {
        return Write {
            result: json!({"status": 255}),
            optimistic,
            report: None,
        };
    }
    let report = current_key.filter(|_| confirm).map(|current_key| {
        let generation = {
            let mut latest = lock(devices.latest_write);
            let slot = latest.entry((node_id, current_key.clone())).or_default();
            *slot += 1;
            *slot
        };
        Report {
            delay: if dimmer {
                devices.reports.dimmer
            } else {
                devices.reports.switch
            },
            node: node_id,
            key: key.to_owned(),
            current_key,
            generation,
            real,
            dimmer,
        }
    });
    Write {
        result: json!({"status": 254}),
        optimistic,
        report,
    }
}

/// The device reports after the verification Get: applied, unless a newer write of the same
/// value replaced it. A plug's power comes first: whoever waits for the switch's report then
/// reads a state with the power that goes with it.
pub(super) fn report(devices: &Devices<'_>, report: &Report) -> Vec<Change> {
    let Report {
        node,
        key,
        current_key,
        generation,
        real,
        dimmer,
        ..
    } = report;
    if lock(devices.latest_write).get(&(*node, current_key.clone())) != Some(generation) {
        return Vec::new();
    }
    let mut changes = Vec::new();
    let mut nodes = lock(devices.nodes);
    if !dimmer {
        changes.extend(set_value(&mut nodes, *node, POWER_KEY, watts_of(real)));
    }
    changes.extend(set_value(&mut nodes, *node, current_key, real.clone()));
    if *dimmer {
        changes.extend(set_value(&mut nodes, *node, key, real.clone()));
    }
    changes
}

/// Why the driver refuses `new` for `target` before sending anything, if it does.
fn refusal(target: &Value, new: &Value) -> Option<Value> {
    let cc_name = target["commandClassName"].as_str().unwrap_or("Unknown");
    if target["writeable"] != json!(true) {
        return Some(
            json!({"status": 4, "message": format!("The {cc_name} CC does not support setting values")}),
        );
    }
    let expected = target["type"].as_str().unwrap_or("any");
    let received = match new {
        Value::Bool(_) => "boolean",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        _ => "object",
    };
    if (expected == "boolean" || expected == "number") && expected != received {
        let property = target["property"].as_str().unwrap_or("value");
        return Some(json!({
            "status": 5,
            "message": format!("{cc_name}: \"{property}\" must be of type \"{expected}\", received \"{received}\" (ZW0322)"),
        }));
    }
    None
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
