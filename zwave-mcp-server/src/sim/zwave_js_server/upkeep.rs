//! The simulated zwave-js-server's upkeep commands, answered as the real server answers them
//! (`captures/upkeep/FACTS.md`): `node.refresh_info` with `{}` at once, then to every
//! listener `interview started`, a `interview stage completed` per stage, `ready` with the
//! node's state and `interview completed`; `node.check_lifeline_health` with `{summary}` at
//! its end and each round's `check lifeline health progress` to its caller alone;
//! `node.abort_health_check` with `{}` whether a check runs or not;
//! `controller.rebuild_node_routes` with `{success}`.

use std::sync::{Arc, atomic::Ordering};

use serde_json::{Value, json};

use super::{
    shared::ServerSim,
    state::{node_state, statistics_updated, status_event},
};
use crate::{
    network::{NodeId, now_ms},
    sim::{
        change::find_node,
        state::lock,
        statistics::{self, Outcome},
        upkeep::{STAGES, STALLED_AT, abort_check, begin_check, refused_rounds, round, summary},
    },
};

/// A node event's text.
fn node_event(node: NodeId, event: &str, extra: Value) -> String {
    let mut body = json!({"source": "node", "event": event, "nodeId": node});
    if let (Value::Object(body), Value::Object(extra)) = (&mut body, extra) {
        body.extend(extra);
    }
    json!({"type": "event", "event": body}).to_string()
}

/// `node.refresh_info`: `{}`, then the interview's events to every listener, a step apart;
/// a stalled interview stops after its command classes.
pub(super) fn refresh_info(
    sim: &Arc<ServerSim>,
    node: NodeId,
    ok: impl Fn(Value) -> String,
) -> Vec<String> {
    let (step, stalls, answering) = {
        let knobs = lock(&sim.knobs);
        (
            knobs.upkeep.interview_step,
            knobs.upkeep.stalls.contains(&node),
            !knobs.unanswering.contains(&node),
        )
    };
    let sim = Arc::clone(sim);
    tokio::spawn(async move {
        let _ = sim
            .events
            .send((0, node_event(node, "interview started", json!({}))));
        if !answering {
            gives_up(&sim, node, step).await;
            return;
        }
        let stages = if stalls { STALLED_AT } else { STAGES.len() };
        for stage in STAGES.iter().take(stages) {
            tokio::time::sleep(step).await;
            let event = node_event(
                node,
                "interview stage completed",
                json!({"stageName": stage}),
            );
            let _ = sim.events.send((0, event));
        }
        if stalls {
            return;
        }
        let state = find_node(&lock(&sim.nodes), node).map(node_state);
        if let Some(state) = state {
            let _ = sim
                .events
                .send((0, node_event(node, "ready", json!({"nodeState": state}))));
        }
        let _ = sim
            .events
            .send((0, node_event(node, "interview completed", json!({}))));
    });
    vec![ok(json!({}))]
}

/// The interview of a node that does not answer, as recorded: its first stage, then `dead`
/// and `interview failed` ("The node is dead", final).
async fn gives_up(sim: &ServerSim, node: NodeId, step: std::time::Duration) {
    tokio::time::sleep(step).await;
    let stage = node_event(
        node,
        "interview stage completed",
        json!({"stageName": STAGES[0]}),
    );
    let _ = sim.events.send((0, stage));
    tokio::time::sleep(step).await;
    let was = {
        let mut nodes = lock(&sim.nodes);
        nodes
            .iter_mut()
            .find(|found| found["id"] == json!(node))
            .map(|found| {
                found["available"] = json!(false);
                std::mem::replace(&mut found["status"], json!("Dead"))
            })
    };
    if let Some(was) = was {
        let _ = sim.events.send((0, status_event(node, "dead", &was)));
    }
    let failed = json!({"args": {"errorMessage": "The node is dead", "isFinal": true}});
    let _ = sim
        .events
        .send((0, node_event(node, "interview failed", failed)));
}

