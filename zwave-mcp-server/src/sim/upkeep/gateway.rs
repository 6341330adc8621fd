//! The simulated gateway's upkeep APIs, answered as Z-Wave JS UI answers them
//! (`captures/upkeep/FACTS.md`): `refreshInfo` at once without a result, the interview then
//! shown in the node list; `checkLifelineHealth` at its end with the summary and
//! `targetNodeId`, no progress over MQTT; `abortHealthCheck` refused when none runs;
//! `rebuildNodeRoutes` with `true` or `false`; an unknown node in Z-Wave JS UI's words.

use std::sync::{Arc, atomic::Ordering};

use serde_json::{Value, json};

use super::{LISTED_STEPS, STALLED_AT, abort_check, begin_check, refused_rounds, round, summary};
use crate::{
    network::NodeId,
    sim::{
        change::find_node,
        health::{counted, set_status},
        state::{Sim, lock},
        statistics::Outcome,
    },
};

/// The node the first argument names, if the home has it.
fn known(sim: &Sim, args: &[Value]) -> Option<NodeId> {
    args.first()
        .and_then(Value::as_u64)
        .and_then(|id| u16::try_from(id).ok())
        .map(NodeId)
        .filter(|id| find_node(&lock(&sim.nodes), *id).is_some())
}

/// Z-Wave JS UI's words for a node it does not have (`Node 99 not found`).
fn not_found(args: &[Value]) -> String {
    let id = args
        .first()
        .map_or("undefined".to_owned(), Value::to_string);
    format!("Node {id} not found")
}

/// Sets `node`'s listed interview step.
fn list_step(sim: &Sim, node: NodeId, (stage, percent): (&str, u8)) {
    let mut nodes = lock(&sim.nodes);
    if let Some(found) = nodes.iter_mut().find(|n| n["id"] == json!(node)) {
        found["interviewStage"] = json!(stage);
        found["interviewProgress"] = json!(percent);
    }
}

/// `refreshInfo [nodeId]`: the interview restarts before the answer (its stage `None`, the
/// status `Unknown`), then runs its steps; a stalled one stops in CommandClasses; a node that
/// does not answer is marked dead.
pub(in crate::sim) async fn refresh_info(sim: &Arc<Sim>, args: &[Value]) -> Result<Value, String> {
    let node = known(sim, args).ok_or_else(|| not_found(args))?;
    list_step(sim, node, LISTED_STEPS[0]);
    set_status(sim, node, "Unknown").await;
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
        if !answering {
            // The driver gives up: the node dead, the interview's progress back to 0.
            tokio::time::sleep(step).await;
            set_status(&sim, node, "Dead").await;
            return;
        }
        let steps = if stalls {
            STALLED_AT
        } else {
            LISTED_STEPS.len()
        };
        for (at, listed) in LISTED_STEPS.iter().enumerate().take(steps).skip(1) {
            tokio::time::sleep(step).await;
            list_step(&sim, node, *listed);
            if at == 1 {
                set_status(&sim, node, "Alive").await;
            }
        }
    });
    Ok(Value::Null)
}

/// `checkLifelineHealth [nodeId, rounds?]`: the rounds, each `health_round` long, until done
/// or aborted; the summary with the controller as `targetNodeId`.
pub(in crate::sim) async fn check_lifeline_health(
    sim: &Arc<Sim>,
    args: &[Value],
) -> Result<Value, String> {
    let node = known(sim, args)
        .ok_or("Cannot read properties of undefined (reading 'checkLifelineHealth')")?;
    if let Some(refused) = refused_rounds(args.get(1)) {
        return Err(refused);
    }
    let rounds = args.get(1).and_then(Value::as_u64).unwrap_or(5);
    let (abort, every) = {
        let mut knobs = lock(&sim.knobs);
        (
            begin_check(&mut knobs.upkeep, node)?,
            knobs.upkeep.health_round,
        )
    };
    let mut done = Vec::new();
    for _ in 0..rounds {
        tokio::time::sleep(every).await;
        if abort.load(Ordering::SeqCst) {
            break;
        }
        let answering = !lock(&sim.knobs).unanswering.contains(&node);
        let outcome = if answering {
            Outcome::Acknowledged
        } else {
            Outcome::Lost
        };
        counted(sim, node, outcome).await;
        done.push(round(answering));
    }
    lock(&sim.knobs).upkeep.checks.remove(&node);
    let mut summary = summary(&done);
    summary["targetNodeId"] = json!(1);
    Ok(summary)
}

/// `abortHealthCheck [nodeId]`: no result; refused when no check runs.
pub(in crate::sim) fn abort_health_check(sim: &Arc<Sim>, args: &[Value]) -> Result<Value, String> {
    let node = known(sim, args).ok_or_else(|| not_found(args))?;
    if abort_check(&lock(&sim.knobs).upkeep, node) {
        Ok(Value::Null)
    } else {
        Err("Health check not in progress".to_owned())
    }
}

/// `rebuildNodeRoutes [nodeId]`: `true`, or `false` for a node that does not answer.
pub(in crate::sim) async fn rebuild_node_routes(
    sim: &Arc<Sim>,
    args: &[Value],
) -> Result<Value, String> {
    let node = known(sim, args).ok_or_else(|| not_found(args))?;
    let (answering, takes) = {
        let knobs = lock(&sim.knobs);
        (
            !knobs.unanswering.contains(&node),
            knobs.upkeep.interview_step,
        )
    };
    tokio::time::sleep(takes).await;
    Ok(json!(answering))
}
