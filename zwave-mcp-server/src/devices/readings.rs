//! The readings of a device: sensor values, meter values, switch states and battery.

use schemars::JsonSchema;
use serde::Serialize;
use serde_json::Value;

use crate::network::{NodeInfo, Property, ValueId, ValueInfo};

use super::cc;

/// One reading of a device.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Reading {
    /// What is measured ("Air temperature", "Motion sensor status", "Battery level").
    pub label: String,
    /// The value as reported.
    pub value: Value,
    /// Unit ("°C", "%", "W", "kWh"), when it has one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unit: Option<String>,
    /// Name of the value's state ("idle", "Motion detection"), when states are defined.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub state: Option<String>,
    /// When the value was last updated (epoch milliseconds).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub updated_at_ms: Option<i64>,
    /// Seconds since the last update.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub age_seconds: Option<u64>,
    /// Z-Wave command class of the value.
    pub command_class: u16,
    #[serde(skip)]
    pub(crate) value_id: Option<ValueId>,
}

impl Reading {
    /// The value in words, the same in every tool: a named state (`idle`), a yes/no value as
    /// what it means (`on`/`off`, `motion`/`idle`, `open`/`closed`), a number with its unit.
    pub fn words(&self) -> String {
        if self.command_class == cc::CENTRAL_SCENE {
            return match &self.state {
                Some(state) => scene_words(state),
                None if self.value.is_null() => "not pressed yet".to_owned(),
                None => format!("key event {}", self.value),
            };
        }
        if let Some(state) = &self.state {
            return state.clone();
        }
        match &self.value {
            Value::Null => "not reported yet".to_owned(),
            Value::Bool(on) => self.flag_words(*on).to_owned(),
            Value::String(text) => text.clone(),
            other => match &self.unit {
                Some(unit) => format!("{other} {unit}"),
                None => other.to_string(),
            },
        }
    }

    /// What `true` and `false` mean for this reading.
    fn flag_words(&self, on: bool) -> &'static str {
        let label = self.label.to_lowercase();
        let (yes, no) = if self.command_class == cc::BINARY_SWITCH {
            ("on", "off")
        } else if label.contains("motion") {
            ("motion", "idle")
        } else if ["door", "window", "contact"]
            .iter()
            .any(|w| label.contains(w))
        {
            ("open", "closed")
        } else if ["water", "leak", "flood"].iter().any(|w| label.contains(w)) {
            ("leak", "dry")
        } else if ["smoke", "carbon", "gas"].iter().any(|w| label.contains(w)) {
            ("alarm", "clear")
        } else {
            ("yes", "no")
        };
        if on { yes } else { no }
    }

    /// The reading in a list row: `21.5 °C` (the unit says what it is), else
    /// `sensor state (motion): idle`.
    pub fn short(&self) -> String {
        if self.state.is_none() && self.unit.is_some() && !self.value.is_boolean() {
            return self.words();
        }
        format!("{}: {}", self.label.to_lowercase(), self.words())
    }

    /// `Air temperature: 21.5 °C (updated 12 s ago)`.
    pub fn line(&self) -> String {
        let mut text = format!("{}: {}", self.label, self.words());
        // A value never reported has no age worth telling (Z-Wave JS UI stamps it anyway).
        if let Some(age) = self.age_seconds.filter(|_| !self.value.is_null()) {
            text.push_str(&format!(" (updated {})", ago(age)));
        }
        text
    }
}

/// A Central Scene key event in words: `KeyPressed` "pressed", `KeyPressed2x` "pressed
/// 2 times", `KeyHeldDown` "held down", `KeyReleased` "released".
fn scene_words(state: &str) -> String {
    match state {
        "KeyPressed" => "pressed".to_owned(),
        "KeyReleased" => "released".to_owned(),
        "KeyHeldDown" => "held down".to_owned(),
        other => match other
            .strip_prefix("KeyPressed")
            .and_then(|times| times.strip_suffix('x'))
        {
            Some(times) => format!("pressed {times} times"),
            None => other.to_owned(),
        },
    }
}

