//! Blinds, shutters and garage doors: open, close, stop, set_position.
//!
//! - Window Covering (106): `targetValue/<parameter>` 0 closed … 99 open for the position
//!   parameter (not a slat angle), confirmed by `currentValue/<parameter>` when the travel
//!   ends (zwave-js sets no current value at once for such slow actuators); stop writes
//!   `levelChangeUp/<parameter>` false, and any report after it confirms where it stopped.
//! - A motor's Multilevel Switch (38 with Open/Close): `targetValue` 0–99, stop writes
//!   `Open` false.
//! - Barrier Operator (102, garage doors and gates): `targetState` 255 open / 0 closed,
//!   confirmed by `currentState` reaching it (opening and closing are on the way). Opening
//!   one is sensitive.

use serde_json::{Value, json};

use super::{
    Action, ActionError, Expect, Request, Sensitive, Words, WritePlan, found, write_plan, writeable,
};
use crate::{
    devices::{cc, describe, find_value, percent_of_99},
    network::{NodeInfo, Property, ValueInfo},
};

pub(super) fn plan(node: &NodeInfo, request: &Request) -> Result<WritePlan, ActionError> {
    let device = describe(node);
    if let Some(target) = writeable(node, cc::BARRIER_OPERATOR, "targetState", None) {
        return barrier(node, request, target);
    }
    // A garage door moves through its Barrier Operator only: another command class it has
    // (a Multilevel Switch) would open it without the sensitive rule that opening one needs.
    if node
        .values
        .values()
        .any(|value| value.command_class == cc::BARRIER_OPERATOR)
    {
        return Err(ActionError::NoValue {
            device,
            what: "writeable barrier (garage door) state",
            action: request.action,
        });
    }
    let (target, current, stop) = if let Some(target) = position_parameter(node) {
        let key = match &target.property_key {
            Some(Property::Number(key)) => Some(*key),
            _ => None,
        };
        (
            Some(target),
            found(node, cc::WINDOW_COVERING, "currentValue", key),
            writeable(node, cc::WINDOW_COVERING, "levelChangeUp", key),
        )
    } else {
        (
            find_value(node, cc::MULTILEVEL_SWITCH, "targetValue").filter(|v| v.writeable),
            find_value(node, cc::MULTILEVEL_SWITCH, "currentValue"),
            writeable(node, cc::MULTILEVEL_SWITCH, "Open", None)
                .or_else(|| writeable(node, cc::MULTILEVEL_SWITCH, "Up", None)),
        )
    };
    let (Some(target), Some(current)) = (target, current) else {
        return Err(ActionError::NoValue {
            device,
            what: "position",
            action: request.action,
        });
    };
    let level = match request.action {
        Action::Open => 99,
        Action::Close => 0,
        Action::Stop => {
            let Some(stop) = stop else {
                return Err(ActionError::NoValue {
                    device,
                    what: "stop control",
                    action: request.action,
                });
            };
            return Ok(write_plan(
                node,
                stop,
                json!(false),
                current,
                Expect::Any,
                Words {
                    infinitive: "stop".to_owned(),
                    past: "stopped".to_owned(),
                    already: "stopped".to_owned(),
                    usual: "about 1 s",
                },
            ));
        }
        _ => match request.level {
            None => {
                return Err(ActionError::Needs {
                    device,
                    action: request.action,
                    what: "a level from 0 (closed) to 100 (open)".to_owned(),
                });
            }
            Some(level) if !(0..=100).contains(&level) => {
                return Err(ActionError::LevelOutOfRange {
                    device,
                    level,
                    meaning: "0 is closed, 100 is open",
                });
            }
            Some(level) => u8::try_from(level.min(99)).unwrap_or(99),
        },
    };
    let (infinitive, past) = match level {
        99 => ("open".to_owned(), "opened".to_owned()),
        0 => ("close".to_owned(), "closed".to_owned()),
        _ => {
            let percent = percent_of_99(level);
            (
                format!("move to {percent}% open"),
                format!("moved to {percent}% open"),
            )
        }
    };
    let already = match level {
        99 => "open".to_owned(),
        0 => "closed".to_owned(),
        _ => format!("{}% open", percent_of_99(level)),
    };
    // No echo: zwave-js sets no current position at once for a slow actuator.
    Ok(write_plan(
        node,
        target,
        json!(level),
        current,
        Expect::Level(level),
        Words {
            infinitive,
            past,
            already,
            usual: "when it stops moving, usually within a minute",
        },
    ))
}

/// The Window Covering parameter that is a position (its 99 is "Open"), not a slat angle.
fn position_parameter(node: &NodeInfo) -> Option<&ValueInfo> {
    node.values
        .values()
        .filter(|v| {
            v.command_class == cc::WINDOW_COVERING
                && v.writeable
                && matches!(&v.property, Property::Name(name) if name == "targetValue")
                && v.states.iter().flatten().any(|state| {
                    state.value == json!(99) && state.text.eq_ignore_ascii_case("open")
                })
        })
        .min_by_key(|v| match &v.property_key {
            Some(Property::Number(key)) => *key,
            _ => i64::MAX,
        })
}

