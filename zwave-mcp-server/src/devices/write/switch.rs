//! On, off and dim: one value write to a switch, dimmer, colour light or motor blind.
//!
//! Binary switch: `targetValue` true/false. Dimmer: off = 0, on = 255 (the device restores its
//! last non-zero level), dim = level 0–100 with 100 clamped to 99 (Z-Wave's full level).
//! zwave-js does not range-check levels (100, 101 and -1 were all accepted), so we do.

use serde_json::json;

use super::{Action, ActionError, Expect, Request, Words, WritePlan, write_plan};
use crate::{
    devices::{DeviceKind, cc, describe, find_value, percent_of_99},
    network::NodeInfo,
};

/// Plans on, off or dim on `node`, a device of `kind`.
///
/// A level given with "on" on a dimmer dims to that level; "on" at level 0 and "off" at a
/// level above 0 are refused rather than guessed at (either could be the slip).
pub(super) fn plan(
    node: &NodeInfo,
    kind: DeviceKind,
    request: &Request,
) -> Result<WritePlan, ActionError> {
    let device = describe(node);
    let (action, level) = (request.action, request.level);
    // A colour light dims as any dimmer; a motor's Multilevel Switch moves it (0 closed, 99
    // open), as before these kinds were told apart.
    let switch_cc = if kind == DeviceKind::Switch {
        cc::BINARY_SWITCH
    } else {
        cc::MULTILEVEL_SWITCH
    };
    if let Some(level) = level
        && !(0..=100).contains(&level)
    {
        return Err(ActionError::LevelOutOfRange {
            device,
            level,
            meaning: "0 is off, 100 is full brightness",
        });
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
    let (target, current) = match (
        find_value(node, switch_cc, "targetValue"),
        find_value(node, switch_cc, "currentValue"),
    ) {
        (Some(target), Some(current)) if target.writeable => (target, current),
        _ => {
            return Err(ActionError::NoValue {
                device,
                what: "switch value",
                action,
            });
        }
    };
    let (value, expect) = match (kind, action, level) {
        (DeviceKind::Switch, Action::Off, _) => (json!(false), Expect::Bool(false)),
        (DeviceKind::Switch, _, _) => (json!(true), Expect::Bool(true)),
        (_, Action::Off, _) => (json!(0), Expect::Level(0)),
        (_, Action::Dim, None) => {
            return Err(ActionError::Needs {
                device,
                action,
                what: "a level from 0 to 100".to_owned(),
            });
        }
        (_, _, None) => (json!(255), Expect::NonZero),
        (_, _, Some(level)) => {
            let level = u8::try_from(level.min(99)).unwrap_or(99);
            (json!(level), Expect::Level(level))
        }
    };
    let mut plan = write_plan(node, target, value.clone(), current, expect, words(expect));
    // zwave-js sets the current value at once, except for a restore (255: only the target).
    if expect != Expect::NonZero {
        plan.echoes.push((current.key().as_str().to_owned(), value));
    }
    Ok(plan)
}

/// "switch on", "dim to 40%".
fn words(expect: Expect) -> Words {
    let (infinitive, past, already) = match expect {
        Expect::Bool(false) | Expect::Level(0) => {
            ("switch off".into(), "switched off".into(), "off".into())
        }
        Expect::Level(level) => {
            let percent = percent_of_99(level);
            (
                format!("dim to {percent}%"),
                format!("dimmed to {percent}%"),
                format!("at {percent}%"),
            )
        }
        _ => ("switch on".into(), "switched on".into(), "on".into()),
    };
    Words {
        infinitive,
        past,
        already,
        usual: if matches!(expect, Expect::Bool(_)) {
            "about 1 s"
        } else {
            "about 5 s"
        },
    }
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::super::{Action, ActionError, Expect, Limits, Request, WritePlan};
    use crate::{devices::describe, sim::home::demo_node as demo};

    fn plan(
        node: &crate::network::NodeInfo,
        action: Action,
        level: Option<i64>,
    ) -> Result<WritePlan, ActionError> {
        let request = Request {
            level,
            ..Request::new(action)
        };
        super::super::plan(node, &request, &Limits::default())
    }

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
            "\"Switch One\" (node 2, Kitchen) is a switch and cannot take action \"dim\": use \"on\" or \"off\""
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
                        level,
                        meaning: "0 is off, 100 is full brightness",
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
            "\"Office Temperature\" (node 4, Office) is a sensor and takes no actions: it can only be read (get_device_sensor_data, get_device_status)"
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
