//! How a command is confirmed: the device's word awaited within the wait ([`decide`]), asked
//! for when it sends none of its own ([`read_back`]) or when the cache may show another
//! client's echo ([`verify`]), and watched for after the answer ([`settle_when_reported`]).
//!
//! [`decide`]: ZwaveServer::decide
//! [`read_back`]: ZwaveServer::read_back
//! [`settle_when_reported`]: ZwaveServer::settle_when_reported

use tokio_util::sync::CancellationToken;
use tracing::{debug, warn};

use crate::{
    devices,
    mcp::{
        ZwaveServer,
        commands::{AckedCommand, Reported},
    },
    network::{Network, NodeId, NodeInfo},
};

/// How long a command's device is watched for its first report after the answer.
const WATCH: std::time::Duration = std::time::Duration::from_secs(120);

impl ZwaveServer {
    /// What became of `command` to `node` within the confirmation wait: the device's report,
    /// checked by its answer to a Get (what the cache shows may be zwave-js's optimistic echo
    /// of another client's write of the same value); the node as it is then.
    pub(super) async fn decide(
        &self,
        node: &NodeInfo,
        command: &AckedCommand,
        cancelled: &CancellationToken,
    ) -> (NodeInfo, Reported) {
        if !command.supervised && !self.confirm_timeout.is_zero() {
            tokio::select! {
                _ = self.network.wait_for_node(
                    node.id,
                    |now| command.reported(now) != Reported::Pending,
                    self.confirm_timeout,
                ) => {}
                // Nobody waits for the answer any more: the request's place is freed at once.
                () = cancelled.cancelled() => {}
            }
        }
        let now = self.network.node(node.id).unwrap_or_else(|| node.clone());
        let reported = command.reported(&now);
        // A command superseded by a later one is answered so, whatever its fate.
        let latest = self
            .commands
            .last(node.id)
            .is_none_or(|last| last.seq == command.seq);
        if reported != Reported::Confirmed || command.supervised || !latest {
            return (now, reported);
        }
        let reported = tokio::select! {
            reported = verify(&self.network, &now, command) => reported,
            () = cancelled.cancelled() => Reported::Pending,
        };
        (self.network.node(node.id).unwrap_or(now), reported)
    }

    /// Asks the device for each of `values`, one after the other, in the background: a device
    /// that sends no report of its own after a Set (a colour light) answers a Get, and that
    /// answer is its report.
    pub(super) fn read_back(&self, values: &[crate::network::ValueId]) {
        if values.is_empty() {
            return;
        }
        let (network, values) = (self.network.clone(), values.to_vec());
        tokio::spawn(async move {
            for value in values {
                if let Err(err) = network.poll_value(&value).await {
                    debug!(%value, error = %err, "reading a value back after a write failed");
                }
            }
        });
    }

    /// The device's first word on `command` decides it: a confirmation is settled at once, and
    /// one still pending is watched (two minutes at most) so that it is settled when the
    /// device confirms it later, whatever it reports after that (a siren whose tone ended).
    pub(super) fn settle_when_reported(
        &self,
        command: &AckedCommand,
        node: NodeId,
        reported: &Reported,
        mut layout: crate::network::Revision,
    ) {
        match reported {
            Reported::Confirmed => self.commands.settle(node, command.seq),
            Reported::Contradicted { .. } => {}
            Reported::Pending => {
                let (network, commands, command) = (
                    self.network.clone(),
                    std::sync::Arc::clone(&self.commands),
                    command.clone(),
                );
                tokio::spawn(async move {
                    // Watched while it is the device's last command: a later one's fate is
                    // that one's to tell.
                    let superseded = || {
                        commands
                            .last(node)
                            .is_some_and(|last| last.seq != command.seq)
                    };
                    let deadline = tokio::time::Instant::now() + WATCH;
                    loop {
                        // A reload (the link came back) may carry what the device reported
                        // while it was down, as the driver's cache, which is no report: the
                        // device is asked then.
                        let reloaded =
                            || network.with_nodes(crate::network::Nodes::layout) != layout;
                        let left = deadline.saturating_duration_since(tokio::time::Instant::now());
                        let Some(now) = network
                            .wait_for_node(
                                node,
                                |now| {
                                    command.reported(now) != Reported::Pending
                                        || superseded()
                                        || reloaded()
                                },
                                left,
                            )
                            .await
                        else {
                            return;
                        };
                        if superseded()
                            || matches!(command.reported(&now), Reported::Contradicted { .. })
                        {
                            return;
                        }
                        layout = network.with_nodes(crate::network::Nodes::layout);
                        match verify(&network, &now, &command).await {
                            Reported::Confirmed => {
                                commands.settle(node, command.seq);
                                return;
                            }
                            Reported::Contradicted { .. } => return,
                            // No answer yet (asleep, or on its way): watched on.
                            Reported::Pending if command.reported(&now) == Reported::Confirmed => {
                                return;
                            }
                            Reported::Pending => {}
                        }
                    }
                });
            }
        }
    }
}

/// What the device itself answers on `command`, which the cache of `node` shows confirmed:
/// each value that confirms it is asked for (a Get, answered by the device alone), since a
/// report in the cache may be zwave-js's optimistic echo of another client's write of the
/// same value, which looks the same on both backends. Confirmed only when every answer is
/// what the command asked; an answer that is not contradicts it; no answer leaves it pending.
async fn verify(network: &Network, node: &NodeInfo, command: &AckedCommand) -> Reported {
    for (key, expect) in command.values() {
        let Some(id) = node.values.get(key).map(|value| value.value_id(node.id)) else {
            return Reported::Pending;
        };
        match network.poll_value(&id).await {
            Ok(Some(answer)) if expect.accepts(&answer) => {}
            Ok(Some(answer)) if expect.in_transit(&answer) => return Reported::Pending,
            Ok(Some(answer)) => {
                warn!(node = %node.id, value = %id, %answer, "the device's answer contradicts what its cache showed: an echo of another client's write was not its report");
                let now = network.node(node.id).unwrap_or_else(|| node.clone());
                return Reported::Contradicted {
                    state: devices::summary(&now),
                };
            }
            Ok(None) => {
                debug!(node = %node.id, value = %id, "the device gave no value when asked to confirm a command");
                return Reported::Pending;
            }
            Err(err) => {
                debug!(node = %node.id, value = %id, error = %err, "asking the device to confirm a command failed");
                return Reported::Pending;
            }
        }
    }
    Reported::Confirmed
}
