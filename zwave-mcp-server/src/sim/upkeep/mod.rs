//! Upkeep as the simulated driver runs it, whichever server carries it: a re-interview's
//! stages (`captures/upkeep/FACTS.md`: Z-Wave JS UI's list shows `interviewStage` None →
//! NodeInfo → CommandClasses → Complete with `interviewProgress` up to 100; zwave-js-server
//! sends a stage event for ProtocolInfo, NodeInfo, CommandClasses, OverwriteConfig and
//! Complete), a lifeline health check's rounds, rated as zwave-js rates them, and a route
//! rebuild. The lab's mock controller cannot run a health check (it lacks GetRoutingInfo) and
//! fails every route rebuild; these follow what zwave-js does on a controller that can.

use std::{
    collections::{HashMap, HashSet},
    sync::{
        Arc,
        atomic::{AtomicBool, Ordering},
    },
    time::Duration,
};

use serde_json::{Value, json};

use crate::network::NodeId;

pub(super) mod gateway;

/// How the simulated driver runs upkeep, and the health checks under way.
#[derive(Debug)]
pub(super) struct UpkeepKnobs {
    /// Between two steps of an interview.
    pub(super) interview_step: Duration,
    /// Nodes whose interview never gets past its command classes.
    pub(super) stalls: HashSet<NodeId>,
    /// How long a health check's round takes.
    pub(super) health_round: Duration,
    /// Health checks under way, by node, with their abort flag.
    pub(super) checks: HashMap<NodeId, Arc<AtomicBool>>,
}

impl Default for UpkeepKnobs {
    fn default() -> Self {
        Self {
            interview_step: Duration::from_millis(150),
            stalls: HashSet::new(),
            health_round: Duration::from_millis(20),
            checks: HashMap::new(),
        }
    }
}

/// The interview's steps as Z-Wave JS UI lists them: `(interviewStage, interviewProgress)`,
/// as recorded (the percentage climbs within CommandClasses).
pub(super) const LISTED_STEPS: [(&str, u8); 6] = [
    ("None", 0),
    ("NodeInfo", 1),
    ("CommandClasses", 5),
    ("CommandClasses", 55),
    ("Complete", 81),
    ("Complete", 100),
];

/// The stages zwave-js-server sends `interview stage completed` for, in order.
pub(super) const STAGES: [&str; 5] = [
    "ProtocolInfo",
    "NodeInfo",
    "CommandClasses",
    "OverwriteConfig",
    "Complete",
];

/// How many of [`LISTED_STEPS`] / [`STAGES`] a stalled interview gets through (it stops in
/// CommandClasses).
pub(super) const STALLED_AT: usize = 3;

/// Starts a health check on `node` with its abort flag, unless one runs.
///
/// # Errors
/// zwave-js's words when one runs already.
pub(super) fn begin_check(
    knobs: &mut UpkeepKnobs,
    node: NodeId,
) -> Result<Arc<AtomicBool>, String> {
    if knobs.checks.contains_key(&node) {
        return Err("A health check is already in progress for this node! (ZW0400)".to_owned());
    }
    let abort = Arc::new(AtomicBool::new(false));
    knobs.checks.insert(node, Arc::clone(&abort));
    Ok(abort)
}

/// Aborts the health check on `node`; whether one ran.
pub(super) fn abort_check(knobs: &UpkeepKnobs, node: NodeId) -> bool {
    knobs
        .checks
        .get(&node)
        .inspect(|abort| abort.store(true, Ordering::SeqCst))
        .is_some()
}

/// zwave-js's refusal of a number of rounds outside 1–10, if it is.
pub(super) fn refused_rounds(rounds: Option<&Value>) -> Option<String> {
    let rounds = rounds.map_or(Some(5), Value::as_u64);
    (!rounds.is_some_and(|rounds| (1..=10).contains(&rounds)))
        .then(|| "The number of health check rounds must be between 1 and 10! (ZW0322)".to_owned())
}

/// One round's result (`lastResult`) on a node that answers or not: ten pings, the worst
/// latency at the recorded round trip, three neighbours.
pub(super) fn round(answering: bool) -> Value {
    let (latency, failed) = if answering { (70, 0) } else { (0, 10) };
    let mut round = json!({
        "latency": latency, "failedPingsNode": failed, "numNeighbors": 3,
        "routeChanges": 0, "snrMargin": 24,
    });
    round["rating"] = json!(rating(failed, latency, 3));
    round
}

/// zwave-js's rating of a round (no Powerlevel, a good signal): 10 perfect, 0 unreachable.
fn rating(failed_pings: u64, latency_ms: u64, neighbors: u64) -> u64 {
    match (failed_pings, latency_ms) {
        (10.., _) => 0,
        (3.., _) => 1,
        (2, _) | (_, 1001..) => 2,
        (1, _) | (_, 501..) => 3,
        (_, 251..) => 4,
        (_, 101..) => 5,
        _ if neighbors <= 2 => 8,
        (_, 51..) => 9,
        _ => 10,
    }
}

/// The summary of the rounds done: the worst round's rating (0 with none done).
pub(super) fn summary(rounds: &[Value]) -> Value {
    let rating = rounds
        .iter()
        .filter_map(|round| round["rating"].as_u64())
        .min()
        .unwrap_or(0);
    json!({ "rating": rating, "results": rounds })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rounds_are_rated_as_zwave_js_rates_them() {
        assert_eq!(round(true)["rating"], 9);
        assert_eq!(round(false)["rating"], 0);
        assert_eq!(rating(0, 20, 3), 10);
        assert_eq!(rating(0, 20, 2), 8);
        assert_eq!(rating(1, 20, 3), 3);
        assert_eq!(summary(&[round(true), round(false)])["rating"], 0);
        assert_eq!(summary(&[])["rating"], 0);
    }

    #[test]
    fn rounds_outside_one_to_ten_are_refused_in_zwave_js_words() {
        assert!(refused_rounds(None).is_none());
        assert!(refused_rounds(Some(&json!(10))).is_none());
        for bad in [json!(0), json!(11), json!("5")] {
            assert_eq!(
                refused_rounds(Some(&bad)).as_deref(),
                Some("The number of health check rounds must be between 1 and 10! (ZW0322)")
            );
        }
    }
}
