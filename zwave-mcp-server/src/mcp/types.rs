//! What the five tools take (arguments, with their JSON Schemas) and give (structured results,
//! described by each tool's output schema).

use std::sync::Arc;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::stale::Staleness;
use crate::devices::{
    Action, DeviceKind, DeviceSummary, Reading, Request,
    health::{ControllerHealth, DeviceHealth},
};

/// Arguments of `list_zwave_devices`.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ListArgs {
    /// Also list devices that are offline or dead (default false).
    #[serde(default)]
    pub include_inactive: bool,
    /// Only devices whose name or location contains this text (case-insensitive).
    #[serde(default)]
    pub filter: Option<String>,
}

/// Arguments of `control_zwave_device`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ControlArgs {
    /// Device name as listed by list_zwave_devices (e.g. "Living Room Light").
    pub device_name: String,
    /// What to do. Switches: on, off. Dimmers: on, off, dim. Colour lights: on, off, dim,
    /// set_color. Locks: lock,
    /// unlock. Blinds, shutters and garage doors: open, close, stop, set_position.
    /// Thermostats: set_temperature, set_mode. Sirens and chimes: sound, silence.
    pub action: Action,
    /// For dim: brightness 0 to 100 percent (100 = full). For set_position: 0 (closed) to 100
    /// (open).
    #[serde(default)]
    #[schemars(range(min = 0, max = 100))]
    pub level: Option<i64>,
    /// For set_temperature: the setpoint in the thermostat's unit (°C or °F, as
    /// get_device_status shows it).
    #[serde(default)]
    pub temperature: Option<f64>,
    /// For set_mode: the thermostat mode by name, e.g. heat, cool, off, auto.
    #[serde(default)]
    pub mode: Option<String>,
    /// For sound: the tone by name or number; leave out for the device's default tone.
    #[serde(default)]
    pub tone: Option<String>,
    /// For set_color: a colour name (red, warm white, cool white, ...), #rrggbb, or a white
    /// by colour temperature (2700K to 6500K).
    #[serde(default)]
    pub color: Option<String>,
}

impl ControlArgs {
    /// The action with its arguments, as the device layer takes it.
    pub fn request(&self) -> Request {
        Request {
            action: self.action,
            level: self.level,
            temperature: self.temperature,
            mode: self.mode.clone(),
            tone: self.tone.clone(),
            color: self.color.clone(),
        }
    }
}

/// Arguments of `get_device_sensor_data`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SensorArgs {
    /// Device name as listed by list_zwave_devices (e.g. "Office Temperature").
    pub device_name: String,
    /// Ask the device for fresh values first (slower; battery devices may be asleep).
    #[serde(default)]
    pub refresh: bool,
}

/// Arguments of `get_device_status`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct DeviceArgs {
    /// Device name as listed by list_zwave_devices.
    pub device_name: String,
}

/// Result of `list_zwave_devices`.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct DeviceList {
    /// The devices, by node id.
    pub devices: Vec<Arc<DeviceSummary>>,
    /// Offline devices left out because includeInactive was false.
    pub hidden_inactive: usize,
    /// Commands their devices have not confirmed: not reported yet, or contradicted.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub commands: Vec<CommandNote>,
    /// Present when the way to the devices (the broker, Z-Wave JS UI or its driver, or
    /// zwave-js-server) is down: these states are only the last known ones.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stale: Option<Staleness>,
}

/// What became of the last command to a device its device has not confirmed.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CommandNote {
    /// Z-Wave node id.
    pub node_id: u16,
    /// In words: not reported yet, or contradicted by the device.
    pub note: String,
}

/// Result of `control_zwave_device`.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ControlOutcome {
    /// Device name.
    pub device: String,
    /// Z-Wave node id.
    pub node_id: u16,
    /// The action carried out.
    pub action: Action,
    /// The value written to the device (true/false; a level 0–99, 255 = last level; a lock
    /// mode 255/0; a setpoint; a thermostat mode or tone number).
    pub written: Value,
    /// writeValue status: 255 (supervised: the device did it), 254 (the device only
    /// acknowledged it), 1 (supervised, under way).
    pub status: i64,
    /// What became of the command by the time of the answer.
    pub outcome: Outcome,
    /// Whether the device itself confirmed the new state: a supervised Set succeeded, or the
    /// device reported the new state after the gateway acknowledged the command.
    pub confirmed: bool,
    /// Whether the device had last reported that state already before the command.
    pub already: bool,
    /// When the gateway acknowledged the command, epoch milliseconds.
    pub acknowledged_at_ms: i64,
    /// The device's state as it last reported it itself.
    pub state: String,
    /// A later command to the same device that superseded this one ("switch off").
    #[serde(skip_serializing_if = "Option::is_none")]
    pub superseded_by: Option<String>,
}

