//! The homes the simulated gateway serves: the small demo home, and generated homes of any size
//! up to a full Z-Wave network, as `getNodes` returns them.

use serde_json::{Map, Value, json};

use crate::network::NodeId;

use super::node::{BINARY_SWITCH, MULTILEVEL_SWITCH, Meter, Node, value_json, writeable};

/// The most nodes a Z-Wave network holds: node IDs 1–232, the controller included.
pub const MAX_NODES: u16 = 232;

/// The fewest nodes of a generated home: the controller and one device.
pub const MIN_NODES: u16 = 2;

/// The demo home's nodes as the network parses them, for unit tests of the domain
/// logic: 2 Switch One (switch + meters), 3 Living Room Light (dimmer), 4 Office Temperature
/// (sensor), 5 Hallway Motion, 6 an unnamed switch, 7 Garage Light (dead switch), 8 Front
/// Door Lock, 9 Thermostat, 10 Bedroom Blind, 11 Garage Door, 12 Reading Lamp (colour),
/// 13 Hallway Siren, 14 Back Door Sensor (door and leak), 15 Bedside Remote (scene buttons).
#[cfg(test)]
pub(crate) fn demo_node(id: u16) -> crate::network::NodeInfo {
    let nodes = crate::network::parse_nodes(Value::Array(demo_home(0))).unwrap_or_default();
    nodes
        .into_values()
        .find(|node| node.id == crate::network::NodeId(id))
        .unwrap_or_else(|| panic!("the demo home has no node {id}"))
}

/// The demo home's nodes, as Z-Wave JS UI's `getNodes` returns them.
///
/// Node 1 is the controller, 255 the virtual broadcast node; the devices are a switch with a
/// power meter, a dimmer, a temperature/humidity multisensor, a motion sensor, an unnamed plug,
/// a dead light, and the classes recorded from zwave-js's mock devices: a door lock, a
/// thermostat, a window-covering blind, a colour bulb, a siren and a door/leak sensor, with a
/// garage door and a scene remote built from zwave-js's Barrier Operator and Central Scene
/// values.
pub fn demo_home(now_ms: i64) -> Vec<Value> {
    let mut home = basic_home(now_ms);
    let broadcast = home.pop();
    home.extend(class_devices(now_ms));
    home.extend(broadcast);
    home
}

/// The demo home's first seven nodes (the controller, a switch with a power meter, a dimmer,
/// a multisensor, a motion sensor, an unnamed plug and a dead light) and the broadcast node:
/// the home of the tests about names, exposure and lists, written before the other classes.
pub fn basic_home(now_ms: i64) -> Vec<Value> {
    let recent = now_ms - 45_000;
    vec![
        controller(now_ms),
        Node::new(2, "Switch One", "Kitchen", recent)
            .binary_switch(false)
            .meter(kwh(12.34))
            .meter(watts(0))
            .build(),
        Node::new(3, "Living Room Light", "Living Room", recent)
            .dimmer(0)
            .build(),
        Node::new(4, "Office Temperature", "Office", recent)
            .sensor("Air temperature", "°C", json!(21.5), 1)
            .sensor("Humidity", "%", json!(45), 5)
            .battery(87)
            .build(),
        // A weak link: a faint signal, through two repeaters at 40 kbit/s.
        Node::new(5, "Hallway Motion", "Hallway", recent)
            .motion(0)
            .sensor("Illuminance", "Lux", json!(120), 3)
            .battery(64)
            .statistics(json!({"rssi": -89, "rtt": 212.4,
                "lwr": {"protocolDataRate": 2, "repeaters": [2, 3], "rssi": -80}}))
            .build(),
        Node::new(6, "", "", recent).binary_switch(true).build(),
        // Dead: its last route went through Switch One, and commands to it timed out.
        Node::new(7, "Garage Light", "Garage", now_ms - 3 * 86_400_000)
            .binary_switch(false)
            .dead()
            .statistics(
                json!({"commandsTX": 16, "commandsRX": 11, "timeoutResponse": 5,
                "lwr": {"protocolDataRate": 2, "repeaters": [2]}}),
            )
            .build(),
        broadcast(now_ms),
    ]
}