/// `12 s ago`, `3 min ago`, `2 h ago`, `4 days ago`.
pub fn ago(seconds: u64) -> String {
    match seconds {
        0..=119 => format!("{seconds} s ago"),
        120..=7_199 => format!("{} min ago", seconds / 60),
        7_200..=172_799 => format!("{} h ago", seconds / 3_600),
        _ => format!("{} days ago", seconds / 86_400),
    }
}

/// Every reading of a node, in a stable order. `now_ms` fills in the ages when given.
pub fn readings(node: &NodeInfo, now_ms: Option<i64>) -> Vec<Reading> {
    let mut found: Vec<&ValueInfo> = node.values.values().filter(|v| is_reading(v)).collect();
    // The key is a string built per value: built once per value, not once per comparison.
    found.sort_by_cached_key(|v| (order(v.command_class), v.endpoint, v.key()));
    found
        .into_iter()
        .filter_map(|value| {
            // An alarm sensor's state is unknown until its first report (a door sensor's door
            // state): said so, rather than left out of what it reads.
            let reported = match &value.value {
                Some(reported) => reported.clone(),
                None if matches!(value.command_class, cc::NOTIFICATION | cc::CENTRAL_SCENE)
                    && value.states.is_some() =>
                {
                    Value::Null
                }
                None => return None,
            };
            let age_seconds = match (now_ms, value.last_update) {
                (Some(now), Some(at)) => {
                    Some(u64::try_from(now.saturating_sub(at)).unwrap_or(0) / 1000)
                }
                _ => None,
            };
            Some(Reading {
                label: label_of(value),
                value: reported,
                unit: value.unit.clone().filter(|unit| !unit.is_empty()),
                state: value.state_name().map(str::to_owned),
                updated_at_ms: value.last_update,
                age_seconds,
                command_class: value.command_class,
                value_id: Some(value.value_id(node.id)),
            })
        })
        .collect()
}

/// A reading's label: the value's own, with its notification type before a label that does
/// not say what it is about ("Sensor status" of a Water Alarm: "Water Alarm sensor status").
fn label_of(value: &ValueInfo) -> String {
    let label = value
        .label
        .clone()
        .or_else(|| value.property_name.clone())
        .unwrap_or_else(|| value.property.to_string());
    match &value.property {
        crate::network::Property::Name(kind)
            if value.command_class == cc::NOTIFICATION
                && ["sensor status", "alarm status", "status"]
                    .contains(&label.to_lowercase().as_str()) =>
        {
            format!("{kind} {}", label.to_lowercase())
        }
        _ => label,
    }
}

fn is_reading(value: &ValueInfo) -> bool {
    let named = |name: &str| matches!(&value.property, Property::Name(own) if own == name);
    match value.command_class {
        cc::BINARY_SWITCH | cc::MULTILEVEL_SWITCH => named("currentValue"),
        cc::BINARY_SENSOR | cc::MULTILEVEL_SENSOR | cc::THERMOSTAT_SETPOINT => true,
        cc::METER => named("value"),
        cc::NOTIFICATION => !named("alarmType") && !named("alarmLevel"),
        cc::BATTERY => named("level"),
        // A scene button's last event (a stateless value: its value is what last happened).
        cc::CENTRAL_SCENE => named("scene"),
        cc::DOOR_LOCK => {
            named("currentMode")
                || named("doorStatus")
                || named("boltStatus")
                || named("latchStatus")
        }
        cc::LOCK => named("locked"),
        cc::THERMOSTAT_MODE => named("mode"),
        cc::THERMOSTAT_OPERATING_STATE => named("state"),
        cc::THERMOSTAT_FAN_MODE => named("mode"),
        cc::WINDOW_COVERING => named("currentValue"),
        cc::BARRIER_OPERATOR => named("currentState") || named("position"),
        cc::COLOR_SWITCH => named("hexColor"),
        cc::SOUND_SWITCH => named("toneId") || named("volume"),
        _ => false,
    }
}

