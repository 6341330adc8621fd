//! A call's progress: its progress token (from the request's `_meta`) and the
//! `notifications/progress` sent for it, each further than the last (MCP requires the
//! progress value to grow). Without a token, nothing is sent.

use rmcp::{
    Peer, RoleServer,
    model::{ProgressNotificationParam, ProgressToken},
    service::RequestContext,
};
use tracing::debug;

use crate::network::health::upkeep::UpkeepProgress;

/// Where a call's progress goes.
pub(super) struct Progress {
    to: Option<(ProgressToken, Peer<RoleServer>)>,
    last: Option<f64>,
}

impl Progress {
    /// The progress of the call `context` belongs to.
    pub(super) fn of(context: &RequestContext<RoleServer>) -> Self {
        Self {
            to: context
                .meta
                .get_progress_token()
                .map(|token| (token, context.peer.clone())),
            last: None,
        }
    }

    /// Sends `message` at `progress` (of `total`, when known), unless it is no further than
    /// the last sent. Queued for the transport in order (a client that stopped reading is
    /// the transport's bound to keep).
    pub(super) async fn send(&mut self, progress: f64, total: Option<f64>, message: String) {
        let Some((token, peer)) = &self.to else {
            return;
        };
        if self.last.is_some_and(|last| progress <= last) {
            return;
        }
        self.last = Some(progress);
        let mut param =
            ProgressNotificationParam::new(token.clone(), progress).with_message(message);
        param.total = total;
        if let Err(err) = peer.notify_progress(param).await {
            debug!(error = %err, "a progress notification could not be sent");
        }
    }
}

/// Where `heard` puts the progress: a health check's round of its rounds, else the count of
/// reports so far (an interview's stages are not known in advance; its percentage, when
/// the gateway says it, is in the message).
pub(super) fn position(heard: &UpkeepProgress, step: f64) -> (f64, Option<f64>) {
    match heard {
        UpkeepProgress::HealthRound { round, total, .. } => {
            (f64::from(*round), Some(f64::from(*total)))
        }
        UpkeepProgress::Begun | UpkeepProgress::Interview { .. } => (step, None),
    }
}
