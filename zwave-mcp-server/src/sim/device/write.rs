//! A write to a simulated device ([`write`]): answered at once when the knobs say so, refused
//! as the driver refuses it (not writeable, the wrong type), else carried out as the written
//! value's class behaves; and the device's report when its delay is over ([`report`]).

use serde_json::{Value, json};

use super::{
    class::{Class, class_of},
    devices::Devices,
    effects::{self, Asked},
    outcome::{Report, Write},
    switch::switch,
};
use crate::network::NodeId;
use crate::sim::{
    change::{Change, find_node, set_value},
    state::lock,
};

/// Writes `new` to value `key` of node `node_id`.
pub(in crate::sim) fn write(
    devices: &Devices<'_>,
    node_id: NodeId,
    key: &str,
    new: Value,
) -> Write {
    let fail = || Write::answered(json!({"status": 2}));
    let (forced, how) = devices.behaviour(node_id);
    if let Some(status) = forced {
        return Write::answered(json!({ "status": status }));
    }
    let (target, class) = {
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
        let class = class_of(node, key, &target);
        (target, class)
    };
    if let Some(refused) = refusal(&target, &new) {
        return Write::answered(refused);
    }
    let asked = Asked {
        devices,
        node: node_id,
        key,
        new,
        how,
    };
    let effects = match &class {
        Class::Switch { dimmer, state } => return switch(&asked, state, *dimmer),
        Class::Stored => effects::stored(&asked),
        Class::Colour => effects::colour(&asked),
        Class::Motor { state } => effects::motor(&asked, state),
        Class::Stop { state } => effects::stop(&asked, state),
        Class::DoorLock { state } => effects::door_lock(&asked, state),
        Class::Own { min, max } => effects::own(&asked, *min, *max),
        Class::Tone { default } => effects::tone(&asked, default),
        Class::Barrier { state } => effects::barrier(&asked, state),
    };
    effects::carry_out(&asked, &class.watch(key), effects)
}

/// The device reports after its delay: applied, unless a newer write of the same value
/// replaced it.
pub(in crate::sim) fn report(devices: &Devices<'_>, report: &Report) -> Vec<Change> {
    let Report {
        node,
        watch,
        generation,
        set,
        ..
    } = report;
    if lock(devices.latest_write).get(&(*node, watch.clone())) != Some(generation) {
        return Vec::new();
    }
    let mut nodes = lock(devices.nodes);
    set.iter()
        .filter_map(|(key, value)| set_value(&mut nodes, *node, key, value.clone()))
        .collect()
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
