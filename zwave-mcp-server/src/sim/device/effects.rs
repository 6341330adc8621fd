//! What a write of each class other than a switch does ([`Effects`]): set at once (zwave-js's
//! optimistic update), the device's real state after it, its reports in order; and carrying
//! them out on the home ([`carry_out`]).

use serde_json::{Value, json};

use super::{
    devices::{Behaviour, Devices},
    outcome::{Report, Write},
};
use crate::network::NodeId;
use crate::sim::{change::set_value, state::lock};

/// A write being carried out: the value `new` written to `key` of `node`, and how the node
/// behaves.
pub(super) struct Asked<'a> {
    pub(super) devices: &'a Devices<'a>,
    pub(super) node: NodeId,
    pub(super) key: &'a str,
    pub(super) new: Value,
    pub(super) how: Behaviour,
}

impl Asked<'_> {
    /// The value of `key` of the node now.
    pub(super) fn current(&self, key: &str) -> Value {
        self.devices.current(self.node, key)
    }

    /// `(key, new)`: the value written, as written.
    fn as_written(&self) -> (String, Value) {
        (self.key.to_owned(), self.new.clone())
    }
}

/// What a write does: set at once (zwave-js's optimistic update), the device's real state
/// after it, and its reports in order.
pub(super) struct Effects {
    at_once: Vec<(String, Value)>,
    real: Vec<(String, Value)>,
    reports: Vec<(Speed, Vec<(String, Value)>)>,
}

/// When a report comes: after a binary switch's verification (~1 s) or a multilevel one's
/// (~5 s: also a lock's, a thermostat's, the end of a blind's travel).
#[derive(Debug, Clone, Copy)]
enum Speed {
    Quick,
    Slow,
}
use Speed::{Quick, Slow};

/// A lock's Access Control "Lock state" notification (11: Lock jammed).
const LOCK_STATE: &str = "113-0-Access Control-Lock state";

/// Anything else: stored, never reported.
pub(super) fn stored(asked: &Asked<'_>) -> Effects {
    Effects {
        at_once: vec![asked.as_written()],
        real: Vec::new(),
        reports: Vec::new(),
    }
}

/// A colour light: each channel, the compound and the hex set at once; no report.
pub(super) fn colour(asked: &Asked<'_>) -> Effects {
    let new = &asked.new;
    let mut at_once = Vec::new();
    let mut compound = asked.current("51-0-currentColor");
    for (number, channel) in ["warmWhite", "coldWhite", "red", "green", "blue"]
        .iter()
        .enumerate()
    {
        if let Some(level) = new.get(*channel) {
            at_once.push((format!("51-0-currentColor-{number}"), level.clone()));
            compound[*channel] = level.clone();
        }
    }
    let hex = format!(
        "{:02x}{:02x}{:02x}",
        compound["red"].as_u64().unwrap_or(0),
        compound["green"].as_u64().unwrap_or(0),
        compound["blue"].as_u64().unwrap_or(0)
    );
    at_once.push(("51-0-currentColor".to_owned(), compound));
    at_once.push(("51-0-hexColor".to_owned(), json!(hex)));
    at_once.push(asked.as_written());
    Effects {
        real: at_once.clone(),
        at_once,
        reports: Vec::new(),
    }
}

/// A slow actuator: the target at once, one report of `state` when the travel ends.
pub(super) fn motor(asked: &Asked<'_>, state: &str) -> Effects {
    let key = asked.key;
    let level = json!(asked.new.as_f64().unwrap_or(0.0).clamp(0.0, 99.0).round() as u8);
    let end = if asked.how.stuck {
        asked.current(state)
    } else {
        level.clone()
    };
    Effects {
        at_once: vec![(key.to_owned(), level)],
        real: vec![(state.to_owned(), end.clone())],
        reports: vec![(
            Slow,
            vec![(key.to_owned(), end.clone()), (state.to_owned(), end)],
        )],
    }
}

/// Stopping a motor: it reports where it stopped.
pub(super) fn stop(asked: &Asked<'_>, state: &str) -> Effects {
    let here = asked.current(state);
    Effects {
        at_once: Vec::new(),
        real: Vec::new(),
        reports: vec![(Quick, vec![(state.to_owned(), here)])],
    }
}

