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
    gateway::{Gateway, NodeId, NodeInfo},
    mcp::{
        ZwaveServer,
        commands::{Command, Fate},
    },
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
        command: &Command,
        cancelled: &CancellationToken,
    ) -> (NodeInfo, Fate) {
        if !command.supervised && !self.confirm_timeout.is_zero() {
            tokio::select! {
                _ = self.gateway.wait_for_node(
                    node.id,
                    |now| command.fate(now) != Fate::Pending,
                    self.confirm_timeout,
                ) => {}
                // Nobody waits for the answer any more: the request's place is freed at once.
                () = cancelled.cancelled() => {}
            }
        }
        let now = self.gateway.node(node.id).unwrap_or_else(|| node.clone());
        let fate = command.fate(&now);
        // A command superseded by a later one is answered so, whatever its fate.
        let latest = self
            .commands
            .last(node.id)
            .is_none_or(|last| last.seq == command.seq);
        if fate != Fate::Confirmed || command.supervised || !latest {
            return (now, fate);
        }
        let fate = tokio::select! {
            fate = verify(&self.gateway, &now, command) => fate,
            () = cancelled.cancelled() => Fate::Pending,
        };
        (self.gateway.node(node.id).unwrap_or(now), fate)
    }

    /// Asks the device for each of `values`, one after the other, in the background: a device
    /// that sends no report of its own after a Set (a colour light) answers a Get, and that
    /// answer is its report.
    pub(super) fn read_back(&self, values: &[crate::gateway::ValueId]) {
        if values.is_empty() {
            return;
        }
        let (gateway, values) = (self.gateway.clone(), values.to_vec());
        tokio::spawn(async move {
            for value in values {
                if let Err(err) = gateway.poll_value(&value).await {
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
        command: &Command,
        node: NodeId,
        fate: &Fate,
        mut layout: crate::gateway::Revision,
    ) {
        match fate {
            Fate::Confirmed => self.commands.settle(node, command.seq),
            Fate::Contradicted { .. } => {}
            Fate::Pending => {
                let (gateway, commands, command) = (
                    self.gateway.clone(),
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
                            || gateway.with_nodes(crate::gateway::Nodes::layout) != layout;
                        let left = deadline.saturating_duration_since(tokio::time::Instant::now());
                        let Some(now) = gateway
                            .wait_for_node(
                                node,
                                |now| {
                                    command.fate(now) != Fate::Pending || superseded() || reloaded()
                                },
                                left,
                            )
                            .await
                        else {
                            return;
                        };
                        if superseded() || matches!(command.fate(&now), Fate::Contradicted { .. }) {
                            return;
                        }
                        layout = gateway.with_nodes(crate::gateway::Nodes::layout);
                        match verify(&gateway, &now, &command).await {
                            Fate::Confirmed => {
                                commands.settle(node, command.seq);
                                return;
                            }
                            Fate::Contradicted { .. } => return,
                            // No answer yet (asleep, or on its way): watched on.
                            Fate::Pending if command.fate(&now) == Fate::Confirmed => return,
                            Fate::Pending => {}
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
async fn verify(gateway: &Gateway, node: &NodeInfo, command: &Command) -> Fate {
    for (key, expect) in command.values() {
        let Some(id) = node.values.get(key).map(|value| value.value_id(node.id)) else {
            return Fate::Pending;
        };
        match gateway.poll_value(&id).await {
            Ok(Some(answer)) if expect.accepts(&answer) => {}
            Ok(Some(answer)) if expect.in_transit(&answer) => return Fate::Pending,
            Ok(Some(answer)) => {
                warn!(node = %node.id, value = %id, %answer, "the device's answer contradicts what its cache showed: an echo of another client's write was not its report");
                let now = gateway.node(node.id).unwrap_or_else(|| node.clone());
                return Fate::Contradicted {
                    state: devices::summary(&now),
                };
            }
            Ok(None) => {
                debug!(node = %node.id, value = %id, "the device gave no value when asked to confirm a command");
                return Fate::Pending;
            }
            Err(err) => {
                debug!(node = %node.id, value = %id, error = %err, "asking the device to confirm a command failed");
                return Fate::Pending;
            }
        }
    }
    Fate::Confirmed
}
