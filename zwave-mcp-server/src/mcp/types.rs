//! What the four tools take (arguments, with their JSON Schemas) and give (structured results,
//! described by each tool's output schema).

use std::sync::Arc;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::stale::Staleness;
use crate::devices::{Action, DeviceKind, DeviceSummary, Reading};

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
    /// "on", "off", or "dim" (dim needs level).
    pub action: Action,
    /// Brightness for "dim", 0 to 100 percent (100 = full).
    #[serde(default)]
    #[schemars(range(min = 0, max = 100))]
    pub level: Option<i64>,
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
    /// Present when the broker, Z-Wave JS UI or its driver is down: these states are only the
    /// last known ones.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stale: Option<Staleness>,
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
    /// The value written to the device (true/false, or a level 0–99; 255 = last level).
    pub written: Value,
    /// writeValue status: 255 Success or 254 SuccessUnsupervised.
    pub status: i64,
    /// Whether the device reported the new state, after the write, within the confirmation wait.
    pub confirmed: bool,
    /// Whether the device was already in that state before the command.
    pub already: bool,
    /// The device's state after the command.
    pub state: String,
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
    /// Present when the broker, Z-Wave JS UI or its driver is down: these states are only the
    /// last known ones.
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
    /// Present when the broker, Z-Wave JS UI or its driver is down: these states are only the
    /// last known ones.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stale: Option<Staleness>,
}
