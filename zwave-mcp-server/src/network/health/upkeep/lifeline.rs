//! A lifeline health check: Z-Wave JS UI's `checkLifelineHealth [nodeId, rounds]` or
//! zwave-js-server's `node.check_lifeline_health {nodeId, rounds}`, answered at its end with
//! zwave-js's summary (`{rating, results}`; Z-Wave JS UI adds `targetNodeId`, zwave-js-server
//! nests it as `{summary}`). Each round sends ten pings (and, to a device with Powerlevel,
//! power-level tests) and is rated 0–10; the check's rating is its worst round's.
//! zwave-js-server tells its caller each round (`check lifeline health progress`); Z-Wave JS
//! UI tells its web UI only. Aborted (`abortHealthCheck [nodeId]`, `node.abort_health_check
//! {nodeId}`), zwave-js ends it within seconds with the rounds done so far.

use std::time::Duration;

use serde_json::{Value, json};
use tokio::sync::{broadcast, mpsc};
use tokio_util::sync::CancellationToken;
use tracing::{info, warn};

use super::{
    Upkeep, UpkeepProgress, UpkeepResult, UpkeepSignal,
    outcome::{HEALTH_CHECK_ROUNDS, UpkeepError, lifeline_summary},
    run::{call_bound, ended_or},
};
use crate::network::{Network, NetworkError, NodeId, handle::Connection, mqtt::call};

impl Network {
    /// Checks `node`'s lifeline over [`HEALTH_CHECK_ROUNDS`] rounds; once `abort` is
    /// cancelled, asks Z-Wave JS to abort and returns the rounds done by then.
    pub(super) async fn check_lifeline(
        &self,
        node: NodeId,
        progress: &mpsc::Sender<UpkeepProgress>,
        abort: &CancellationToken,
        bound: Duration,
    ) -> Result<UpkeepResult, UpkeepError> {
        let rounds = HEALTH_CHECK_ROUNDS;
        let mut signals = self.core.upkeep_signals.subscribe();
        let (api, summary) = match &self.connection {
            Connection::Mqtt(shared) => {
                let api = "checkLifelineHealth";
                let check = call::call_within(
                    shared,
                    api,
                    vec![json!(node.0), json!(rounds)],
                    call_bound(bound),
                );
                let send_abort = || async {
                    call::call(shared, "abortHealthCheck", vec![json!(node.0)])
                        .await
                        .map(drop)
                };
                let summary = watch_check(check, node, progress, &mut signals, abort, send_abort)
                    .await
                    .map_err(ended_or(Upkeep::CheckLifeline, bound))?;
                (api, summary)
            }
            Connection::ZwaveJsServer(client, timeout) => {
                let api = "node.check_lifeline_health";
                let check = async {
                    client
                        .request(
                            api,
                            json!({"nodeId": node.0, "rounds": rounds}),
                            call_bound(bound),
                        )
                        .await
                        .inspect_err(|err| self.reload_when_not_found(err))
                        .map_err(NetworkError::from)
                };
                let send_abort = || async {
                    client
                        .request(
                            "node.abort_health_check",
                            json!({"nodeId": node.0}),
                            *timeout,
                        )
                        .await
                        .map(drop)
                        .map_err(NetworkError::from)
                };
                let result = watch_check(check, node, progress, &mut signals, abort, send_abort)
                    .await
                    .map_err(ended_or(Upkeep::CheckLifeline, bound))?;
                (api, result.get("summary").cloned().unwrap_or(Value::Null))
            }
        };
        let (rating, done) = lifeline_summary(api, &summary)?;
        let aborted = abort.is_cancelled() && done.len() < usize::from(rounds);
        Ok(UpkeepResult::Lifeline {
            rating,
            rounds: done,
            aborted,
        })
    }
}

/// Waits for `check`'s answer, passing on its rounds as progress; once `abort` is cancelled,
/// sends the abort once (its failure is logged: the check's answer still ends it, or the
/// operation's bound does).
async fn watch_check<F, A>(
    check: impl Future<Output = Result<Value, NetworkError>>,
    node: NodeId,
    progress: &mpsc::Sender<UpkeepProgress>,
    signals: &mut broadcast::Receiver<(NodeId, UpkeepSignal)>,
    abort: &CancellationToken,
    send_abort: impl FnOnce() -> F,
) -> Result<Value, NetworkError>
where
    F: Future<Output = Result<(), A>>,
    A: std::fmt::Display,
{
    tokio::pin!(check);
    let mut send_abort = Some(send_abort);
    let mut listening = true;
    loop {
        tokio::select! {
            // The check first: it is sent on its first poll, before any abort is.
            biased;
            answer = &mut check => {
                // The last round's progress came before the answer: passed on first.
                while let Ok((about, signal)) = signals.try_recv() {
                    if let UpkeepSignal::HealthRound { round, total, rating } = signal && about == node {
                        let _ = progress.try_send(UpkeepProgress::HealthRound { round, total, rating });
                    }
                }
                return answer;
            }
            signal = signals.recv(), if listening => match signal {
                Ok((about, UpkeepSignal::HealthRound { round, total, rating })) if about == node => {
                    let _ = progress.try_send(UpkeepProgress::HealthRound { round, total, rating });
                }
                Ok(_) | Err(broadcast::error::RecvError::Lagged(_)) => {}
                Err(broadcast::error::RecvError::Closed) => listening = false,
            },
            () = abort.cancelled(), if send_abort.is_some() => {
                if let Some(send) = send_abort.take() {
                    match send().await {
                        Ok(()) => info!(%node, "asked Z-Wave JS to abort the lifeline health check"),
                        Err(err) => warn!(%node, error = %err, "asking Z-Wave JS to abort the lifeline health check failed"),
                    }
                }
            }
        }
    }
}