/// Nodes 8–15 of the demo home: a lock, a thermostat, a blind, a garage door, a colour bulb,
/// a siren, a door/leak sensor and a scene remote.
fn class_devices(now_ms: i64) -> Vec<Value> {
    let recent = now_ms - 45_000;
    vec![
        Node::new(8, "Front Door Lock", "Entrance", recent)
            .captured("lock")
            .showing("98-0-targetMode", json!(255))
            .showing("98-0-currentMode", json!(255))
            .showing("98-0-doorStatus", json!("closed"))
            .showing("98-0-boltStatus", json!("locked"))
            .showing("98-0-latchStatus", json!("closed"))
            .lock_state()
            .build(),
        Node::new(9, "Thermostat", "Living Room", recent)
            .captured("thermostat")
            .showing("64-0-mode", json!(1))
            .build(),
        Node::new(10, "Bedroom Blind", "Bedroom", recent)
            .captured("blind")
            .build(),
        Node::new(11, "Garage Door", "Garage", recent)
            .barrier(false)
            .build(),
        Node::new(12, "Reading Lamp", "Living Room", recent)
            .captured("color_bulb")
            .build(),
        // Silent: a siren's tone is known once it reported one (an unknown one may be an
        // alarm, and a new tone would end it).
        Node::new(13, "Hallway Siren", "Hallway", recent)
            .captured("siren")
            .reported("121-0-toneId", json!(0))
            .build(),
        Node::new(14, "Back Door Sensor", "Kitchen", recent)
            .captured("door_leak_sensor")
            .build(),
        Node::new(15, "Bedside Remote", "Bedroom", recent)
            .scene_buttons(2)
            .battery(90)
            .build(),
    ]
}

fn controller(now_ms: i64) -> Value {
    json!({
        "id": 1, "name": "", "loc": "", "ready": true, "available": true, "failed": false,
        "status": "Alive", "interviewStage": "Complete", "isControllerNode": true,
        "isListening": true, "lastActive": now_ms, "productLabel": "Demo controller",
        "manufacturer": "zwave-mcp-server", "deviceId": "0-0-0", "values": {},
        // Z-Wave JS UI lists the controller's own statistics on its node.
        "statistics": super::statistics::controller(),
    })
}

fn broadcast(now_ms: i64) -> Value {
    let mut values = Map::new();
    for (cc, kind) in [(BINARY_SWITCH, "boolean"), (MULTILEVEL_SWITCH, "number")] {
        values.insert(
            format!("{}-0-targetValue", cc.id),
            writeable(value_json(
                NodeId(255),
                now_ms,
                cc,
                "targetValue",
                kind,
                "Target value",
            )),
        );
    }
    json!({
        "id": 255, "name": "Broadcast", "virtual": true, "kind": "broadcast", "ready": true,
        "available": true, "failed": false, "values": values,
    })
}

/// A generated home of `nodes` nodes, the controller (node 1) included, so node IDs run from 1
/// to `nodes`; `nodes` is clamped to [`MIN_NODES`]..=[`MAX_NODES`] (the CLI rejects others).
///
/// Every ten devices are three plugs with a power meter, three dimmers, two multisensors
/// (temperature, humidity, light, motion, battery), a wall switch and an energy meter; each has
/// its identity values and configuration parameters up to about twenty values, like real
/// devices. Every fiftieth device is dead. Names (`"Kitchen Dimmer 12"`) and locations are
/// unique per node ID and the same on every run.
pub fn sized_home(nodes: u16, now_ms: i64) -> Vec<Value> {
    let nodes = nodes.clamp(MIN_NODES, MAX_NODES);
    let recent = now_ms - 45_000;
    let mut home = Vec::with_capacity(usize::from(nodes) + 1);
    home.push(controller(now_ms));
    home.extend((2..=nodes).map(|id| generated_device(id, recent)));
    home.push(broadcast(now_ms));
    home
}

const ROOMS: [&str; 16] = [
    "Kitchen",
    "Living Room",
    "Dining Room",
    "Hallway",
    "Office",
    "Bedroom",
    "Guest Room",
    "Bathroom",
    "Garage",
    "Basement",
    "Attic",
    "Laundry",
    "Porch",
    "Garden",
    "Nursery",
    "Study",
];

const SETTINGS: [&str; 12] = [
    "LED indicator",
    "Power-on state",
    "Auto-off timer",
    "Report threshold",
    "Report interval",
    "Minimum level",
    "Maximum level",
    "Ramp rate",
    "Wake-up interval",
    "Sensitivity",
    "Temperature offset",
    "Child lock",
];

/// How many values a generated device has (with its configuration parameters).
const VALUES_PER_DEVICE: usize = 20;

