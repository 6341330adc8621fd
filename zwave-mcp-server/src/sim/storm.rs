//! A storm of value reports: the simulated gateway publishes new readings of its sensors and
//! meters at a steady rate, as a busy network does (every plug reporting its power, every
//! multisensor its temperature and light), to measure what that costs the server and the
//! tools it answers meanwhile.
//!
//! Each report changes the value in the simulated home too, so `getNodes` agrees with the
//! topics, and goes out as every other value report does (QoS 1, retained, the configured
//! topic and payload style). A value cycles through its reading at the start of the storm
//! plus 0.1, 0.2, … 0.5: every report is a change, none drifts, and none equals the reading
//! from before the storm.

use std::{
    sync::{
        Arc,
        atomic::{AtomicU64, Ordering},
    },
    time::{Duration, Instant},
};

use serde_json::{Value, json};
use tracing::info;

use super::{
    api::{publish, value_payload, value_topic},
    gateway::SimGateway,
    state::{Sim, lock},
};
use crate::network::now_ms;

/// Fastest storm a simulator can be asked for, in reports per second.
pub const MAX_STORM_RATE: u32 = 1_000_000;

/// The command classes whose values the storm reports: Multilevel Sensor and Meter.
const SENSOR: u64 = 49;
const METER: u64 = 50;

/// How often the storm's pace is checked; reports that fell due meanwhile go out together.
const TICK: Duration = Duration::from_millis(1);

/// How often a running storm logs what it published.
const LOG_EVERY: Duration = Duration::from_secs(5);

/// A running storm; dropping it stops it.
#[derive(Debug)]
pub struct Storm {
    task: tokio::task::JoinHandle<()>,
    published: Arc<AtomicU64>,
}

impl Storm {
    /// Reports handed to the broker connection so far.
    pub fn published(&self) -> u64 {
        self.published.load(Ordering::Relaxed)
    }
}

impl Drop for Storm {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// One value the storm reports: where it lives in the home and where it is published.
struct Target {
    node: usize,
    key: String,
    topic: String,
    base: f64,
}

impl SimGateway {
    /// Starts publishing `rate` value reports per second (at least 1), round robin over every
    /// read-only numeric reading of the home (Multilevel Sensor and Meter values). `None` when the home has
    /// no such value.
    pub fn storm(&self, rate: u32) -> Option<Storm> {
        let targets = targets(&self.sim);
        if targets.is_empty() {
            return None;
        }
        let published = Arc::new(AtomicU64::new(0));
        let task = tokio::spawn(run(
            Arc::clone(&self.sim),
            targets,
            rate.clamp(1, MAX_STORM_RATE),
            Arc::clone(&published),
        ));
        Some(Storm { task, published })
    }
}

/// Every read-only numeric sensor and meter value of the home, with its topic computed once.
fn targets(sim: &Sim) -> Vec<Target> {
    let nodes = lock(&sim.nodes);
    let mut targets = Vec::new();
    for (index, node) in nodes.iter().enumerate() {
        if node["virtual"] == json!(true) || node["isControllerNode"] == json!(true) {
            continue;
        }
        let Some(values) = node["values"].as_object() else {
            continue;
        };
        for (key, value) in values {
            let reading = matches!(value["commandClass"].as_u64(), Some(SENSOR | METER));
            if reading && value["type"] == "number" && value["writeable"] == json!(false) {
                let Some(base) = value["value"].as_f64() else {
                    continue;
                };
                targets.push(Target {
                    node: index,
                    key: key.clone(),
                    topic: value_topic(&sim.options, node, value),
                    base,
                });
            }
        }
    }
    targets
}

async fn run(sim: Arc<Sim>, targets: Vec<Target>, rate: u32, published: Arc<AtomicU64>) {
    info!(
        rate,
        values = targets.len(),
        "storm of value reports started"
    );
    let started = Instant::now();
    let mut logged = (started, 0);
    let mut tick = tokio::time::interval(TICK);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let mut sent: u64 = 0;
    loop {
        tick.tick().await;
        let due = (started.elapsed().as_secs_f64() * f64::from(rate)) as u64;
        while sent < due {
            let target = &targets[(sent % targets.len() as u64) as usize];
            let round = sent / targets.len() as u64;
            let reading = target.base + 0.1 * (1 + round % 5) as f64;
            if let Some(payload) = report(&sim, target, reading) {
                publish(&sim, target.topic.clone(), payload, true).await;
            }
            sent += 1;
            published.store(sent, Ordering::Relaxed);
        }
        if logged.0.elapsed() >= LOG_EVERY {
            let seconds = logged.0.elapsed().as_secs_f64();
            info!(
                published = sent,
                per_second = ((sent - logged.1) as f64 / seconds).round(),
                "storm of value reports"
            );
            logged = (Instant::now(), sent);
        }
    }
}

/// Stores `reading` in the home and returns the payload that reports it.
fn report(sim: &Sim, target: &Target, reading: f64) -> Option<Vec<u8>> {
    let mut nodes = lock(&sim.nodes);
    let value = nodes
        .get_mut(target.node)?
        .get_mut("values")?
        .get_mut(&target.key)?;
    value["value"] = Value::from((reading * 10.0).round() / 10.0);
    value["lastUpdate"] = json!(now_ms());
    Some(value_payload(&sim.options, value))
}
