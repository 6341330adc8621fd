//! The state of locks, thermostats, covers, colour lights and sirens in words, from the values
//! their command classes report (shapes from `fixtures/zwave-js-ui/classes/`, recorded from
//! zwave-js 15.29's mock devices): "locked, door closed", "heat to 20 °C, 19.5 °C now, idle",
//! "open 57%", "on at 40%, red (#ff0000)", "silent". A value not reported yet is said to be
//! unknown, never guessed.

use serde_json::Value;

use super::{
    DeviceKind, cc, find_value,
    level::{level, percent_of_99},
};
use crate::network::{NodeInfo, Property, ValueInfo};

/// The words for the state of a device of one of these kinds; `None` for other kinds.
pub fn state_words(node: &NodeInfo) -> Option<String> {
    Some(match DeviceKind::of(node) {
        DeviceKind::Lock => lock(node),
        DeviceKind::Thermostat => thermostat(node),
        DeviceKind::Cover => cover(node),
        DeviceKind::ColorLight => color_light(node),
        DeviceKind::Siren => siren(node),
        _ => return None,
    })
}

/// Whether `reading` is said by [`state_words`] for this kind already.
pub fn covered(kind: DeviceKind, reading: &super::Reading) -> bool {
    let command_class = reading.command_class;
    match kind {
        // A lock's jam is said with its mode.
        DeviceKind::Lock => {
            matches!(command_class, cc::DOOR_LOCK | cc::LOCK)
                || (command_class == cc::NOTIFICATION && reading.label == "Lock state")
        }
        DeviceKind::Thermostat => matches!(
            command_class,
            cc::THERMOSTAT_MODE
                | cc::THERMOSTAT_OPERATING_STATE
                | cc::THERMOSTAT_FAN_MODE
                | cc::THERMOSTAT_SETPOINT
                | cc::MULTILEVEL_SENSOR
        ),
        DeviceKind::Cover => matches!(
            command_class,
            cc::WINDOW_COVERING | cc::BARRIER_OPERATOR | cc::MULTILEVEL_SWITCH
        ),
        DeviceKind::ColorLight => matches!(command_class, cc::COLOR_SWITCH | cc::MULTILEVEL_SWITCH),
        DeviceKind::Siren => command_class == cc::SOUND_SWITCH,
        _ => false,
    }
}

/// "locked", "unlocked, door open", "locked (inside unsecured)".
fn lock(node: &NodeInfo) -> String {
    let mode = find_value(node, cc::DOOR_LOCK, "currentMode");
    let mut words = match mode.and_then(|mode| mode.value.as_ref().and_then(Value::as_f64)) {
        Some(255.0) => "locked".to_owned(),
        Some(0.0) => "unlocked".to_owned(),
        Some(_) => match mode.and_then(ValueInfo::state_name) {
            Some(name) => format!("lock mode {}", words_of(name)),
            None => "lock mode unknown".to_owned(),
        },
        None => match find_value(node, cc::LOCK, "locked").and_then(|v| v.value.as_ref()) {
            Some(Value::Bool(true)) => "locked".to_owned(),
            Some(Value::Bool(false)) => "unlocked".to_owned(),
            _ => "lock state unknown".to_owned(),
        },
    };
    // A jam comes as an Access Control notification, beside the mode it is stuck in.
    if jammed(node) {
        words = format!("jammed ({words})");
    }
    for (property, what) in [("doorStatus", "door"), ("boltStatus", "bolt")] {
        if let Some(Value::String(status)) =
            find_value(node, cc::DOOR_LOCK, property).and_then(|v| v.value.as_ref())
        {
            words.push_str(&format!(", {what} {status}"));
        }
    }
    words
}

/// Whether the lock's last Access Control "Lock state" notification is a jam (11).
pub fn jammed(node: &NodeInfo) -> bool {
    node.values.values().any(|value| {
        value.command_class == cc::NOTIFICATION
            && matches!(&value.property, Property::Name(name) if name == "Access Control")
            && matches!(&value.property_key, Some(Property::Name(key)) if key == "Lock state")
            && value.value.as_ref().and_then(Value::as_f64) == Some(11.0)
    })
}

