//! The Z-Wave home as people see it: devices, their kinds, states, readings and actions.
//!
//! Pure domain logic over the gateway's node data: no I/O here. Device kinds come from the
//! command classes a node has, not from its name.

mod action;
mod exposure;
mod names;
mod readings;

pub use action::{Action, ActionError, Expect, WritePlan, plan};
pub use exposure::{Exposure, Rule, RuleError, Rules};
pub use names::{Directory, MAX_NAME_CHARS, Purpose, ResolveError, describe, resolve};
pub use readings::{Reading, ago, readings};

use schemars::JsonSchema;
use serde::Serialize;

use crate::gateway::{NodeInfo, NodeStatus, ValueInfo};

/// Command classes this module reads.
pub(crate) mod cc {
    pub const BINARY_SWITCH: u16 = 37;
    pub const MULTILEVEL_SWITCH: u16 = 38;
    pub const BINARY_SENSOR: u16 = 48;
    pub const MULTILEVEL_SENSOR: u16 = 49;
    pub const METER: u16 = 50;
    pub const THERMOSTAT_SETPOINT: u16 = 67;
    pub const NOTIFICATION: u16 = 113;
    pub const BATTERY: u16 = 128;
}

/// What a device is, from the command classes it supports.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum DeviceKind {
    /// Dimmable light or motor (Multilevel Switch): on, off, dim.
    Dimmer,
    /// On/off switch or plug (Binary Switch): on, off.
    Switch,
    /// Energy meter without a switch.
    Meter,
    /// Sensor (temperature, humidity, motion, ...): read only.
    Sensor,
    /// Anything else.
    Other,
}

impl DeviceKind {
    /// Classifies a node.
    pub fn of(node: &NodeInfo) -> Self {
        let has = |cc: u16, property: &str| find_value(node, cc, property).is_some();
        if has(cc::MULTILEVEL_SWITCH, "targetValue") {
            Self::Dimmer
        } else if has(cc::BINARY_SWITCH, "targetValue") {
            Self::Switch
        } else if node
            .values
            .values()
            .any(|v| v.command_class == cc::METER && is_prop(v, "value"))
        {
            Self::Meter
        } else if node.values.values().any(|v| {
            matches!(
                v.command_class,
                cc::BINARY_SENSOR | cc::MULTILEVEL_SENSOR | cc::NOTIFICATION | cc::BATTERY
            )
        }) {
            Self::Sensor
        } else {
            Self::Other
        }
    }

    /// The kind as a word.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Dimmer => "dimmer",
            Self::Switch => "switch",
            Self::Meter => "meter",
            Self::Sensor => "sensor",
            Self::Other => "other",
        }
    }
}

/// Whether a node is a device people control or read (not the controller, not virtual).
pub fn is_device(node: &NodeInfo) -> bool {
    !node.is_controller_node && !node.is_virtual
}

/// The name people use: the node's name, or `Node <id>` when it has none.
pub fn display_name(node: &NodeInfo) -> String {
    let name = node.name.trim();
    if name.is_empty() {
        format!("Node {}", node.id)
    } else {
        name.to_owned()
    }
}

/// Whether the node can be talked to now.
pub fn is_online(node: &NodeInfo) -> bool {
    node.available && !node.failed && node.status != Some(NodeStatus::Dead)
}

/// The node status word: "Alive", "Dead", "Asleep", "Awake" or "Unknown".
pub fn status_word(node: &NodeInfo) -> &str {
    match &node.status {
        Some(status) if !status.as_str().is_empty() => status.as_str(),
        _ if node.failed => "Dead",
        _ => "Unknown",
    }
}

/// On/off state of a switch or dimmer: `Some(true)` when on.
pub fn is_on(node: &NodeInfo) -> Option<bool> {
    match DeviceKind::of(node) {
        DeviceKind::Switch => find_value(node, cc::BINARY_SWITCH, "currentValue")?
            .value
            .as_ref()?
            .as_bool(),
        DeviceKind::Dimmer => level(node).map(|level| level > 0),
        _ => None,
    }
}

/// Current level of a dimmer, 0–99.
pub fn level(node: &NodeInfo) -> Option<u8> {
    let value = find_value(node, cc::MULTILEVEL_SWITCH, "currentValue")?
        .value
        .as_ref()?
        .as_f64()?;
    Some(value.clamp(0.0, 99.0).round() as u8)
}

/// Battery level in percent, when the device has a battery.
pub fn battery(node: &NodeInfo) -> Option<u8> {
    let value = find_value(node, cc::BATTERY, "level")?
        .value
        .as_ref()?
        .as_f64()?;
    Some(value.clamp(0.0, 100.0).round() as u8)
}

