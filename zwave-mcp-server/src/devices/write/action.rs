//! What can be asked of a device ([`Action`] with its arguments, [`Request`]), the owner's
//! limits on it ([`Limits`]), and every way it can be refused ([`ActionError`]).

use std::fmt;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::devices::DeviceKind;

/// What to do with a device.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Action {
    /// Switch on (a dimmer returns to its last level).
    On,
    /// Switch off.
    Off,
    /// Set a dimmer's level (needs `level`).
    Dim,
    /// Lock a lock.
    Lock,
    /// Unlock a lock (sensitive).
    Unlock,
    /// Open a blind, shutter or garage door (a garage door's is sensitive).
    Open,
    /// Close a blind, shutter or garage door.
    Close,
    /// Stop a blind or shutter where it is.
    Stop,
    /// Move a blind to a position (needs `level`: 0 closed, 100 open).
    SetPosition,
    /// Set a thermostat's setpoint (needs `temperature`).
    SetTemperature,
    /// Set a thermostat's mode (needs `mode`).
    SetMode,
    /// Sound a siren or chime (`tone` optional).
    Sound,
    /// Silence a siren (sensitive).
    Silence,
    /// Set a colour light's colour (needs `color`).
    SetColor,
}

impl Action {
    /// Every action, in the order the tool's schema lists them.
    pub const ALL: [Self; 14] = [
        Self::On,
        Self::Off,
        Self::Dim,
        Self::Lock,
        Self::Unlock,
        Self::Open,
        Self::Close,
        Self::Stop,
        Self::SetPosition,
        Self::SetTemperature,
        Self::SetMode,
        Self::Sound,
        Self::Silence,
        Self::SetColor,
    ];

    /// The action's name in the tool's arguments: "on", "set_temperature".
    pub fn as_str(self) -> &'static str {
        match self {
            Self::On => "on",
            Self::Off => "off",
            Self::Dim => "dim",
            Self::Lock => "lock",
            Self::Unlock => "unlock",
            Self::Open => "open",
            Self::Close => "close",
            Self::Stop => "stop",
            Self::SetPosition => "set_position",
            Self::SetTemperature => "set_temperature",
            Self::SetMode => "set_mode",
            Self::Sound => "sound",
            Self::Silence => "silence",
            Self::SetColor => "set_color",
        }
    }

    /// The actions a device of `kind` may take (a cover's depend on its kind of motor:
    /// [`super::actions`]).
    pub fn of(kind: DeviceKind) -> &'static [Self] {
        match kind {
            DeviceKind::Switch => &[Self::On, Self::Off],
            DeviceKind::Dimmer => &[Self::On, Self::Off, Self::Dim],
            DeviceKind::ColorLight => &[Self::On, Self::Off, Self::Dim, Self::SetColor],
            DeviceKind::Lock => &[Self::Lock, Self::Unlock],
            DeviceKind::Thermostat => &[Self::SetTemperature, Self::SetMode],
            DeviceKind::Cover => &[
                Self::Open,
                Self::Close,
                Self::Stop,
                Self::SetPosition,
                Self::On,
                Self::Off,
                Self::Dim,
            ],
            DeviceKind::Siren => &[Self::Sound, Self::Silence],
            DeviceKind::Meter | DeviceKind::Sensor | DeviceKind::Other => &[],
        }
    }
}

// A flat string enum, inlined: LLM providers and small models handle `enum` far better than
// schemars' default `$ref` to a `oneOf` of documented constants.
impl JsonSchema for Action {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "Action".into()
    }

    fn inline_schema() -> bool {
        true
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        let names: Vec<&str> = Self::ALL.iter().map(|action| action.as_str()).collect();
        schemars::json_schema!({
            "type": "string",
            "enum": names,
        })
    }
}

impl fmt::Display for Action {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// An action with the arguments that go with it.
#[derive(Debug, Clone, PartialEq)]
pub struct Request {
    /// What to do.
    pub action: Action,
    /// Brightness or position, 0–100 (dim, set_position; with on/off, must agree).
    pub level: Option<i64>,
    /// Setpoint in the thermostat's unit (set_temperature).
    pub temperature: Option<f64>,
    /// Thermostat mode by name: "heat", "cool", "off", "auto" (set_mode).
    pub mode: Option<String>,
    /// Tone by name or number (sound); the device's default when absent.
    pub tone: Option<String>,
    /// Colour by name, `#rrggbb` or a white by kelvin (set_color).
    pub color: Option<String>,
}

impl Request {
    /// Just `action`, no arguments.
    pub fn new(action: Action) -> Self {
        Self {
            action,
            level: None,
            temperature: None,
            mode: None,
            tone: None,
            color: None,
        }
    }

    /// With a level.
    pub fn level(mut self, level: i64) -> Self {
        self.level = Some(level);
        self
    }
}

/// What the owner allows beyond what a device accepts.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Limits {
    /// The band a thermostat setpoint must be in, °C (`--thermostat-band`); a °F device's
    /// band is this one converted.
    pub setpoint_celsius: (f64, f64),
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            setpoint_celsius: (5.0, 30.0),
        }
    }
}

/// Actions as a refusal names them: `"lock" or "unlock"`.
pub fn action_list(actions: &[Action]) -> String {
    let names: Vec<String> = actions
        .iter()
        .map(|action| format!("\"{action}\""))
        .collect();
    match names.as_slice() {
        [] => String::new(),
        [one] => one.clone(),
        [rest @ .., last] => format!("{} or {last}", rest.join(", ")),
    }
}

