//! A binary switch or a dimmer taking a write (`captures/confirm/FACTS.md`): the target and
//! the current value set at once (a dimmer's restore, 255, only as the target), the device's
//! report after the verification, a plug's power with it.

use serde_json::{Value, json};

use super::{
    effects::Asked,
    outcome::{Report, Write},
};
use crate::sim::{change::set_value, state::lock};

/// A plug's power meter value.
const POWER_KEY: &str = "50-0-value-66049";

/// A switch (or, `dimmer`, a multilevel one) whose current value is `current_key` takes the
/// write `asked`.
pub(super) fn switch(asked: &Asked<'_>, current_key: &str, dimmer: bool) -> Write {
    let (devices, node_id, key, new, how) =
        (asked.devices, asked.node, asked.key, &asked.new, asked.how);
    // A multilevel switch stores 0–99; 255 restores the last non-zero level.
    let restore = dimmer && new.as_f64().is_some_and(|level| level >= 255.0);
    let stored = if dimmer {
        level(asked, restore)
    } else {
        new.clone()
    };
    // What the device really is after the Set.
    let real = if how.stuck {
        asked.current(current_key)
    } else {
        stored.clone()
    };
    if dimmer
        && !how.stuck
        && let Some(level) = stored
            .as_u64()
            .and_then(|l| u8::try_from(l).ok())
            .filter(|l| *l > 0)
    {
        lock(devices.last_levels).insert(node_id, level);
    }
    let mut optimistic = Vec::new();
    {
        let mut nodes = lock(devices.nodes);
        let echoed = if restore { new.clone() } else { stored.clone() };
        optimistic.extend(set_value(&mut nodes, node_id, key, echoed));
        if !restore {
            optimistic.extend(set_value(&mut nodes, node_id, current_key, stored.clone()));
        }
        if how.supervised && !dimmer {
            optimistic.extend(set_value(&mut nodes, node_id, POWER_KEY, watts_of(&real)));
        }
    }
    if how.supervised {
        return Write {
            result: json!({"status": 255}),
            optimistic,
            reports: Vec::new(),
        };
    }
    lock(devices.truth).insert((node_id, current_key.to_owned()), real.clone());
    let reports = if how.confirm {
        vec![report(asked, current_key, dimmer, real)]
    } else {
        Vec::new()
    };
    Write {
        result: json!({"status": 254}),
        optimistic,
        reports,
    }
}

/// The level a dimmer stores for the write: 0–99, or the last non-zero one for a `restore`.
fn level(asked: &Asked<'_>, restore: bool) -> Value {
    let level = if restore {
        f64::from(
            lock(asked.devices.last_levels)
                .get(&asked.node)
                .copied()
                .unwrap_or(99),
        )
    } else {
        asked.new.as_f64().unwrap_or(0.0).clamp(0.0, 99.0)
    };
    json!(level.round() as u8)
}

/// The device's report after the verification: its `real` state (and a plug's power).
fn report(asked: &Asked<'_>, current_key: &str, dimmer: bool, real: Value) -> Report {
    let (devices, node_id) = (asked.devices, asked.node);
    let generation = devices.next_generation(node_id, current_key);
    // A plug's power comes first: whoever waits for the switch's report then reads a
    // state with the power that goes with it.
    let mut set = Vec::new();
    if !dimmer && devices.has_value(node_id, POWER_KEY) {
        set.push((POWER_KEY.to_owned(), watts_of(&real)));
    }
    set.push((current_key.to_owned(), real.clone()));
    if dimmer {
        set.push((asked.key.to_owned(), real));
    }
    Report {
        delay: if dimmer {
            devices.reports.dimmer
        } else {
            devices.reports.switch
        },
        node: node_id,
        watch: current_key.to_owned(),
        generation,
        set,
    }
}

/// What a plug draws in state `on`.
fn watts_of(on: &Value) -> Value {
    if on == &json!(true) {
        json!(42.5)
    } else {
        json!(0)
    }
}