/// "heat to 20 °C, 19.5 °C now, idle"; "off, 19.5 °C now".
fn thermostat(node: &NodeInfo) -> String {
    let mode = find_value(node, cc::THERMOSTAT_MODE, "mode");
    let mode_name = mode.and_then(ValueInfo::state_name).map(words_of);
    let mut parts = vec![
        mode_name
            .clone()
            .unwrap_or_else(|| "mode unknown".to_owned()),
    ];
    // The setpoint the mode uses: Heating (1) for heat, Cooling (2) for cool; else each.
    let wanted = match mode_name.as_deref() {
        Some("heat") => vec![1],
        Some("cool") => vec![2],
        Some("off") => vec![],
        _ => vec![1, 2],
    };
    for setpoint in setpoints(node)
        .into_iter()
        .filter(|(kind, _)| wanted.contains(kind))
    {
        let (kind, value) = setpoint;
        let text = reading_text(value);
        parts[0].push_str(&match (wanted.len(), kind) {
            (1, _) => format!(" to {text}"),
            (_, 1) => format!(", heating to {text}"),
            _ => format!(", cooling to {text}"),
        });
    }
    if let Some(now) = node
        .values
        .values()
        .find(|v| v.command_class == cc::MULTILEVEL_SENSOR && v.value.is_some())
    {
        parts.push(format!("{} now", reading_text(now)));
    }
    if let Some(state) =
        find_value(node, cc::THERMOSTAT_OPERATING_STATE, "state").and_then(ValueInfo::state_name)
    {
        parts.push(words_of(state));
    }
    if let Some(fan) =
        find_value(node, cc::THERMOSTAT_FAN_MODE, "mode").and_then(ValueInfo::state_name)
    {
        parts.push(format!("fan {}", words_of(fan)));
    }
    parts.join(", ")
}

/// The setpoints reported, by type (1 heating, 2 cooling, …).
fn setpoints(node: &NodeInfo) -> Vec<(i64, &ValueInfo)> {
    let mut found: Vec<(i64, &ValueInfo)> = node
        .values
        .values()
        .filter(|v| v.command_class == cc::THERMOSTAT_SETPOINT && v.value.is_some())
        .filter_map(|v| match &v.property_key {
            Some(Property::Number(kind)) => Some((*kind, v)),
            _ => None,
        })
        .collect();
    found.sort_by_key(|(kind, _)| *kind);
    found
}

/// "closed", "open", "open 57%", "position unknown".
fn cover(node: &NodeInfo) -> String {
    let position = node
        .values
        .values()
        .filter(|v| {
            matches!(v.command_class, cc::WINDOW_COVERING | cc::MULTILEVEL_SWITCH)
                && matches!(&v.property, Property::Name(name) if name == "currentValue")
        })
        .min_by_key(|v| (v.command_class, v.endpoint))
        .and_then(|v| v.value.as_ref())
        .and_then(Value::as_f64);
    match position {
        Some(0.0) => "closed".to_owned(),
        Some(level) if level >= 99.0 => "open".to_owned(),
        Some(level) => format!("open {}%", level.round()),
        None => match find_value(node, cc::BARRIER_OPERATOR, "currentState")
            .and_then(ValueInfo::state_name)
        {
            Some(state) => words_of(state),
            None => "position unknown".to_owned(),
        },
    }
}

/// "off", "on at 40%, red (#ff0000)", "on at 100%, warm white".
fn color_light(node: &NodeInfo) -> String {
    let mut words = match level(node) {
        Some(0) => return "off".to_owned(),
        Some(level) => format!("on at {}%", percent_of_99(level)),
        None => "state unknown".to_owned(),
    };
    if let Some(colour) = colour(node) {
        words.push_str(&format!(", {colour}"));
    }
    words
}

