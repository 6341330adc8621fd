//! A device's state as people read it: its name, whether it answers, on/off, level, battery,
//! a one-line summary ([`DeviceSummary`]).

use schemars::JsonSchema;
use serde::Serialize;

use super::{
    classes,
    kind::{DeviceKind, cc, find_value},
    level::{level, percent_of_99},
    names::display_name,
    readings::readings,
};
use crate::network::{NodeInfo, NodeStatus};

/// Whether a node is a device people control or read (not the controller, not virtual).
pub fn is_device(node: &NodeInfo) -> bool {
    !node.is_controller_node && !node.is_virtual
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
        return "being interviewed by Z-Wave JS (state not known yet)".to_owned();
    }
    let mut parts = Vec::new();
    let kind = DeviceKind::of(node);
    match kind {
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
        _ => parts.extend(classes::state_words(node)),
    }
    for reading in readings(node, None) {
        if matches!(
            reading.command_class,
            cc::BINARY_SWITCH | cc::MULTILEVEL_SWITCH | cc::BATTERY
        ) || classes::covered(kind, &reading)
            || reading.value.is_null()
        {
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
