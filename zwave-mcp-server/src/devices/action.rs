//! Turning "on", "off" and "dim to 40" into one value write, or a clear refusal.
//!
//! Binary switch: `targetValue` true/false. Dimmer: off = 0, on = 255 (the device restores its
//! last non-zero level), dim = level 0–100 with 100 clamped to 99 (Z-Wave's full level).
//! zwave-js does not range-check levels (100, 101 and -1 were all accepted), so we do.

use std::fmt;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::gateway::{NodeInfo, ValueId, ValueKey};

use super::{DeviceKind, cc, describe, find_value, is_online, status_word};

/// What to do with a switch or dimmer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Action {
    /// Switch on (a dimmer returns to its last level).
    On,
    /// Switch off.
    Off,
    /// Set a dimmer's level (needs `level`).
    Dim,
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
        schemars::json_schema!({
            "type": "string",
            "enum": ["on", "off", "dim"],
        })
    }
}

impl fmt::Display for Action {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::On => "on",
            Self::Off => "off",
            Self::Dim => "dim",
        })
    }
}

/// What the device's current value must become to confirm the write.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Expect {
    /// A binary switch state.
    Bool(bool),
    /// An exact dimmer level.
    Level(u8),
    /// Any level above zero (a dimmer switched on to its last level).
    NonZero,
}

impl Expect {
    /// Whether `value` confirms the write.
    pub fn accepts(self, value: &Value) -> bool {
        match self {
            Self::Bool(on) => value.as_bool() == Some(on),
            Self::Level(level) => value
                .as_f64()
                .is_some_and(|v| (v - f64::from(level)).abs() < 0.5),
            Self::NonZero => value.as_f64().is_some_and(|v| v > 0.0),
        }
    }
}

/// One value write that carries out an action.
#[derive(Debug, Clone, PartialEq)]
pub struct WritePlan {
    /// The writeable target value.
    pub target: ValueId,
    /// The value to write.
    pub value: Value,
    /// Key of the current value that confirms the write.
    pub current_key: ValueKey,
    /// What the current value must become.
    pub expect: Expect,
}

