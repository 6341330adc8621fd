//! The simulated driver's communication statistics, kept in the home as `getNodes` lists them
//! (each node's `statistics`; the controller's own on the controller node, as Z-Wave JS UI
//! lists them): what the recorded networks show at start, and what each command to a node
//! adds, as the recorded sessions show zwave-js counting it (`captures/ws/ws-session.jsonl`):
//! a command the node acknowledged is one sent, its round trip averaged in and `lastSeen`
//! now, and a Get's answer one received; one it did not acknowledge changes none of the
//! node's counts (the controller's `messagesRX` moves, its `messagesTX` does not, in every
//! case). Both simulated servers send them on: in the node list and the whole state, and as
//! their events, before the command's answer.

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

/// What became of a command to a node.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Outcome {
    /// The node acknowledged it.
    Acknowledged,
    /// The node acknowledged it and answered (a Get).
    Answered,
    /// The node did not acknowledge it.
    Lost,
}

/// A command to `node` ended as `outcome` at `now_ms`, taking `rtt_ms`: the statistics count
/// it. Returns the node's statistics after it (`None` when they did not change: a lost
/// command) and the controller's, for the events that tell them; `None` for a node the home
/// does not have.
pub(super) fn count(
    nodes: &mut [Value],
    node: NodeId,
    outcome: Outcome,
    rtt_ms: f64,
    now_ms: i64,
) -> Option<(Option<Value>, Value)> {
    find_node(nodes, node)?;
    let controller = nodes
        .iter_mut()
        .find(|found| found["isControllerNode"] == json!(true))
        .map(|found| {
            add(&mut found["statistics"], "messagesRX", 1);
            found["statistics"].clone()
        })
        .unwrap_or_else(controller);
    let found = nodes.iter_mut().find(|found| found["id"] == json!(node))?;
    if outcome == Outcome::Lost {
        return Some((None, controller));
    }
    let statistics = &mut found["statistics"];
    add(statistics, "commandsTX", 1);
    if outcome == Outcome::Answered {
        add(statistics, "commandsRX", 1);
    }
    // zwave-js averages round trips exponentially.
    let rtt = statistics["rtt"]
        .as_f64()
        .map_or(rtt_ms, |was| was * 0.75 + rtt_ms * 0.25);
    statistics["rtt"] = json!((rtt * 10.0).round() / 10.0);
    statistics["lastSeen"] = date(now_ms);
    found["lastActive"] = json!(now_ms);
    Some((Some(found["statistics"].clone()), controller))
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
    fn an_acknowledged_command_counts_sent_and_the_round_trip_and_a_lost_one_nothing() {
        let mut home = crate::sim::home::demo_home(0);
        let before = find_node(&home, NodeId(2)).unwrap()["statistics"].clone();
        let (after, controller) =
            count(&mut home, NodeId(2), Outcome::Answered, 87.5, 5_000).unwrap();
        let after = after.unwrap();
        assert_eq!(
            after["commandsTX"],
            json!(before["commandsTX"].as_u64().unwrap() + 1)
        );
        assert_eq!(
            after["commandsRX"],
            json!(before["commandsRX"].as_u64().unwrap() + 1)
        );
        assert_eq!(after["rtt"], json!(72.5));
        assert_eq!(after["lastSeen"], json!("1970-01-01T00:00:05Z"));
        assert_eq!(
            (&controller["messagesTX"], &controller["messagesRX"]),
            (&json!(22), &json!(415))
        );
        let (lost, controller) = count(&mut home, NodeId(2), Outcome::Lost, 0.0, 6_000).unwrap();
        assert_eq!((lost, &controller["messagesRX"]), (None, &json!(416)));
        assert_eq!(find_node(&home, NodeId(2)).unwrap()["statistics"], after);
        assert!(count(&mut home, NodeId(99), Outcome::Acknowledged, 1.0, 0).is_none());
    }
}