/// A door lock: the mode at once, the Operation Report after the verification (a jam told
/// first).
pub(super) fn door_lock(asked: &Asked<'_>, state: &str) -> Effects {
    let (key, new, jammed) = (asked.key, &asked.new, asked.how.jammed);
    let end = if asked.how.stuck || jammed {
        asked.current(state)
    } else {
        new.clone()
    };
    let bolt = if end.as_f64() == Some(255.0) {
        "locked"
    } else {
        "unlocked"
    };
    // A jam is told by an Access Control notification, before the mode it stayed in.
    let report = vec![
        (LOCK_STATE.to_owned(), json!(if jammed { 11 } else { 0 })),
        (key.to_owned(), end.clone()),
        (state.to_owned(), end.clone()),
        ("98-0-boltStatus".to_owned(), json!(bolt)),
    ];
    Effects {
        at_once: vec![
            (key.to_owned(), new.clone()),
            (state.to_owned(), new.clone()),
        ],
        real: vec![(state.to_owned(), end)],
        reports: vec![(Slow, report)],
    }
}

/// A value that is its own state: set at once, reported after the verification, reverted
/// when outside `min`–`max`.
pub(super) fn own(asked: &Asked<'_>, min: Option<f64>, max: Option<f64>) -> Effects {
    let key = asked.key;
    let outside = asked
        .new
        .as_f64()
        .is_some_and(|v| min.is_some_and(|min| v < min) || max.is_some_and(|max| v > max));
    let end = if asked.how.stuck || outside {
        asked.current(key)
    } else {
        asked.new.clone()
    };
    Effects {
        at_once: vec![asked.as_written()],
        real: vec![(key.to_owned(), end.clone())],
        reports: vec![(Slow, vec![(key.to_owned(), end)])],
    }
}

/// A siren's tone: set at once, the Get's report soon (255 plays `default`), 0 when it ends.
pub(super) fn tone(asked: &Asked<'_>, default: &Value) -> Effects {
    let key = asked.key;
    let playing = if asked.new.as_f64() == Some(255.0) {
        default.clone()
    } else {
        asked.new.clone()
    };
    let end = if asked.how.stuck {
        asked.current(key)
    } else {
        playing
    };
    let mut reports = vec![(Quick, vec![(key.to_owned(), end.clone())])];
    if end.as_f64().is_some_and(|tone| tone > 0.0) {
        reports.push((Slow, vec![(key.to_owned(), json!(0))]));
    }
    Effects {
        at_once: vec![asked.as_written()],
        real: vec![(key.to_owned(), end)],
        reports,
    }
}

/// A barrier: opening or closing reported first, then where it ended.
pub(super) fn barrier(asked: &Asked<'_>, state: &str) -> Effects {
    let stuck = asked.how.stuck;
    let open = asked.new.as_f64().is_some_and(|v| v > 0.0);
    let end = if stuck {
        asked.current(state)
    } else {
        json!(if open { 255 } else { 0 })
    };
    let moving = json!(if open { 254 } else { 252 });
    let mut reports = Vec::new();
    if !stuck {
        reports.push((Quick, vec![(state.to_owned(), moving)]));
    }
    reports.push((Slow, vec![(state.to_owned(), end.clone())]));
    Effects {
        at_once: vec![asked.as_written()],
        real: vec![(state.to_owned(), end)],
        reports,
    }
}

/// Carries `effects` out on the home: the optimistic update (and, supervised, the real state
/// at once: answered 255, nothing follows), else the device's truth and its reports about
/// `watch` (254).
pub(super) fn carry_out(asked: &Asked<'_>, watch: &str, effects: Effects) -> Write {
    let Effects {
        at_once,
        real,
        reports,
    } = effects;
    let (devices, node_id, how) = (asked.devices, asked.node, asked.how);
    let mut optimistic = Vec::new();
    {
        let mut nodes = lock(devices.nodes);
        for (key, value) in &at_once {
            optimistic.extend(set_value(&mut nodes, node_id, key, value.clone()));
        }
        if how.supervised {
            // The device did it before answering: its state is the real one at once.
            for (key, value) in &real {
                if !at_once.iter().any(|(done, v)| done == key && v == value) {
                    optimistic.extend(set_value(&mut nodes, node_id, key, value.clone()));
                }
            }
        }
    }
    if how.supervised {
        return Write {
            result: json!({"status": 255}),
            optimistic,
            reports: Vec::new(),
        };
    }
    {
        let mut truth = lock(devices.truth);
        for (key, value) in &real {
            truth.insert((node_id, key.clone()), value.clone());
        }
    }
    let reports = if how.confirm && !reports.is_empty() {
        let generation = devices.next_generation(node_id, watch);
        reports
            .into_iter()
            .map(|(speed, set)| Report {
                delay: match speed {
                    Quick => devices.reports.switch,
                    Slow => devices.reports.dimmer,
                },
                node: node_id,
                watch: watch.to_owned(),
                generation,
                set,
            })
            .collect()
    } else {
        Vec::new()
    };
    Write {
        result: json!({"status": 254}),
        optimistic,
        reports,
    }
}