/// `node.check_lifeline_health`: refused rounds at once; otherwise the rounds run apart from
/// the connection's other commands, each round's progress and the result to the caller.
pub(super) fn check_lifeline_health(
    sim: &Arc<ServerSim>,
    connection: u64,
    node: NodeId,
    command: &Value,
    id: Value,
) -> Vec<String> {
    let failed = |message: &str, code: u64, name: &str| {
        json!({"type": "result", "success": false, "messageId": id, "errorCode": "zwave_error",
            "zwaveErrorCode": code, "zwaveErrorCodeName": name, "zwaveErrorMessage": message})
        .to_string()
    };
    if let Some(refused) = refused_rounds(command.get("rounds")) {
        return vec![failed(&refused, 322, "Argument_Invalid")];
    }
    let rounds = command.get("rounds").and_then(Value::as_u64).unwrap_or(5);
    let (abort, every) = {
        let mut knobs = lock(&sim.knobs);
        match begin_check(&mut knobs.upkeep, node) {
            Ok(abort) => (abort, knobs.upkeep.health_round),
            Err(busy) => return vec![failed(&busy, 400, "HealthCheck_Busy")],
        }
    };
    let sim = Arc::clone(sim);
    tokio::spawn(async move {
        let mut done = Vec::new();
        for at in 1..=rounds {
            tokio::time::sleep(every).await;
            if abort.load(Ordering::SeqCst) {
                break;
            }
            let answering = !lock(&sim.knobs).unanswering.contains(&node);
            counted(&sim, node, answering);
            let result = round(answering);
            let progress = node_event(
                node,
                "check lifeline health progress",
                json!({
                    "round": at, "totalRounds": rounds, "lastRating": result["rating"], "lastResult": result,
                }),
            );
            let _ = sim.direct.send((connection, progress));
            done.push(result);
        }
        lock(&sim.knobs).upkeep.checks.remove(&node);
        let result = json!({"type": "result", "success": true, "messageId": id,
            "result": {"summary": summary(&done)}});
        let _ = sim.direct.send((connection, result.to_string()));
    });
    Vec::new()
}

/// A health check's pings counted, their statistics sent to every listener.
fn counted(sim: &ServerSim, node: NodeId, answering: bool) {
    let outcome = if answering {
        Outcome::Acknowledged
    } else {
        Outcome::Lost
    };
    let counted = statistics::count(
        &mut lock(&sim.nodes),
        node,
        outcome,
        statistics::ROUND_TRIP_MS,
        now_ms(),
    );
    if let Some((statistics, controller)) = counted {
        for event in statistics_updated(node, statistics.as_ref(), &controller) {
            let _ = sim.events.send((0, event));
        }
    }
}

/// `node.abort_health_check`: `{}`, a check running or not (the real server's answer).
pub(super) fn abort_health_check(
    sim: &Arc<ServerSim>,
    node: NodeId,
    ok: impl Fn(Value) -> String,
) -> Vec<String> {
    abort_check(&lock(&sim.knobs).upkeep, node);
    vec![ok(json!({}))]
}

/// `controller.rebuild_node_routes`: `{success}` once done (`false` for a node that does not
/// answer); a node it does not have: `Controller_NodeNotFound`, as recorded.
pub(super) fn rebuild_node_routes(
    sim: &Arc<ServerSim>,
    connection: u64,
    node: Option<NodeId>,
    id: Value,
) -> Vec<String> {
    let known = node.filter(|node| find_node(&lock(&sim.nodes), *node).is_some());
    let Some(node) = known else {
        let shown = node.map_or("undefined".to_owned(), |node| node.0.to_string());
        return vec![
            json!({"type": "result", "success": false, "messageId": id,
            "errorCode": "zwave_error", "zwaveErrorCode": 211,
            "zwaveErrorCodeName": "Controller_NodeNotFound",
            "zwaveErrorMessage": format!("Node {shown} was not found! (ZW0211)")})
            .to_string(),
        ];
    };
    let (answering, takes) = {
        let knobs = lock(&sim.knobs);
        (
            !knobs.unanswering.contains(&node),
            knobs.upkeep.interview_step,
        )
    };
    let sim = Arc::clone(sim);
    tokio::spawn(async move {
        tokio::time::sleep(takes).await;
        let result = json!({"type": "result", "success": true, "messageId": id,
            "result": {"success": answering}});
        let _ = sim.direct.send((connection, result.to_string()));
    });
    Vec::new()
}
