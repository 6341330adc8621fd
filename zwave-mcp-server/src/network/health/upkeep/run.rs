//! [`Network::start_upkeep`]: an upkeep operation as a task of its own, claimed in the
//! [`UpkeepBook`](super::UpkeepBook) first, bounded, with its progress and its outcome handed
//! to the caller through an [`UpkeepRun`]. The caller may stop waiting (its own bound, or a
//! cancellation); the task then watches Z-Wave JS on, up to [`WATCHED_FOR`] times the
//! caller's bound, keeps the device claimed meanwhile, and keeps the outcome for the next
//! call on the device.

use std::{sync::Arc, time::Duration};

use tokio::sync::{mpsc, oneshot};
use tokio_util::sync::CancellationToken;
use tracing::info;

use super::{LateOutcome, Upkeep, UpkeepError, UpkeepOutcome, UpkeepResult};
use crate::network::{
    Network, NetworkError, NodeId,
    core::{Core, lock},
    now_ms,
};

/// How many times its caller's bound an operation is watched for in all: a re-interview of a
/// sleeping device waits for its wake-up, and one that never ends must end somewhere.
pub const WATCHED_FOR: u32 = 4;

/// Progress reports a caller has not read yet, at most (older ones are not held back for it:
/// a report that finds the queue full is dropped).
const PROGRESS_QUEUE: usize = 32;

/// What is heard of an operation under way, backend-neutral.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum UpkeepProgress {
    /// Z-Wave JS took the command: the operation runs.
    Begun,
    /// The interview reached `stage`; `percent`: how far, when the gateway says
    /// (Z-Wave JS UI's `interviewProgress`).
    Interview {
        /// The stage (`NodeInfo`, `CommandClasses`, `Complete`, …).
        stage: String,
        /// How far, 0–100.
        percent: Option<u8>,
    },
    /// A health check's round ended.
    HealthRound {
        /// Which round, from 1.
        round: u8,
        /// Of how many.
        total: u8,
        /// Its rating, 0–10.
        rating: u8,
    },
}

/// An operation under way, as its caller holds it.
pub struct UpkeepRun {
    /// Its progress, in order.
    pub progress: mpsc::Receiver<UpkeepProgress>,
    /// Its outcome, once it ended.
    pub done: oneshot::Receiver<Result<UpkeepOutcome, UpkeepError>>,
    /// Cancelling this asks Z-Wave JS to abort it, where it can (a health check).
    pub abort: CancellationToken,
    node: NodeId,
    operation: Upkeep,
    asked_ms: i64,
    core: Arc<Core>,
}

impl UpkeepRun {
    /// Its caller stops waiting: the book says so to a second caller, and from now on the
    /// outcome is kept for the next call on the device. An outcome sent in the moment before
    /// is returned (it would otherwise be lost with the channel).
    pub fn stop_waiting(&mut self) -> Option<Result<UpkeepOutcome, UpkeepError>> {
        lock(&self.core.upkeep).unwatched(self.node);
        self.done.close();
        self.done.try_recv().ok()
    }

    /// Its caller can tell no one `outcome` (its call was cancelled): kept for the next call
    /// on the device, as one that came after its caller stopped waiting.
    pub fn keep_for_later(&self, outcome: Result<UpkeepOutcome, UpkeepError>) {
        let late = LateOutcome {
            operation: self.operation,
            asked_ms: self.asked_ms,
            ended_ms: now_ms(),
            outcome,
        };
        lock(&self.core.upkeep).keep_late(self.node, late);
    }
}

/// The node's claim in the book, given up when the task ends (however it ends).
struct Claim {
    core: Arc<Core>,
    node: NodeId,
}

impl Drop for Claim {
    fn drop(&mut self) {
        lock(&self.core.upkeep).release(self.node);
    }
}

impl Network {
    /// Starts `operation` on `node`, its caller waiting at most `limit` (the task watches it
    /// up to [`WATCHED_FOR`] times as long).
    ///
    /// # Errors
    /// The node has an operation running ([`UpkeepError::Busy`]), or too many run
    /// ([`UpkeepError::TooMany`]): nothing was sent.
    pub fn start_upkeep(
        &self,
        node: NodeId,
        operation: Upkeep,
        limit: Duration,
    ) -> Result<UpkeepRun, UpkeepError> {
        let asked_ms = now_ms();
        lock(&self.core.upkeep).claim(node, operation, asked_ms)?;
        let claim = Claim {
            core: Arc::clone(&self.core),
            node,
        };
        let (progress, progress_rx) = mpsc::channel(PROGRESS_QUEUE);
        let (done, done_rx) = oneshot::channel();
        let abort = CancellationToken::new();
        let (network, aborted) = (self.clone(), abort.clone());
        let bound = limit.saturating_mul(WATCHED_FOR);
        tokio::spawn(async move {
            let started = std::time::Instant::now();
            let body = network.upkeep(node, operation, &progress, &aborted, bound);
            let outcome = match tokio::time::timeout(bound, body).await {
                Ok(Ok(result)) => Ok(UpkeepOutcome {
                    operation,
                    took: started.elapsed(),
                    result,
                }),
                Ok(Err(err)) => Err(err),
                Err(_) => Err(UpkeepError::NotEnded {
                    operation,
                    after: bound,
                }),
            };
            network.core.commanded();
            if let Err(outcome) = done.send(outcome) {
                info!(%node, operation = operation.name(), ok = outcome.is_ok(), "an upkeep operation ended after its caller stopped waiting: kept for the next call on the device");
                let late = LateOutcome {
                    operation,
                    asked_ms,
                    ended_ms: now_ms(),
                    outcome,
                };
                lock(&network.core.upkeep).keep_late(node, late);
            }
            drop(claim);
        });
        Ok(UpkeepRun {
            progress: progress_rx,
            done: done_rx,
            abort,
            node,
            operation,
            asked_ms,
            core: Arc::clone(&self.core),
        })
    }

    /// Reads the book of upkeep operations (keep it short).
    pub fn with_upkeep<R>(&self, f: impl FnOnce(&mut super::UpkeepBook) -> R) -> R {
        f(&mut lock(&self.core.upkeep))
    }

    async fn upkeep(
        &self,
        node: NodeId,
        operation: Upkeep,
        progress: &mpsc::Sender<UpkeepProgress>,
        abort: &CancellationToken,
        bound: Duration,
    ) -> Result<UpkeepResult, UpkeepError> {
        match operation {
            Upkeep::Reinterview => self.reinterview(node, progress, bound).await,
            Upkeep::CheckLifeline => self.check_lifeline(node, progress, abort, bound).await,
            Upkeep::RebuildRoutes => self.rebuild_routes(node, bound).await,
        }
    }
}

/// A call's own bound: a moment inside the task's, so that the call ends itself (and forgets
/// its request) before the task's bound drops it.
pub(super) fn call_bound(bound: Duration) -> Duration {
    bound.saturating_sub(Duration::from_millis(250))
}

/// A call of `operation` that timed out at [`call_bound`] is the operation not ending within
/// `bound`; any other error is itself.
pub(super) fn ended_or(operation: Upkeep, bound: Duration) -> impl Fn(NetworkError) -> UpkeepError {
    move |err| match err {
        NetworkError::Timeout { .. }
        | NetworkError::ZwaveJsServer(
            crate::network::zwave_js_server::ZwaveJsServerError::Timeout { .. },
        ) => UpkeepError::NotEnded {
            operation,
            after: bound,
        },
        other => UpkeepError::Network(other),
    }
}
