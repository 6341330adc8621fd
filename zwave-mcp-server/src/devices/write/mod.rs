//! Turning what a person asks of a device ("lock the front door", "heat to 21", "close the
//! blind") into one checked value write, or a refusal that says what the device does accept.
//!
//! | module | writes |
//! |---|---|
//! | `switch` | on, off, dim: switches, dimmers, colour lights, motor blinds |
//! | `lock` | lock, unlock: Door Lock (98) or Lock (118) |
//! | `thermostat` | set_temperature (a setpoint, inside the device's range and the owner's band), set_mode |
//! | `cover` | open, close, stop, set_position: Window Covering (106), a motor's Multilevel Switch, Barrier Operator (102) |
//! | `siren` | sound, silence: Sound Switch (121) |
//! | `color` | set_color: Color Switch (51), read back channel by channel |
//! | `sensitive` | [`Sensitive`]: why an action needs the owner's leave; [`SensitiveClass`], the leave |
//!
//! Each plan says which value confirms it and what the device must report there
//! ([`Expect`]), which values zwave-js sets at once when the Set is acknowledged (its
//! optimistic update, never taken for the device's report), the words for the answer, and
//! whether the action is sensitive (it opens the home or silences an alarm).

mod action;
mod color;
mod cover;
mod lock;
mod sensitive;
mod siren;
mod switch;
mod thermostat;

use serde_json::Value;

pub use action::{Action, ActionError, Limits, Request, action_list};
pub use color::color_channel;
pub use sensitive::{Sensitive, SensitiveClass};
pub use siren::tones;
pub use thermostat::modes;

use super::cc;

use super::{DeviceKind, describe, is_online, status_word};
use crate::network::{NodeInfo, ValueId, ValueInfo, ValueKey};

/// What the device's state value must become to confirm the write.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Expect {
    /// A boolean state (a binary switch, a Lock CC's `locked`).
    Bool(bool),
    /// An exact level 0–99 (a dimmer, a blind's position).
    Level(u8),
    /// Any level above zero (a dimmer switched on to its last level, a siren's default tone).
    NonZero,
    /// A number, within 0.05 (a lock mode, a thermostat mode or setpoint, a tone).
    Number(f64),
    /// Any report at all (a blind stopped wherever it was).
    Any,
    /// A barrier's `currentState`: 255 open or 0 closed; opening (254) and closing (252) are
    /// on the way, neither yes nor no.
    Barrier {
        /// Whether it was asked to open.
        open: bool,
    },
}

impl Expect {
    /// Whether `value` confirms the write.
    pub fn accepts(self, value: &Value) -> bool {
        let number = value.as_f64();
        match self {
            Self::Bool(on) => value.as_bool() == Some(on),
            Self::Level(level) => number.is_some_and(|v| (v - f64::from(level)).abs() < 0.5),
            Self::NonZero => number.is_some_and(|v| v > 0.0),
            Self::Number(wanted) => number.is_some_and(|v| (v - wanted).abs() < 0.05),
            Self::Any => true,
            Self::Barrier { open } => number == Some(if open { 255.0 } else { 0.0 }),
        }
    }

    /// Whether `value` says the device is still on its way (a garage door opening): neither
    /// a confirmation nor a contradiction.
    pub fn in_transit(self, value: &Value) -> bool {
        matches!(self, Self::Barrier { .. })
            && value.as_f64().is_some_and(|v| v == 252.0 || v == 254.0)
    }
}

/// The words for a write, in the answer and in later reads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Words {
    /// "switch on", "lock", "set the heating setpoint to 21 °C".
    pub infinitive: String,
    /// "switched on", "locked", "set the heating setpoint to 21 °C".
    pub past: String,
    /// The state when it was so already: "on", "locked", "heating to 21 °C".
    pub already: String,
    /// When such a device usually reports: "about 1 s".
    pub usual: &'static str,
}

/// One value write that carries out an action.
#[derive(Debug, Clone, PartialEq)]
pub struct WritePlan {
    /// The writeable target value.
    pub target: ValueId,
    /// The value to write.
    pub value: Value,
    /// Key of the value that confirms the write.
    pub current_key: ValueKey,
    /// What that value must become.
    pub expect: Expect,
    /// Other values the device must report, each as it must become, before the write is
    /// confirmed (a colour's other channels).
    pub also: Vec<(ValueKey, Expect)>,
    /// Values to ask the device for once the write is acknowledged, for a device that sends
    /// no report of its own (a colour light).
    pub poll: Vec<ValueId>,
    /// What zwave-js sets at once when the Set is acknowledged (key, value): its own cache,
    /// not the device's word.
    pub echoes: Vec<(String, Value)>,
    /// The words for it.
    pub words: Words,
    /// Set when the action opens the home or silences an alarm.
    pub sensitive: Option<Sensitive>,
}

