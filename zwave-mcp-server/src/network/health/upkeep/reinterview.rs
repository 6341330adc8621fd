//! A re-interview: Z-Wave JS UI's `refreshInfo [nodeId]` (answered at once, no result) or
//! zwave-js-server's `node.refresh_info {nodeId}` (`{}` at once); zwave-js then interviews the
//! device again, which takes seconds (a sleeping device: until it wakes up). Its end is heard
//! as zwave-js-server's `interview completed` event, or, over MQTT, seen in Z-Wave JS UI's
//! node list: `interviewStage` `Complete` with `interviewProgress` 100 (`ready` stays true
//! throughout there; `captures/upkeep/FACTS.md`). zwave-js cannot stop an interview.

use std::time::Duration;

use serde_json::json;
use tokio::sync::{broadcast, mpsc};
use tracing::debug;

use super::{
    Upkeep, UpkeepError, UpkeepProgress, UpkeepResult, UpkeepSignal,
    run::{call_bound, ended_or},
};
use crate::network::{
    Network, NodeId, NodeStatus, handle::Connection, mqtt::call,
    zwave_js_server::ZwaveJsServerError,
};

/// The first pause between two readings of Z-Wave JS UI's node list while it interviews;
/// doubled after each, up to [`LIST_EVERY_MOST`] (a network's list is some 50 ms to read).
const LIST_EVERY: Duration = Duration::from_millis(250);
/// The longest pause between two readings of the node list.
const LIST_EVERY_MOST: Duration = Duration::from_secs(4);

/// The stage zwave-js's interview ends with.
const COMPLETE: &str = "Complete";

impl Network {
    /// Re-interviews `node`; returns once the interview completed.
    pub(super) async fn reinterview(
        &self,
        node: NodeId,
        progress: &mpsc::Sender<UpkeepProgress>,
        bound: Duration,
    ) -> Result<UpkeepResult, UpkeepError> {
        match &self.connection {
            Connection::Mqtt(shared) => {
                call::call_within(
                    shared,
                    "refreshInfo",
                    vec![json!(node.0)],
                    call_bound(bound),
                )
                .await?;
                let _ = progress.try_send(UpkeepProgress::Begun);
                self.interview_in_list(node, progress).await
            }
            Connection::ZwaveJsServer(client, _) => {
                // Before the command: its events may come before its result.
                let mut signals = self.core.upkeep_signals.subscribe();
                client
                    .request(
                        "node.refresh_info",
                        json!({"nodeId": node.0}),
                        call_bound(bound),
                    )
                    .await
                    .inspect_err(|err| self.reload_when_not_found(err))
                    .map_err(|err| ended_or(Upkeep::Reinterview, bound)(err.into()))?;
                let _ = progress.try_send(UpkeepProgress::Begun);
                follow_interview(&mut signals, node, progress).await
            }
        }
    }

    /// Over MQTT: reads the node list until it shows `node`'s interview complete; each
    /// stage (and how far) seen on the way is progress.
    async fn interview_in_list(
        &self,
        node: NodeId,
        progress: &mpsc::Sender<UpkeepProgress>,
    ) -> Result<UpkeepResult, UpkeepError> {
        let mut pause = LIST_EVERY;
        let mut stages: Vec<String> = Vec::new();
        let mut last = None;
        loop {
            tokio::time::sleep(pause).await;
            pause = (pause * 2).min(LIST_EVERY_MOST);
            if let Err(err) = self.reload_nodes().await {
                // The bound of the whole operation ends it if this lasts.
                debug!(error = %err, "reading the node list during a re-interview failed");
                continue;
            }
            let Some(info) = self.node(node) else {
                return Err(UpkeepError::Failed {
                    operation: Upkeep::Reinterview,
                    message: format!("node {node} is no longer in the node list"),
                });
            };
            // zwave-js gives the interview up when the device does not answer (the lab:
            // `dead`, then `interview failed`, "The node is dead"); the list shows it dead.
            if info.status == Some(NodeStatus::Dead) {
                return Err(UpkeepError::Failed {
                    operation: Upkeep::Reinterview,
                    message: "the device did not answer: Z-Wave JS marked it dead and gave the interview up".to_owned(),
                });
            }
            let seen = (info.interview_stage.clone(), info.interview_progress);
            if last.as_ref() != Some(&seen) {
                if let Some(stage) = &seen.0 {
                    if stages.last() != Some(stage) {
                        stages.push(stage.clone());
                    }
                    let _ = progress.try_send(UpkeepProgress::Interview {
                        stage: stage.clone(),
                        percent: seen.1,
                    });
                }
                last = Some(seen.clone());
            }
            if seen.0.as_deref() == Some(COMPLETE) && seen.1.is_none_or(|percent| percent >= 100) {
                return Ok(UpkeepResult::Reinterviewed { stages });
            }
        }
    }

    /// A command named a node zwave-js-server does not have: the node list is out of date.
    pub(super) fn reload_when_not_found(&self, err: &ZwaveJsServerError) {
        if matches!(err, ZwaveJsServerError::Failed { failure, .. } if failure.code == "node_not_found")
        {
            self.request_reload();
        }
    }
}

/// Over zwave-js-server: the interview's events for `node` until it completed or failed for
/// good.
async fn follow_interview(
    signals: &mut broadcast::Receiver<(NodeId, UpkeepSignal)>,
    node: NodeId,
    progress: &mpsc::Sender<UpkeepProgress>,
) -> Result<UpkeepResult, UpkeepError> {
    let mut stages = Vec::new();
    loop {
        let signal = match signals.recv().await {
            Ok((about, signal)) if about == node => signal,
            Ok(_) | Err(broadcast::error::RecvError::Lagged(_)) => continue,
            // The core lives as long as this network: never while this waits.
            Err(broadcast::error::RecvError::Closed) => return std::future::pending().await,
        };
        match signal {
            UpkeepSignal::StageCompleted(stage) => {
                let _ = progress.try_send(UpkeepProgress::Interview {
                    stage: stage.clone(),
                    percent: None,
                });
                stages.push(stage);
            }
            UpkeepSignal::InterviewCompleted => return Ok(UpkeepResult::Reinterviewed { stages }),
            UpkeepSignal::InterviewFailed {
                message,
                last: true,
            } => {
                return Err(UpkeepError::Failed {
                    operation: Upkeep::Reinterview,
                    message,
                });
            }
            UpkeepSignal::InterviewStarted
            | UpkeepSignal::InterviewFailed { last: false, .. }
            | UpkeepSignal::HealthRound { .. } => {}
        }
    }
}