fn generated_device(id: u16, at: i64) -> Value {
    let device = usize::from(id - 2);
    let room = ROOMS[device % ROOMS.len()];
    let seed = i64::from(id);
    let kind = match device % 10 {
        0..=2 => "Plug",
        3..=5 => "Dimmer",
        6 | 7 => "Multisensor",
        8 => "Switch",
        _ => "Energy Meter",
    };
    let node = Node::new(id, &format!("{room} {kind} {id}"), room, at);
    let node = match kind {
        "Plug" => node
            .binary_switch(seed % 3 == 0)
            .meter(kwh(seed as f64 * 0.75))
            .meter(watts(if seed % 3 == 0 { seed * 4 } else { 0 }))
            .meter_reset(),
        "Dimmer" => node.dimmer(u8::try_from(seed * 7 % 100).unwrap_or(0).min(99)),
        "Multisensor" => node
            .sensor(
                "Air temperature",
                "°C",
                json!(18.0 + (seed % 10) as f64 * 0.5),
                1,
            )
            .sensor("Humidity", "%", json!(35 + seed % 30), 5)
            .sensor("Illuminance", "Lux", json!(seed * 13 % 900), 3)
            .motion(if seed % 4 == 0 { 8 } else { 0 })
            .battery(u8::try_from(40 + seed % 60).unwrap_or(100)),
        "Switch" => node.binary_switch(seed % 2 == 0),
        _ => node
            .meter(kwh(seed as f64 * 12.5))
            .meter(watts(seed * 11))
            .meter(Meter {
                key: 66_561,
                key_name: "Electric_V_Consumed",
                label: "Electric Consumption [V]",
                unit: "V",
                reading: json!(230),
            })
            .meter(Meter {
                key: 66_817,
                key_name: "Electric_A_Consumed",
                label: "Electric Consumption [A]",
                unit: "A",
                reading: json!(seed as f64 * 0.05),
            })
            .meter_reset(),
    };
    let mut node = node.identity(0x0086, 0x0003, id);
    for (param, label) in (1..).zip(SETTINGS) {
        if node.value_count() >= VALUES_PER_DEVICE {
            break;
        }
        node = node.config(param, label, seed % 2, 255);
    }
    if device % 50 == 49 {
        node = node.dead();
    }
    node.build()
}

fn kwh(reading: f64) -> Meter {
    Meter {
        key: 65_537,
        key_name: "Electric_kWh_Consumed",
        label: "Electric Consumption [kWh]",
        unit: "kWh",
        reading: json!(reading),
    }
}

fn watts(reading: i64) -> Meter {
    Meter {
        key: 66_049,
        key_name: "Electric_W_Consumed",
        label: "Electric Consumption [W]",
        unit: "W",
        reading: json!(reading),
    }
}

#[cfg(test)]
mod tests {
    use std::collections::{BTreeMap, HashSet};

    use super::*;
    use crate::{
        devices::{DeviceKind, is_online},
        network::nodes::parse_nodes,
    };

    #[test]
    fn a_full_network_has_232_nodes_of_every_kind_with_about_twenty_values_each() {
        let home = sized_home(MAX_NODES, 0);
        let nodes = parse_nodes(Value::Array(home)).expect("the generated home parses");
        let real: Vec<_> = nodes.values().filter(|node| node.id.0 != 255).collect();
        assert_eq!(real.len(), 232);
        assert_eq!(real.first().map(|node| node.id.0), Some(1));
        assert_eq!(real.last().map(|node| node.id.0), Some(232));

        let devices: Vec<_> = real.iter().filter(|node| node.id.0 != 1).collect();
        let names: HashSet<&str> = devices.iter().map(|node| node.name.as_str()).collect();
        assert_eq!(names.len(), devices.len(), "every name is unique");
        for node in &devices {
            assert!(
                (18..=22).contains(&node.values.len()),
                "node {} has {} values",
                node.id.0,
                node.values.len()
            );
        }
        let mut kinds = BTreeMap::new();
        for node in &devices {
            *kinds
                .entry(format!("{:?}", DeviceKind::of(node)))
                .or_insert(0) += 1;
        }
        let expected: BTreeMap<String, i32> = [
            ("Dimmer", 69),
            ("Meter", 23),
            ("Sensor", 46),
            ("Switch", 93),
        ]
        .into_iter()
        .map(|(kind, count)| (kind.to_owned(), count))
        .collect();
        assert_eq!(kinds, expected, "plugs and wall switches are switches");
        assert_eq!(devices.iter().filter(|node| !is_online(node)).count(), 4);
    }

    #[test]
    fn node_counts_outside_a_z_wave_network_are_clamped_and_runs_are_identical() {
        assert_eq!(
            sized_home(0, 0).len(),
            3,
            "controller, one device, broadcast"
        );
        assert_eq!(sized_home(u16::MAX, 0).len(), 233);
        assert_eq!(sized_home(50, 7), sized_home(50, 7));
    }
}