/// The colour a colour light shows: white when only a white channel is lit, else the RGB hex.
/// Each channel is read from its own value (`currentColor/<n>`, which only the device's report
/// of that channel sets), the compound `currentColor` only where it has none: zwave-js fills
/// the compound with its own optimistic values for the channels not reported.
fn colour(node: &NodeInfo) -> Option<String> {
    let compound = find_value(node, cc::COLOR_SWITCH, "currentColor")?
        .value
        .clone()
        .unwrap_or(Value::Null);
    let channel = |name: &str| {
        super::write::color_channel(node, name)
            .or_else(|| compound.get(name).and_then(Value::as_u64))
            .unwrap_or(0)
    };
    let (red, green, blue) = (channel("red"), channel("green"), channel("blue"));
    if red + green + blue == 0 {
        return match (channel("warmWhite"), channel("coldWhite")) {
            (0, 0) => None,
            (warm, cold) if warm >= cold => Some("warm white".to_owned()),
            _ => Some("cool white".to_owned()),
        };
    }
    Some(format!("colour #{red:02x}{green:02x}{blue:02x}"))
}

/// "silent", "playing Doorbell (3 sec)"; a tone not reported yet is not known to be silent
/// (zwave-js reads a siren's tone only once it has played one).
fn siren(node: &NodeInfo) -> String {
    let tone = find_value(node, cc::SOUND_SWITCH, "toneId");
    match tone
        .and_then(|tone| tone.value.as_ref())
        .and_then(Value::as_f64)
    {
        Some(0.0) => "silent".to_owned(),
        None => "tone not reported yet".to_owned(),
        Some(_) => match tone.and_then(ValueInfo::state_name) {
            Some(name) => format!("playing {name}"),
            None => "playing".to_owned(),
        },
    }
}

/// A value with its unit: "20 °C".
fn reading_text(value: &ValueInfo) -> String {
    let number = value
        .value
        .as_ref()
        .map(ToString::to_string)
        .unwrap_or_default();
    match value.unit.as_deref().filter(|unit| !unit.is_empty()) {
        Some(unit) => format!("{number} {unit}"),
        None => number,
    }
}

