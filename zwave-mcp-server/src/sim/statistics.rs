//! The simulated driver's communication statistics, kept in the home as `getNodes` lists them
//! (each node's `statistics`; the controller's own on the controller node, as Z-Wave JS UI
//! lists them): what the recorded networks show at start, and what each command to a node
//! adds, as zwave-js counts it (a command answered: one sent, one received, the round trip
//! averaged in, `lastSeen` now; not answered: one that could not be sent). Both simulated
//! servers send them on: in the node list and the whole state, and as their events.

use serde_json::{Value, json};

use super::change::find_node;
use crate::network::NodeId;

/// A round trip to a node that answers (zwave-js's mock controller: ~67 ms).
pub(super) const ROUND_TRIP_MS: f64 = 67.0;

/// A node's statistics at the start of a simulated run: as recorded on zwave-js's mock
/// controller (tens of commands, ~67 ms round trips, nothing lost), last seen at `at_ms`.
pub(super) fn node(commands: u64, at_ms: i64) -> Value {
    json!({
        "commandsTX": commands, "commandsRX": commands.saturating_sub(1),
        "commandsDroppedRX": 0, "commandsDroppedTX": 0, "timeoutResponse": 0,
        "rtt": 67.5, "lastSeen": date(at_ms),
    })
}

/// The controller's statistics at the start of a simulated run, as recorded.
pub(super) fn controller() -> Value {
    json!({
        "messagesTX": 22, "messagesRX": 414, "messagesDroppedRX": 0, "NAK": 0, "CAN": 0,
        "timeoutACK": 0, "timeoutResponse": 0, "timeoutCallback": 0, "messagesDroppedTX": 0,
    })
}

/// `at_ms` as zwave-js serializes a date (`2026-11-24T06:02:24.165Z`).
pub(super) fn date(at_ms: i64) -> Value {
    jiff::Timestamp::from_millisecond(at_ms).map_or(Value::Null, |at| json!(at.to_string()))
}

/// A command to `node` was answered (`answered`) or not, at `now_ms`, taking `rtt_ms`:
/// its statistics and the controller's count it. Returns the node's and the controller's
/// statistics after it, for the events that tell it.
pub(super) fn count(
    nodes: &mut [Value],
    node: NodeId,
    answered: bool,
    rtt_ms: f64,
    now_ms: i64,
) -> Option<(Value, Value)> {
    find_node(nodes, node)?;
    let controller = nodes
        .iter_mut()
        .find(|found| found["isControllerNode"] == json!(true))
        .map(|found| {
            let statistics = &mut found["statistics"];
            add(statistics, "messagesTX", 1);
            add(statistics, "messagesRX", if answered { 2 } else { 1 });
            statistics.clone()
        })
        .unwrap_or_else(controller);
    let found = nodes.iter_mut().find(|found| found["id"] == json!(node))?;
    let statistics = &mut found["statistics"];
    if answered {
        add(statistics, "commandsTX", 1);
        add(statistics, "commandsRX", 1);
        // zwave-js averages round trips exponentially.
        let rtt = statistics["rtt"]
            .as_f64()
            .map_or(rtt_ms, |was| was * 0.75 + rtt_ms * 0.25);
        statistics["rtt"] = json!((rtt * 10.0).round() / 10.0);
        statistics["lastSeen"] = date(now_ms);
        found["lastActive"] = json!(now_ms);
    } else {
        add(statistics, "commandsDroppedTX", 1);
    }
    Some((found["statistics"].clone(), controller))
}

/// Adds `by` to the count `field` of `statistics` (made an object when it was none).
fn add(statistics: &mut Value, field: &str, by: u64) {
    if !statistics.is_object() {
        *statistics = json!({});
    }
    let was = statistics[field].as_u64().unwrap_or(0);
    statistics[field] = json!(was.saturating_add(by));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_answered_command_counts_sent_received_and_the_round_trip_and_a_lost_one_a_failure() {
        let mut home = crate::sim::home::demo_home(0);
        let before = find_node(&home, NodeId(2)).unwrap()["statistics"].clone();
        let (after, controller) = count(&mut home, NodeId(2), true, 87.5, 5_000).unwrap();
        assert_eq!(
            after["commandsTX"],
            json!(before["commandsTX"].as_u64().unwrap() + 1)
        );
        assert_eq!(after["rtt"], json!(72.5));
        assert_eq!(after["lastSeen"], json!("1970-01-01T00:00:05Z"));
        assert_eq!(controller["messagesTX"], json!(23));
        let (lost, _) = count(&mut home, NodeId(2), false, 0.0, 6_000).unwrap();
        assert_eq!(lost["commandsDroppedTX"], json!(1));
        assert_eq!(lost["lastSeen"], after["lastSeen"]);
        assert!(count(&mut home, NodeId(99), true, 1.0, 0).is_none());
    }
}