/// A one-line summary of the device's state: `on, 12.5 W`, `40%`, `21.5 °C, 45 %, battery 87%`.
pub fn summary(node: &NodeInfo) -> String {
    if !is_online(node) {
        return format!("offline ({})", status_word(node));
    }
    if !node.ready && node.values.is_empty() {
        return "being interviewed by Z-Wave JS UI (state not known yet)".to_owned();
    }
    let mut parts = Vec::new();
    match DeviceKind::of(node) {
        DeviceKind::Switch => parts.push(match is_on(node) {
            Some(true) => "on".to_owned(),
            Some(false) => "off".to_owned(),
            None => "state unknown".to_owned(),
        }),
        DeviceKind::Dimmer => parts.push(match level(node) {
            Some(0) => "off".to_owned(),
            Some(level) => format!("on at {}%", percent_of_99(level)),
            None => "state unknown".to_owned(),
        }),
        _ => {}
    }
    for reading in readings(node, None) {
        if matches!(
            reading.command_class,
            cc::BINARY_SWITCH | cc::MULTILEVEL_SWITCH | cc::BATTERY
        ) {
            continue;
        }
        parts.push(reading.short());
    }
    if let Some(battery) = battery(node) {
        parts.push(format!("battery {battery}%"));
    }
    if parts.is_empty() {
        "no readings".to_owned()
    } else {
        parts.join(", ")
    }
}

/// A Z-Wave level (0–99, 99 = full) as the percentage people use (99 → 100).
pub fn percent_of_99(level: u8) -> u8 {
    if level >= 99 { 100 } else { level }
}

/// The value `property` of command class `cc`, preferring the root endpoint.
pub fn find_value<'a>(node: &'a NodeInfo, cc: u16, property: &str) -> Option<&'a ValueInfo> {
    node.values
        .values()
        .filter(|v| v.command_class == cc && is_prop(v, property))
        .min_by_key(|v| v.endpoint)
}

fn is_prop(value: &ValueInfo, property: &str) -> bool {
    matches!(&value.property, crate::gateway::Property::Name(name) if name == property)
}

/// Summary row of a device, as listed by `list_zwave_devices`.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct DeviceSummary {
    /// Name (`Node <id>` when unnamed).
    pub name: String,
    /// Z-Wave node id.
    pub node_id: u16,
    /// Location, empty when not set.
    pub location: String,
    /// Whether it can be reached now.
    pub online: bool,
    /// Node status: Alive, Dead, Asleep, Awake or Unknown.
    pub status: String,
    /// What it is.
    pub kind: DeviceKind,
    /// One-line state summary.
    pub state: String,
}

impl DeviceSummary {
    /// Summarizes a node.
    pub fn of(node: &NodeInfo) -> Self {
        Self {
            name: display_name(node),
            node_id: node.id.0,
            location: node.loc.clone(),
            online: is_online(node),
            status: status_word(node).to_owned(),
            kind: DeviceKind::of(node),
            state: summary(node),
        }
    }
}

#[cfg(test)]
mod kind_tests {
    use super::*;
    use crate::sim::home::demo_node as demo;

    #[test]
    fn a_device_is_what_its_command_classes_make_it() {
        assert_eq!(
            DeviceKind::of(&demo(2)),
            DeviceKind::Switch,
            "switch with meters"
        );
        assert_eq!(DeviceKind::of(&demo(3)), DeviceKind::Dimmer);
        assert_eq!(
            DeviceKind::of(&demo(4)),
            DeviceKind::Sensor,
            "multilevel + battery"
        );
        assert_eq!(
            DeviceKind::of(&demo(5)),
            DeviceKind::Sensor,
            "notification (motion)"
        );
        assert_eq!(
            DeviceKind::of(&demo(1)),
            DeviceKind::Other,
            "the controller"
        );
        // Without its switch values, the plug is a meter; without those, nothing known.
        let mut plug = demo(2);
        plug.values
            .retain(|_, value| value.command_class != cc::BINARY_SWITCH);
        assert_eq!(DeviceKind::of(&plug), DeviceKind::Meter);
        plug.values
            .retain(|_, value| value.command_class != cc::METER);
        assert_eq!(DeviceKind::of(&plug), DeviceKind::Other);
        // A dimmer that also reports a binary switch is a dimmer (it can do more).
        let mut both = demo(3);
        both.values.extend(demo(2).values);
        assert_eq!(DeviceKind::of(&both), DeviceKind::Dimmer);
    }
}
