//! Which behaviour a written value has ([`Class`]), from its command class and property and
//! the node's other values: a switch, a motor, a lock, a value that is its own state, …

use serde_json::{Value, json};

/// How a device of the written value's class behaves (`captures/confirm/FACTS.md`,
/// `captures/classes/FACTS.md`).
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Class {
    /// A binary switch (37) or a dimmer (38): the current value beside the target.
    Switch { dimmer: bool, state: String },
    /// A slow actuator (a blind's Window Covering position, a motor's Multilevel Switch):
    /// no optimistic current value; one report when the travel ends.
    Motor { state: String },
    /// Stopping a motor (a level change's `false`): it reports where it stopped.
    Stop { state: String },
    /// Door Lock (98) `targetMode`: `currentMode` set at once, the Operation Report after
    /// the verification (~5 s).
    DoorLock { state: String },
    /// A value that is its own state (a setpoint, a thermostat mode, a Lock CC's `locked`):
    /// set at once, reported after the verification; a value outside the device's range is
    /// reverted by that report.
    Own { min: Option<f64>, max: Option<f64> },
    /// Sound Switch (121) `toneId`: set at once, the Get's report ~1 s later (255 reports
    /// the default tone), and 0 when the tone ends.
    Tone { default: Value },
    /// Barrier Operator (102) `targetState`: opening/closing reported first, then the end.
    Barrier { state: String },
    /// Color Switch (51) `targetColor`: each channel, the compound and the hex set at once,
    /// and no report after it (a Get of a channel answers with it). Not modelled: a stuck
    /// colour light (the simulator keeps one value per channel).
    Colour,
    /// Anything else: stored, never reported.
    Stored,
}

/// How a write of value `key` (`target`) of `node` is carried out.
pub(super) fn class_of(node: &Value, key: &str, target: &Value) -> Class {
    let values = &node["values"];
    let linked = || {
        values.as_object().and_then(|values| {
            values
                .iter()
                .find(|(_, v)| v["targetValue"] == json!(key))
                .map(|(k, _)| k.clone())
        })
    };
    let property = target["property"].as_str().unwrap_or_default();
    let key_suffix = target
        .get("propertyKey")
        .filter(|k| !k.is_null())
        .map(|k| format!("-{}", plain(k)))
        .unwrap_or_default();
    let motor = values.get("38-0-Open").is_some() || values.get("38-0-Close").is_some();
    match (target["commandClass"].as_u64().unwrap_or(0), property) {
        (37, "targetValue") => linked().map_or(Class::Stored, |state| Class::Switch {
            dimmer: false,
            state,
        }),
        (38, "targetValue") if motor => {
            linked().map_or(Class::Stored, |state| Class::Motor { state })
        }
        (38, "targetValue") => linked().map_or(Class::Stored, |state| Class::Switch {
            dimmer: true,
            state,
        }),
        (38, "Open" | "Close" | "Up" | "Down") => Class::Stop {
            state: "38-0-currentValue".to_owned(),
        },
        (106, "targetValue") => Class::Motor {
            state: format!("106-0-currentValue{key_suffix}"),
        },
        (106, "levelChangeUp" | "levelChangeDown") => Class::Stop {
            state: format!("106-0-currentValue{key_suffix}"),
        },
        (98, "targetMode") => Class::DoorLock {
            state: "98-0-currentMode".to_owned(),
        },
        (64 | 67, _) | (118, "locked") => Class::Own {
            min: target["min"].as_f64(),
            max: target["max"].as_f64(),
        },
        (121, "toneId") => Class::Tone {
            default: values["121-0-defaultToneId"]["value"].clone(),
        },
        (102, "targetState") => Class::Barrier {
            state: "102-0-currentState".to_owned(),
        },
        (51, "targetColor") => Class::Colour,
        _ => Class::Stored,
    }
}

fn plain(key: &Value) -> String {
    match key {
        Value::String(text) => text.clone(),
        other => other.to_string(),
    }
}

impl Class {
    /// The state value a write of `key` is about: only the latest write of it is reported.
    pub(super) fn watch(&self, key: &str) -> String {
        match self {
            Self::Motor { state }
            | Self::Stop { state }
            | Self::DoorLock { state }
            | Self::Barrier { state } => state.clone(),
            _ => key.to_owned(),
        }
    }
}