/// What became of a command.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Outcome {
    /// The device itself confirmed the new state.
    Confirmed,
    /// Sent and acknowledged; the device has not reported its new state yet.
    Acknowledged,
    /// The device reported, after the command, that it is still in another state.
    Contradicted,
    /// A later command to the same device came before this one was confirmed.
    Superseded,
}

/// Result of `get_device_sensor_data`.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SensorData {
    /// Device name.
    pub device: String,
    /// Z-Wave node id.
    pub node_id: u16,
    /// Location, empty when not set.
    pub location: String,
    /// Whether values were polled from the device first.
    pub refreshed: bool,
    /// Values that could not be polled, with the reason.
    pub refresh_errors: Vec<String>,
    /// Every reading of the device.
    pub readings: Vec<Reading>,
    /// Present when the way to the devices (the broker, Z-Wave JS UI or its driver, or
    /// zwave-js-server) is down: these states are only the last known ones.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stale: Option<Staleness>,
}

/// Result of `get_device_status`.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct DeviceStatus {
    /// Device name.
    pub device: String,
    /// Z-Wave node id.
    pub node_id: u16,
    /// Location, empty when not set.
    pub location: String,
    /// What it is.
    pub kind: DeviceKind,
    /// Whether it can be reached now.
    pub online: bool,
    /// Node status: Alive, Dead, Asleep, Awake or Unknown.
    pub node_status: String,
    /// Whether it is on (switches and dimmers).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub on: Option<bool>,
    /// Brightness in percent (dimmers).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub level: Option<u8>,
    /// Battery level in percent (battery devices).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub battery: Option<u8>,
    /// Last time the device was heard from (epoch milliseconds).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_active_ms: Option<i64>,
    /// Seconds since the device was last heard from.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_active_age_seconds: Option<u64>,
    /// One-line state summary.
    pub summary: String,
    /// What became of the last command to the device, while the device has not confirmed it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_command: Option<String>,
    /// Present when the way to the devices (the broker, Z-Wave JS UI or its driver, or
    /// zwave-js-server) is down: these states are only the last known ones.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stale: Option<Staleness>,
}

/// Arguments of `get_zwave_health`.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct HealthArgs {
    /// One device, as listed by list_zwave_devices; leave out for the whole network.
    #[serde(default)]
    pub device_name: Option<String>,
    /// With deviceName: ping the device first (changes nothing on it) and say whether and how
    /// fast it answered.
    #[serde(default)]
    pub ping: bool,
}

/// Result of `get_zwave_health`.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct NetworkHealth {
    /// The devices (or the one asked about): dead first, then the weakest.
    pub devices: Vec<DeviceHealth>,
    /// How many are dead, weak, unknown, asleep and fine.
    pub counts: HealthCounts,
    /// The controller's troubles, when it has any (whole network only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub controller: Option<ControllerHealth>,
    /// What the ping found (with ping).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ping: Option<PingOutcome>,
    /// Present when the way to the devices (the broker, Z-Wave JS UI or its driver, or
    /// zwave-js-server) is down: these states are only the last known ones.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stale: Option<Staleness>,
}

/// Devices by condition.
#[derive(Debug, Default, Serialize, JsonSchema)]
pub struct HealthCounts {
    /// Dead.
    pub dead: usize,
    /// Weak.
    pub weak: usize,
    /// Not known yet.
    pub unknown: usize,
    /// Asleep.
    pub asleep: usize,
    /// Fine.
    pub fine: usize,
}

/// What a ping found.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PingOutcome {
    /// Whether the device answered.
    pub answered: bool,
    /// How long the answer (or Z-Wave JS giving up) took, in ms.
    pub took_ms: f64,
    /// It was dead and answered: Z-Wave JS counts it alive again.
    pub alive_again: bool,
}
