//! [`DeviceKind`]: what a device is, from the command classes it supports (never from its
//! name), and the command classes this crate reads.

use schemars::JsonSchema;
use serde::Serialize;

use crate::network::{NodeInfo, ValueInfo};

/// Command classes this module reads.
pub(crate) mod cc {
    pub const BINARY_SWITCH: u16 = 37;
    pub const MULTILEVEL_SWITCH: u16 = 38;
    pub const BINARY_SENSOR: u16 = 48;
    pub const MULTILEVEL_SENSOR: u16 = 49;
    pub const METER: u16 = 50;
    pub const COLOR_SWITCH: u16 = 51;
    pub const THERMOSTAT_MODE: u16 = 64;
    pub const THERMOSTAT_OPERATING_STATE: u16 = 66;
    pub const THERMOSTAT_SETPOINT: u16 = 67;
    pub const THERMOSTAT_FAN_MODE: u16 = 68;
    pub const DOOR_LOCK: u16 = 98;
    pub const CENTRAL_SCENE: u16 = 91;
    pub const BARRIER_OPERATOR: u16 = 102;
    pub const WINDOW_COVERING: u16 = 106;
    pub const NOTIFICATION: u16 = 113;
    pub const LOCK: u16 = 118;
    pub const SOUND_SWITCH: u16 = 121;
    pub const BATTERY: u16 = 128;
}

/// What a device is, from the command classes it supports.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum DeviceKind {
    /// Door lock (Door Lock or Lock command class): lock, unlock (sensitive).
    Lock,
    /// Thermostat (Thermostat Mode or Setpoint): set_mode, set_temperature.
    Thermostat,
    /// Blind, shutter or garage door (Window Covering, Barrier Operator, or a motor's
    /// Multilevel Switch with Open/Close): open, close, stop, set_position; a garage door
    /// only opens (sensitive) and closes.
    Cover,
    /// Colour light (Color Switch with a Multilevel Switch): on, off, dim, set_color.
    ColorLight,
    /// Siren or chime (Sound Switch): sound (sensitive over another tone), silence
    /// (sensitive).
    Siren,
    /// Dimmable light or motor (Multilevel Switch): on, off, dim.
    Dimmer,
    /// On/off switch or plug (Binary Switch): on, off.
    Switch,
    /// Energy meter without a switch.
    Meter,
    /// Sensor (temperature, humidity, motion, ..., a scene remote's buttons): read only.
    Sensor,
    /// Anything else.
    Other,
}

impl DeviceKind {
    /// Classifies a node.
    pub fn of(node: &NodeInfo) -> Self {
        let has = |cc: u16, property: &str| find_value(node, cc, property).is_some();
        let has_cc = |cc: u16| node.values.values().any(|v| v.command_class == cc);
        if has_cc(cc::DOOR_LOCK) || has_cc(cc::LOCK) {
            Self::Lock
        } else if has_cc(cc::THERMOSTAT_MODE) || has_cc(cc::THERMOSTAT_SETPOINT) {
            Self::Thermostat
        } else if has_cc(cc::WINDOW_COVERING)
            || has_cc(cc::BARRIER_OPERATOR)
            // A motor: its level-change buttons are Open/Close, not Up/Down.
            || (has(cc::MULTILEVEL_SWITCH, "targetValue") && has(cc::MULTILEVEL_SWITCH, "Open"))
        {
            Self::Cover
        } else if has_cc(cc::SOUND_SWITCH) {
            Self::Siren
        } else if has(cc::MULTILEVEL_SWITCH, "targetValue") && has_cc(cc::COLOR_SWITCH) {
            Self::ColorLight
        } else if has(cc::MULTILEVEL_SWITCH, "targetValue") {
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
                cc::BINARY_SENSOR
                    | cc::MULTILEVEL_SENSOR
                    | cc::NOTIFICATION
                    | cc::BATTERY
                    | cc::CENTRAL_SCENE
            )
        }) {
            Self::Sensor
        } else {
            Self::Other
        }
    }

    /// What it is, in a sentence: "a switch", "a device of a kind this server does not switch".
    pub fn with_article(self) -> &'static str {
        match self {
            Self::Lock => "a lock",
            Self::Thermostat => "a thermostat",
            Self::Cover => "a cover (a blind, shutter or garage door)",
            Self::ColorLight => "a colour light",
            Self::Siren => "a siren",
            Self::Dimmer => "a dimmer",
            Self::Switch => "a switch",
            Self::Meter => "a meter",
            Self::Sensor => "a sensor",
            Self::Other => "a device of a kind this server does not switch",
        }
    }

    /// The kind as a word: "switch", "other".
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Lock => "lock",
            Self::Thermostat => "thermostat",
            Self::Cover => "cover",
            Self::ColorLight => "colour light",
            Self::Siren => "siren",
            Self::Dimmer => "dimmer",
            Self::Switch => "switch",
            Self::Meter => "meter",
            Self::Sensor => "sensor",
            Self::Other => "other",
        }
    }
}

/// The value `property` of command class `cc`, preferring the root endpoint.
pub fn find_value<'a>(node: &'a NodeInfo, cc: u16, property: &str) -> Option<&'a ValueInfo> {
    node.values
        .values()
        .filter(|v| v.command_class == cc && is_prop(v, property))
        .min_by_key(|v| v.endpoint)
}

fn is_prop(value: &ValueInfo, property: &str) -> bool {
    matches!(&value.property, crate::network::Property::Name(name) if name == property)
}

#[cfg(test)]
mod tests {
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
        // The device classes of the lab's mock network, as the real Z-Wave JS UI reports them.
        let lab = crate::network::parse_nodes(
            serde_json::from_str::<serde_json::Value>(&test_support::fixture_text(
                "zwave-js-ui/classes/getNodes.full.json",
            ))
            .map(|reply| reply.get("result").cloned().unwrap_or(reply))
            .unwrap(),
        )
        .unwrap();
        let kinds: Vec<(u16, DeviceKind)> = lab
            .values()
            .filter(|node| crate::devices::is_device(node))
            .map(|node| (node.id.0, DeviceKind::of(node)))
            .collect();
        assert_eq!(
            kinds,
            [
                (2, DeviceKind::Switch),
                (3, DeviceKind::Dimmer),
                (4, DeviceKind::Sensor),
                (5, DeviceKind::Lock),
                (6, DeviceKind::Thermostat),
                (7, DeviceKind::Cover),
                (8, DeviceKind::ColorLight),
                (9, DeviceKind::Siren),
                (10, DeviceKind::Sensor),
                (11, DeviceKind::Switch),
                (12, DeviceKind::Dimmer),
                (13, DeviceKind::Switch),
                (14, DeviceKind::Dimmer),
                (15, DeviceKind::Cover),
            ]
        );
        // A dimmer that also reports a binary switch is a dimmer (it can do more).
        let mut both = demo(3);
        both.values.extend(demo(2).values);
        assert_eq!(DeviceKind::of(&both), DeviceKind::Dimmer);
    }
}