fn order(cc: u16) -> u8 {
    match cc {
        cc::BINARY_SWITCH
        | cc::MULTILEVEL_SWITCH
        | cc::DOOR_LOCK
        | cc::LOCK
        | cc::THERMOSTAT_MODE
        | cc::THERMOSTAT_OPERATING_STATE
        | cc::WINDOW_COVERING
        | cc::BARRIER_OPERATOR
        | cc::COLOR_SWITCH
        | cc::SOUND_SWITCH => 0,
        cc::MULTILEVEL_SENSOR | cc::BINARY_SENSOR | cc::THERMOSTAT_SETPOINT => 1,
        cc::NOTIFICATION => 2,
        cc::METER => 3,
        cc::BATTERY => 4,
        _ => 5,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reading(
        label: &str,
        value: Value,
        unit: Option<&str>,
        state: Option<&str>,
        cc: u16,
    ) -> Reading {
        Reading {
            label: label.into(),
            value,
            unit: unit.map(Into::into),
            state: state.map(Into::into),
            updated_at_ms: None,
            age_seconds: None,
            command_class: cc,
            value_id: None,
        }
    }

    #[test]
    fn one_vocabulary_in_lists_and_readings() {
        use serde_json::json;
        for (reading, short, line) in [
            (
                reading(
                    "Sensor state (Motion)",
                    json!(false),
                    None,
                    None,
                    cc::BINARY_SENSOR,
                ),
                "sensor state (motion): idle",
                "Sensor state (Motion): idle",
            ),
            (
                reading(
                    "Sensor state (Motion)",
                    json!(true),
                    None,
                    None,
                    cc::BINARY_SENSOR,
                ),
                "sensor state (motion): motion",
                "Sensor state (Motion): motion",
            ),
            (
                reading("Current value", json!(true), None, None, cc::BINARY_SWITCH),
                "current value: on",
                "Current value: on",
            ),
            (
                reading("Door state", json!(false), None, None, cc::BINARY_SENSOR),
                "door state: closed",
                "Door state: closed",
            ),
            (
                reading(
                    "Motion sensor status",
                    json!(8),
                    None,
                    Some("Motion detection"),
                    cc::NOTIFICATION,
                ),
                "motion sensor status: Motion detection",
                "Motion sensor status: Motion detection",
            ),
            (
                reading(
                    "Air temperature",
                    json!(21.5),
                    Some("°C"),
                    None,
                    cc::MULTILEVEL_SENSOR,
                ),
                "21.5 °C",
                "Air temperature: 21.5 °C",
            ),
            (
                reading("Tamper", json!(false), None, None, cc::BINARY_SENSOR),
                "tamper: no",
                "Tamper: no",
            ),
        ] {
            assert_eq!(
                (reading.short().as_str(), reading.line().as_str()),
                (short, line)
            );
        }
    }

    #[test]
    fn an_alarm_state_not_reported_yet_is_said_so() {
        let reply: Value = serde_json::from_str(&test_support::fixture_text(
            "zwave-js-ui/classes/getNodes.full.json",
        ))
        .unwrap();
        let nodes =
            crate::network::parse_nodes(reply.get("result").cloned().unwrap_or(reply)).unwrap();
        let sensor = &nodes[&crate::network::NodeId(10)];
        let lines: Vec<String> = readings(sensor, Some(crate::network::now_ms()))
            .iter()
            .map(Reading::line)
            .collect();
        assert!(
            lines.contains(&"Door state (simple): not reported yet".to_owned())
                && lines
                    .iter()
                    .any(|line| line.starts_with("Water Alarm sensor status: idle (updated ")),
            "{lines:?}"
        );
        // The list's one line keeps to what was reported.
        assert_eq!(
            crate::devices::summary(sensor),
            "water alarm sensor status: idle, battery 87%"
        );
    }

    #[test]
    fn ages_read_naturally() {
        assert_eq!(ago(5), "5 s ago");
        assert_eq!(ago(600), "10 min ago");
        assert_eq!(ago(7_200), "2 h ago");
        assert_eq!(ago(200_000), "2 days ago");
    }
}