/// A state name as words: "InsideUnsecuredWithTimeout" → "inside unsecured with timeout",
/// "Heat" → "heat", "Fan Only" → "fan only".
fn words_of(name: &str) -> String {
    let mut words = String::with_capacity(name.len() + 4);
    for (at, letter) in name.char_indices() {
        if letter.is_uppercase() && at > 0 && !name[..at].ends_with(' ') {
            words.push(' ');
        }
        words.extend(letter.to_lowercase());
    }
    words
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use serde_json::json;

    use super::*;
    use crate::network::NodeId;

    /// The lab's nodes as the real Z-Wave JS UI reported them.
    fn lab() -> BTreeMap<NodeId, NodeInfo> {
        let reply: Value = serde_json::from_str(&test_support::fixture_text(
            "zwave-js-ui/classes/getNodes.full.json",
        ))
        .unwrap();
        crate::network::parse_nodes(reply.get("result").cloned().unwrap_or(reply)).unwrap()
    }

    fn set(node: &mut NodeInfo, key: &str, value: Value) {
        node.values.get_mut(key).unwrap().value = Some(value);
    }

    #[test]
    fn every_class_of_the_lab_reads_in_words() {
        let nodes = lab();
        let said = |id: u16| state_words(&nodes[&NodeId(id)]);
        assert_eq!(said(5).as_deref(), Some("unlocked, door open, bolt locked"));
        assert_eq!(
            said(6).as_deref(),
            Some("off, 19.5 °C now, idle"),
            "a thermostat that is off names no setpoint"
        );
        assert_eq!(said(7).as_deref(), Some("closed"));
        assert_eq!(said(8).as_deref(), Some("off"));
        assert_eq!(
            said(9).as_deref(),
            Some("tone not reported yet"),
            "recorded after the interview: never played, not known to be silent"
        );
        assert_eq!(said(15).as_deref(), Some("closed"));
        assert_eq!(said(2), None, "a switch is said elsewhere");
    }

    #[test]
    fn a_thermostats_fan_mode_is_said_last() {
        let mut thermostat = lab()[&NodeId(6)].clone();
        let fan: crate::network::ValueInfo = serde_json::from_value(json!({
            "id": "6-68-0-mode", "nodeId": 6, "commandClass": 68,
            "commandClassName": "Thermostat Fan Mode", "endpoint": 0, "property": "mode",
            "propertyName": "mode", "type": "number", "readable": true, "writeable": true,
            "label": "Thermostat fan mode", "value": 1,
            "states": [{"value": 0, "text": "Auto low"}, {"value": 1, "text": "Low"}],
        }))
        .unwrap();
        thermostat.values.insert(fan.key(), fan);
        assert_eq!(
            state_words(&thermostat).unwrap(),
            "off, 19.5 °C now, idle, fan low"
        );
    }

    #[test]
    fn a_jammed_lock_says_so_before_its_mode() {
        let mut lock = lab()[&NodeId(5)].clone();
        let jam: crate::network::ValueInfo = serde_json::from_value(json!({
            "id": "5-113-0-Access Control-Lock state", "nodeId": 5, "commandClass": 113,
            "commandClassName": "Notification", "endpoint": 0, "property": "Access Control",
            "propertyKey": "Lock state", "propertyName": "Access Control",
            "propertyKeyName": "Lock state", "type": "number", "readable": true,
            "writeable": false, "label": "Lock state", "value": 11,
            "states": [{"value": 0, "text": "idle"}, {"value": 11, "text": "Lock jammed"}],
        }))
        .unwrap();
        lock.values.insert(jam.key(), jam);
        assert_eq!(
            state_words(&lock).unwrap(),
            "jammed (unlocked), door open, bolt locked"
        );
        set(&mut lock, "113-0-Access Control-Lock state", json!(0));
        assert_eq!(
            state_words(&lock).unwrap(),
            "unlocked, door open, bolt locked"
        );
    }

    #[test]
    fn changed_states_read_as_what_they_mean() {
        let nodes = lab();
        let mut lock = nodes[&NodeId(5)].clone();
        set(&mut lock, "98-0-currentMode", json!(255));
        set(&mut lock, "98-0-doorStatus", json!("closed"));
        assert_eq!(
            state_words(&lock).unwrap(),
            "locked, door closed, bolt locked"
        );
        set(&mut lock, "98-0-currentMode", json!(16));
        assert!(
            state_words(&lock)
                .unwrap()
                .starts_with("lock mode inside unsecured"),
            "{:?}",
            state_words(&lock)
        );
        let mut thermostat = nodes[&NodeId(6)].clone();
        set(&mut thermostat, "64-0-mode", json!(1));
        set(&mut thermostat, "66-0-state", json!(1));
        assert_eq!(
            state_words(&thermostat).unwrap(),
            "heat to 20 °C, 19.5 °C now, heating"
        );
        set(&mut thermostat, "64-0-mode", json!(3));
        assert_eq!(
            state_words(&thermostat).unwrap(),
            "auto, heating to 20 °C, cooling to 26 °C, 19.5 °C now, heating"
        );
        let mut blind = nodes[&NodeId(7)].clone();
        set(&mut blind, "106-0-currentValue-13", json!(57));
        assert_eq!(state_words(&blind).unwrap(), "open 57%");
        set(&mut blind, "106-0-currentValue-13", json!(99));
        assert_eq!(state_words(&blind).unwrap(), "open");
        let mut bulb = nodes[&NodeId(8)].clone();
        set(&mut bulb, "38-0-currentValue", json!(40));
        assert_eq!(state_words(&bulb).unwrap(), "on at 40%, colour #ff0000");
        // Each channel as the device reported it; the compound, which zwave-js fills with its
        // own optimistic values, only where a channel has no value of its own.
        set(&mut bulb, "51-0-currentColor-0", json!(200));
        set(&mut bulb, "51-0-currentColor-2", json!(0));
        assert_eq!(state_words(&bulb).unwrap(), "on at 40%, warm white");
        set(
            &mut bulb,
            "51-0-currentColor",
            json!({"warmWhite": 0, "coldWhite": 0, "red": 0, "green": 255, "blue": 0}),
        );
        assert_eq!(state_words(&bulb).unwrap(), "on at 40%, warm white");
        let mut siren = nodes[&NodeId(9)].clone();
        set(&mut siren, "121-0-toneId", json!(2));
        assert_eq!(state_words(&siren).unwrap(), "playing Doorbell (3 sec)");
    }

    #[test]
    fn state_names_become_words() {
        assert_eq!(
            words_of("InsideUnsecuredWithTimeout"),
            "inside unsecured with timeout"
        );
        assert_eq!(words_of("Heat"), "heat");
        assert_eq!(words_of("Fan Only"), "fan only");
    }
}