fn barrier(
    node: &NodeInfo,
    request: &Request,
    target: &ValueInfo,
) -> Result<WritePlan, ActionError> {
    let device = describe(node);
    let open = match request.action {
        Action::Open => true,
        Action::Close => false,
        other => {
            return Err(ActionError::Needs {
                device,
                action: other,
                what: "a cover that can stop or hold a position; a garage door only opens or closes: use \"open\" or \"close\"".to_owned(),
            });
        }
    };
    let Some(current) = found(node, cc::BARRIER_OPERATOR, "currentState", None) else {
        return Err(ActionError::NoValue {
            device,
            what: "barrier state",
            action: request.action,
        });
    };
    let value: Value = json!(if open { 255 } else { 0 });
    let mut plan = write_plan(
        node,
        target,
        value,
        current,
        Expect::Barrier { open },
        Words {
            infinitive: if open { "open" } else { "close" }.to_owned(),
            past: if open { "opened" } else { "closed" }.to_owned(),
            already: if open { "open" } else { "closed" }.to_owned(),
            usual: "when it has finished moving, usually within 30 s",
        },
    );
    if open {
        plan.sensitive = Some(Sensitive::OpenBarrier);
    }
    Ok(plan)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::super::{Action, Expect, Limits, Request, lab, plan};

    fn planned(node: u16, request: Request) -> super::super::WritePlan {
        plan(&lab::node(node), &request, &Limits::default()).unwrap()
    }

    #[test]
    fn a_window_covering_moves_its_position_parameter_not_its_slats() {
        let open = planned(7, Request::new(Action::Open));
        assert_eq!(open.target.to_string(), "7-106-0-targetValue-13");
        assert_eq!(open.value, json!(99));
        assert_eq!(open.current_key.as_str(), "106-0-currentValue-13");
        assert_eq!(open.expect, Expect::Level(99));
        assert!(
            open.echoes.is_empty(),
            "a slow actuator gets no optimistic position"
        );
        let half = planned(7, Request::new(Action::SetPosition).level(50));
        assert_eq!(half.value, json!(50));
        assert_eq!(half.words.infinitive, "move to 50% open");
        let stop = planned(7, Request::new(Action::Stop));
        assert_eq!(stop.target.to_string(), "7-106-0-levelChangeUp-13");
        assert_eq!(stop.value, json!(false));
        assert_eq!(stop.expect, Expect::Any);
        assert_eq!(
            plan(
                &lab::node(7),
                &Request::new(Action::SetPosition).level(101),
                &Limits::default()
            )
            .unwrap_err()
            .to_string(),
            "level 101 is out of range for \"Blind\" (node 7, Bedroom): use 0 to 100 (0 is closed, 100 is open)"
        );
    }

    #[test]
    fn a_garage_door_opens_and_closes_only_and_opening_it_is_sensitive() {
        let door = crate::sim::home::demo_node(11);
        let open = plan(&door, &Request::new(Action::Open), &Limits::default()).unwrap();
        assert_eq!(open.target.to_string(), "11-102-0-targetState");
        assert_eq!(open.value, json!(255));
        assert_eq!(open.current_key.as_str(), "102-0-currentState");
        assert_eq!(open.expect, Expect::Barrier { open: true });
        assert_eq!(open.sensitive, Some(super::super::Sensitive::OpenBarrier));
        let close = plan(&door, &Request::new(Action::Close), &Limits::default()).unwrap();
        assert_eq!((close.value, close.sensitive), (json!(0), None));
        for action in [Action::On, Action::Stop, Action::SetPosition] {
            assert_eq!(
                plan(&door, &Request::new(action).level(50), &Limits::default())
                    .unwrap_err()
                    .to_string(),
                format!(
                    "\"Garage Door\" (node 11, Garage) is a cover (a blind, shutter or garage door) and cannot take action \"{action}\": use \"open\" or \"close\""
                )
            );
        }
        // Opening (254) is on the way, neither yes nor no.
        assert!(open.expect.in_transit(&json!(254)));
        assert!(!open.expect.accepts(&json!(254)));
        assert!(open.expect.accepts(&json!(255)));
    }

    #[test]
    fn a_motor_blind_moves_its_multilevel_switch_and_stops_with_open_false() {
        let close = planned(15, Request::new(Action::Close));
        assert_eq!(close.target.to_string(), "15-38-0-targetValue");
        assert_eq!(close.value, json!(0));
        let stop = planned(15, Request::new(Action::Stop));
        assert_eq!(stop.target.to_string(), "15-38-0-Open");
        assert_eq!(stop.value, json!(false));
    }

    #[test]
    fn a_garage_door_is_never_opened_through_another_class() {
        let mut door = crate::sim::home::demo_node(11);
        for value in door.values.values_mut() {
            value.writeable = false;
        }
        let dimmer = crate::sim::home::demo_node(3);
        for key in ["38-0-targetValue", "38-0-currentValue"] {
            let value = dimmer.values[key].clone();
            door.values.insert(value.key(), value);
        }
        let refused = plan(&door, &Request::new(Action::Open), &Limits::default()).unwrap_err();
        assert!(
            refused
                .to_string()
                .contains("writeable barrier (garage door) state"),
            "{refused}"
        );
    }
}