/// Plans the write for `request` on `node`.
///
/// # Errors
/// [`ActionError`] when the device cannot do it, is offline, or an argument is missing or
/// out of range.
pub fn plan(node: &NodeInfo, request: &Request, limits: &Limits) -> Result<WritePlan, ActionError> {
    let device = describe(node);
    if !node.ready && node.values.is_empty() {
        return Err(ActionError::Interviewing { device });
    }
    let kind = DeviceKind::of(node);
    let takes = actions(node);
    if !takes.contains(&request.action) {
        return Err(ActionError::Unsupported {
            device,
            action: request.action,
            kind,
            valid: action_list(&takes),
        });
    }
    let planned = match request.action {
        Action::On | Action::Off | Action::Dim => switch::plan(node, kind, request)?,
        Action::Lock | Action::Unlock => lock::plan(node, request.action)?,
        Action::SetTemperature | Action::SetMode => thermostat::plan(node, request, limits)?,
        Action::Open | Action::Close | Action::Stop | Action::SetPosition => {
            cover::plan(node, request)?
        }
        Action::Sound | Action::Silence => siren::plan(node, request)?,
        Action::SetColor => color::plan(node, request)?,
    };
    if !is_online(node) {
        return Err(ActionError::Offline {
            device,
            status: status_word(node).to_owned(),
        });
    }
    Ok(planned)
}

/// The actions `node` takes: those of its kind, and for a cover those its motor has (a garage
/// door opens and closes; a blind also stops and moves to a position; a motor's Multilevel
/// Switch also takes on, off and dim).
pub fn actions(node: &NodeInfo) -> Vec<Action> {
    let kind = DeviceKind::of(node);
    let all = Action::of(kind).to_vec();
    if kind != DeviceKind::Cover {
        return all;
    }
    if found(node, cc::BARRIER_OPERATOR, "targetState", None).is_some() {
        return vec![Action::Open, Action::Close];
    }
    let multilevel = super::find_value(node, cc::MULTILEVEL_SWITCH, "targetValue").is_some();
    all.into_iter()
        .filter(|action| multilevel || !matches!(action, Action::On | Action::Off | Action::Dim))
        .collect()
}

/// The writeable value `property` (with `key`) of command class `cc`, root endpoint first.
fn writeable<'a>(
    node: &'a NodeInfo,
    cc: u16,
    property: &str,
    key: Option<i64>,
) -> Option<&'a ValueInfo> {
    found(node, cc, property, key).filter(|value| value.writeable)
}

/// The value `property` (with `key`) of command class `cc`, root endpoint first.
fn found<'a>(
    node: &'a NodeInfo,
    cc: u16,
    property: &str,
    key: Option<i64>,
) -> Option<&'a ValueInfo> {
    use crate::network::Property;
    node.values
        .values()
        .filter(|v| {
            v.command_class == cc
                && matches!(&v.property, Property::Name(name) if name == property)
                && match (&v.property_key, key) {
                    (None, None) => true,
                    (Some(Property::Number(have)), Some(want)) => *have == want,
                    _ => false,
                }
        })
        .min_by_key(|v| v.endpoint)
}

/// A plan with no device-specific echo: the common shape.
fn write_plan(
    node: &NodeInfo,
    target: &ValueInfo,
    value: Value,
    current: &ValueInfo,
    expect: Expect,
    words: Words,
) -> WritePlan {
    WritePlan {
        target: target.value_id(node.id),
        value,
        current_key: current.key(),
        expect,
        also: Vec::new(),
        poll: Vec::new(),
        echoes: Vec::new(),
        words,
        sensitive: None,
    }
}

#[cfg(test)]
pub(crate) mod lab {
    //! The lab's mock network as the real Z-Wave JS UI reported it (`fixtures/zwave-js-ui/classes/`).

    use crate::network::NodeInfo;

    /// Node `id` of the lab's mock network: 5 lock, 6 thermostat, 7 blind, 8 colour bulb,
    /// 9 siren, 10 door/leak sensor, 15 motor blind.
    pub(crate) fn node(id: u16) -> NodeInfo {
        let reply: serde_json::Value = serde_json::from_str(&test_support::fixture_text(
            "zwave-js-ui/classes/getNodes.full.json",
        ))
        .unwrap();
        let nodes = reply.get("result").cloned().unwrap_or(reply);
        crate::network::parse_nodes(nodes)
            .unwrap()
            .into_values()
            .find(|node| node.id.0 == id)
            .unwrap()
    }
}