/// Why an action cannot be carried out on a device.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum ActionError {
    /// Z-Wave JS is still interviewing the node (after a restart): its kind is not known yet.
    #[error(
        "{device} is still being interviewed by Z-Wave JS (it restarted or the device was just added), so what it is is not known yet: try again in a few seconds"
    )]
    Interviewing {
        /// The device, described.
        device: String,
    },
    /// The device does not take this action.
    #[error("{}", unsupported(device, *action, *kind, valid))]
    Unsupported {
        /// The device, described.
        device: String,
        /// The action asked for.
        action: Action,
        /// Its kind.
        kind: DeviceKind,
        /// The actions it takes, quoted: `"lock" or "unlock"`; empty when none.
        valid: String,
    },
    /// The device lacks the writeable value the action needs (a device that reports a class
    /// without letting it be set).
    #[error("{device} has no writeable {what}: action \"{action}\" cannot be carried out on it")]
    NoValue {
        /// The device, described.
        device: String,
        /// What is missing: "lock mode".
        what: &'static str,
        /// The action asked for.
        action: Action,
    },
    /// An action without the argument it needs.
    #[error("action \"{action}\" needs {what} for {device}")]
    Needs {
        /// The device, described.
        device: String,
        /// The action asked for.
        action: Action,
        /// The argument and what it takes: "a level from 0 to 100".
        what: String,
    },
    /// Level outside 0–100.
    #[error("level {level} is out of range for {device}: use 0 to 100 ({meaning})")]
    LevelOutOfRange {
        /// The device, described.
        device: String,
        /// The level asked for.
        level: i64,
        /// What 0 and 100 mean for it.
        meaning: &'static str,
    },
    /// A level that says the opposite of the action: "on" at 0, "off" at 40.
    #[error(
        "action \"{action}\" with level {level} contradicts itself for {device}: use \"off\" (or level 0) to switch off, \"on\" or \"dim\" with a level from 1 to 100 to switch on"
    )]
    Contradictory {
        /// The device, described.
        device: String,
        /// The action asked for.
        action: Action,
        /// The level given with it.
        level: i64,
    },
    /// A setpoint outside what the device or the owner allows.
    #[error(
        "{value} {unit} is outside what {device} may be set to: use {low} to {high} {unit} ({why})"
    )]
    SetpointOutOfRange {
        /// The device, described.
        device: String,
        /// The setpoint asked for.
        value: f64,
        /// Its unit.
        unit: String,
        /// The lowest allowed.
        low: f64,
        /// The highest allowed.
        high: f64,
        /// Whose limits: the device's, the owner's band, or both.
        why: String,
    },
    /// A setpoint in a unit this server does not know, or in none: the owner's band (°C)
    /// cannot be applied to it, and a guessed scale could let a temperature far outside it
    /// through.
    #[error("{}", unknown_unit(device, which, unit.as_deref(), band))]
    UnknownUnit {
        /// The device, described.
        device: String,
        /// "heating setpoint".
        which: &'static str,
        /// The unit it gives, if any.
        unit: Option<String>,
        /// The owner's band, °C: "5..30".
        band: String,
    },
    /// A name (mode, tone, colour) the device does not have.
    #[error(
        "{device} has no {what} \"{}\": {valid}",
        crate::network::text::echoed(given)
    )]
    UnknownName {
        /// The device, described.
        device: String,
        /// "mode", "tone".
        what: &'static str,
        /// The name given.
        given: String,
        /// What it has instead: "use one of \"off\", \"heat\"…".
        valid: String,
    },
    /// A setpoint for a thermostat whose mode does not say which one.
    #[error(
        "{device} is in {mode} mode, which has no single setpoint: set its mode to {modes} first, then the temperature"
    )]
    WhichSetpoint {
        /// The device, described.
        device: String,
        /// Its mode, in words.
        mode: String,
        /// The modes with one setpoint, quoted.
        modes: String,
    },
    /// The device is dead or unavailable.
    #[error(
        "{device} is offline (status {status}) and cannot be controlled until it is reachable again"
    )]
    Offline {
        /// The device, described.
        device: String,
        /// Its node status.
        status: String,
    },
}

fn unknown_unit(device: &str, which: &str, unit: Option<&str>, band: &str) -> String {
    let gives = match unit {
        Some(unit) => format!(
            "gives its {which} in \"{}\", a unit this server does not know (it knows °C and °F)",
            crate::network::text::echoed(unit)
        ),
        None => format!("does not say in which unit its {which} is"),
    };
    let later = if unit.is_none() {
        "; Z-Wave JS learns the unit when the device reports the setpoint"
    } else {
        ""
    };
    format!(
        "{device} {gives}, so a temperature cannot be checked against the owner's band (--thermostat-band {band} °C): nothing was sent{later}"
    )
}

fn unsupported(device: &str, action: Action, kind: DeviceKind, valid: &str) -> String {
    if valid.is_empty() {
        format!(
            "{device} is {} and takes no actions: it can only be read (get_device_sensor_data, get_device_status)",
            kind.with_article()
        )
    } else {
        format!(
            "{device} is {} and cannot take action \"{action}\": use {valid}",
            kind.with_article()
        )
    }
}