/// Why an action cannot be carried out on a device.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
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
    /// The device cannot be switched at all.
    #[error(
        "{device} is a {kind} and cannot be switched: only switches, dimmers, colour lights and motor blinds accept \"on\", \"off\" and \"dim\""
    )]
    NotControllable {
        /// The device, described.
        device: String,
        /// Its kind.
        kind: &'static str,
    },
    /// Dim on a binary switch.
    #[error("{device} is an on/off switch and cannot be dimmed: use action \"on\" or \"off\"")]
    NotDimmable {
        /// The device, described.
        device: String,
    },
    /// Dim without a level.
    #[error("action \"dim\" needs a level from 0 to 100 for {device}")]
    NeedsLevel {
        /// The device, described.
        device: String,
    },
    /// Level outside 0–100.
    #[error(
        "level {level} is out of range for {device}: use 0 to 100 (0 is off, 100 is full brightness)"
    )]
    LevelOutOfRange {
        /// The device, described.
        device: String,
        /// The level asked for.
        level: i64,
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

/// Plans the write for `action` on `node`.
///
/// A level given with "on" on a dimmer dims to that level; "on" at level 0 and "off" at a
/// level above 0 are refused rather than guessed at (either could be the slip).
///
/// # Errors
/// [`ActionError`] when the device cannot do it, is offline, or the level is missing or invalid.
pub fn plan(node: &NodeInfo, action: Action, level: Option<i64>) -> Result<WritePlan, ActionError> {
    let device = describe(node);
    if !node.ready && node.values.is_empty() {
        return Err(ActionError::Interviewing { device });
    }
    let kind = DeviceKind::of(node);
    let switch_cc = match kind {
        // A colour light dims as any dimmer; a motor's Multilevel Switch moves it (0 closed,
        // 99 open), as before these kinds were told apart.
        DeviceKind::Dimmer | DeviceKind::ColorLight => cc::MULTILEVEL_SWITCH,
        DeviceKind::Cover if find_value(node, cc::MULTILEVEL_SWITCH, "targetValue").is_some() => {
            cc::MULTILEVEL_SWITCH
        }
        DeviceKind::Switch => cc::BINARY_SWITCH,
        other => {
            return Err(ActionError::NotControllable {
                device,
                kind: other.as_str(),
            });
        }
    };
    if let Some(level) = level
        && !(0..=100).contains(&level)
    {
        return Err(ActionError::LevelOutOfRange { device, level });
    }
    if let Some(level) = level
        && matches!((action, level), (Action::On, 0) | (Action::Off, 1..))
    {
        return Err(ActionError::Contradictory {
            device,
            action,
            level,
        });
    }
    if !is_online(node) {
        return Err(ActionError::Offline {
            device,
            status: status_word(node).to_owned(),
        });
    }
    let (target, current) = match (
        find_value(node, switch_cc, "targetValue"),
        find_value(node, switch_cc, "currentValue"),
    ) {
        (Some(target), Some(current)) if target.writeable => (target, current),
        _ => {
            return Err(ActionError::NotControllable {
                device,
                kind: "device without a writeable switch value",
            });
        }
    };
    let (value, expect) = match (kind, action, level) {
        (DeviceKind::Switch, Action::On, _) => (json!(true), Expect::Bool(true)),
        (DeviceKind::Switch, Action::Off, _) => (json!(false), Expect::Bool(false)),
        (DeviceKind::Switch, Action::Dim, _) => return Err(ActionError::NotDimmable { device }),
        (_, Action::Off, _) => (json!(0), Expect::Level(0)),
        (_, Action::On, None) => (json!(255), Expect::NonZero),
        (_, Action::On | Action::Dim, Some(level)) => {
            let level = u8::try_from(level.min(99)).unwrap_or(99);
            (json!(level), Expect::Level(level))
        }
        (_, Action::Dim, None) => return Err(ActionError::NeedsLevel { device }),
    };
    Ok(WritePlan {
        target: target.value_id(node.id),
        value,
        current_key: current.key(),
        expect,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::home::demo_node as demo;

    fn planned(id: u16, action: Action, level: Option<i64>) -> (Value, Expect) {
        let plan = plan(&demo(id), action, level).unwrap();
        (plan.value, plan.expect)
    }

    fn refused(id: u16, action: Action, level: Option<i64>) -> String {
        plan(&demo(id), action, level).unwrap_err().to_string()
    }

    #[test]
    fn a_switch_is_switched_with_true_and_false_and_never_dimmed() {
        assert_eq!(
            planned(2, Action::On, None),
            (json!(true), Expect::Bool(true))
        );
        assert_eq!(
            planned(2, Action::Off, None),
            (json!(false), Expect::Bool(false))
        );
        // A level says nothing to a switch: "on" with 40 still just switches on.
        assert_eq!(
            planned(2, Action::On, Some(40)),
            (json!(true), Expect::Bool(true))
        );
        assert_eq!(
            refused(2, Action::Dim, Some(40)),
            "\"Switch One\" (node 2, Kitchen) is an on/off switch and cannot be dimmed: use action \"on\" or \"off\""
        );
        let plan = plan(&demo(2), Action::On, None).unwrap();
        assert_eq!(plan.target.to_string(), "2-37-0-targetValue");
        assert_eq!(plan.current_key.as_str(), "37-0-currentValue");
    }

    #[test]
    fn a_dimmer_goes_off_to_0_on_to_its_last_level_and_dims_with_100_clamped_to_99() {
        assert_eq!(planned(3, Action::Off, None), (json!(0), Expect::Level(0)));
        assert_eq!(
            planned(3, Action::Off, Some(0)),
            (json!(0), Expect::Level(0))
        );
        assert_eq!(planned(3, Action::On, None), (json!(255), Expect::NonZero));
        assert_eq!(
            planned(3, Action::On, Some(40)),
            (json!(40), Expect::Level(40))
        );
        assert_eq!(
            planned(3, Action::Dim, Some(40)),
            (json!(40), Expect::Level(40))
        );
        assert_eq!(
            planned(3, Action::Dim, Some(0)),
            (json!(0), Expect::Level(0))
        );
        assert_eq!(
            planned(3, Action::Dim, Some(99)),
            (json!(99), Expect::Level(99))
        );
        assert_eq!(
            planned(3, Action::Dim, Some(100)),
            (json!(99), Expect::Level(99))
        );
        assert_eq!(
            refused(3, Action::Dim, None),
            "action \"dim\" needs a level from 0 to 100 for \"Living Room Light\" (node 3, Living Room)"
        );
        let plan = plan(&demo(3), Action::Dim, Some(40)).unwrap();
        assert_eq!(plan.target.to_string(), "3-38-0-targetValue");
    }

    #[test]
    fn levels_outside_0_to_100_are_refused_before_anything_is_written() {
        for level in [-1, 101, 255, i64::MIN, i64::MAX] {
            for (id, action) in [(3, Action::Dim), (3, Action::On), (2, Action::On)] {
                assert_eq!(
                    plan(&demo(id), action, Some(level)),
                    Err(ActionError::LevelOutOfRange {
                        device: describe(&demo(id)),
                        level
                    }),
                    "node {id} {action} {level}"
                );
            }
        }
        assert_eq!(
            refused(3, Action::Dim, Some(101)),
            "level 101 is out of range for \"Living Room Light\" (node 3, Living Room): use 0 to 100 (0 is off, 100 is full brightness)"
        );
    }

    #[test]
    fn a_level_that_contradicts_the_action_is_refused_not_guessed() {
        for id in [2, 3] {
            for (action, level) in [(Action::On, 0), (Action::Off, 40), (Action::Off, 100)] {
                assert!(
                    matches!(
                        plan(&demo(id), action, Some(level)),
                        Err(ActionError::Contradictory { .. })
                    ),
                    "node {id} {action} {level}"
                );
            }
        }
        assert_eq!(
            refused(3, Action::On, Some(0)),
            "action \"on\" with level 0 contradicts itself for \"Living Room Light\" (node 3, Living Room): use \"off\" (or level 0) to switch off, \"on\" or \"dim\" with a level from 1 to 100 to switch on"
        );
    }

    #[test]
    fn sensors_dead_and_unknown_devices_are_refused() {
        assert_eq!(
            refused(4, Action::On, None),
            "\"Office Temperature\" (node 4, Office) is a sensor and cannot be switched: only switches, dimmers, colour lights and motor blinds accept \"on\", \"off\" and \"dim\""
        );
        assert_eq!(
            refused(7, Action::On, None),
            "\"Garage Light\" (node 7, Garage) is offline (status Dead) and cannot be controlled until it is reachable again"
        );
        let mut interviewing = demo(3);
        interviewing.ready = false;
        interviewing.values.clear();
        assert!(matches!(
            plan(&interviewing, Action::On, None),
            Err(ActionError::Interviewing { .. })
        ));
    }

    #[test]
    fn what_a_confirmation_accepts() {
        assert!(Expect::Bool(true).accepts(&json!(true)));
        assert!(!Expect::Bool(true).accepts(&json!(1)));
        assert!(Expect::Level(40).accepts(&json!(40.4)));
        assert!(!Expect::Level(40).accepts(&json!(41)));
        assert!(Expect::NonZero.accepts(&json!(1)));
        assert!(!Expect::NonZero.accepts(&json!(0)));
        assert!(!Expect::NonZero.accepts(&json!("on")));
    }
}
