//! What `get_zwave_health` does: the network's health (every device this agent may see, dead
//! first, then the weakest, and the controller's troubles), or one device's, after a ping
//! when asked. A ping changes nothing on the device, so any agent that may read a device may
//! ping it (read-only mode too); a device the owner hides is never reported, pinged or named
//! as another's repeater.

use rmcp::model::CallToolResult;
use tracing::warn;

use super::{
    ZwaveServer,
    error::ToolError,
    tools::structured,
    types::{HealthArgs, HealthCounts, NetworkHealth, PingOutcome},
};
use crate::{
    devices::{
        self, Purpose,
        health::{Condition, ControllerHealth, DeviceHealth, Facts, millis},
    },
    network::{HealthBook, NodeId, NodeInfo, NodeStatus, Nodes, Ping, now_ms},
};

impl ZwaveServer {
    /// What `get_zwave_health` does.
    pub(super) async fn health(&self, args: HealthArgs) -> Result<CallToolResult, ToolError> {
        let name = args
            .device_name
            .as_deref()
            .map(str::trim)
            .filter(|name| !name.is_empty());
        match name {
            None if args.ping => Err(ToolError::PingWithoutDevice),
            None => self.network_health().await,
            Some(name) => self.device_health(name, args.ping).await,
        }
    }

    /// Every device this agent may see, dead first, then the weakest; the controller's
    /// troubles when it has any.
    async fn network_health(&self) -> Result<CallToolResult, ToolError> {
        self.readable().await?;
        self.freshen_statistics().await;
        let now = now_ms();
        let (mut devices, controller) = self.network.with_health(|nodes, book| {
            let devices: Vec<DeviceHealth> = nodes
                .values()
                .filter(|node| self.is_visible(node))
                .map(|node| self.device_health_of(node, nodes, book, now))
                .collect();
            let controller = book
                .controller()
                .map(ControllerHealth::of)
                .filter(|controller| !controller.problems.is_empty());
            (devices, controller)
        });
        devices.sort_by(DeviceHealth::order);
        let counts = counts(&devices);
        let mut text = format!(
            "Z-Wave network health ({} device{}): {}.",
            devices.len(),
            if devices.len() == 1 { "" } else { "s" },
            counts_in_words(&counts)
        );
        let fine: Vec<&str> = devices
            .iter()
            .filter(|device| device.condition == Condition::Fine)
            .map(|device| device.device.as_str())
            .collect();
        for device in devices
            .iter()
            .filter(|device| device.condition != Condition::Fine)
        {
            text.push_str(&format!("\n- {}", device.summary));
        }
        if !fine.is_empty() {
            text.push_str(&format!("\nFine: {}.", fine.join(", ")));
        }
        if let Some(controller) = &controller {
            text.push_str(&format!(
                "\nThe controller: {}.",
                controller.problems.join("; ")
            ));
        }
        let stale = self.stale(&mut text);
        structured(
            text,
            &NetworkHealth {
                devices,
                counts,
                controller,
                ping: None,
                stale,
            },
        )
    }

    /// One device's health, after a ping when asked.
    async fn device_health(&self, name: &str, ping: bool) -> Result<CallToolResult, ToolError> {
        let node = self.find_device(name, Purpose::Read).await?;
        let pinged = if ping {
            Some(self.ping(&node).await?)
        } else {
            None
        };
        self.freshen_statistics().await;
        let now = now_ms();
        let health = self.network.with_health(|nodes, book| {
            let now_node = nodes.get(&node.id).unwrap_or(&node);
            self.device_health_of(now_node, nodes, book, now)
        });
        let mut text = health.summary.clone();
        let ping = pinged.map(|pinged| {
            let outcome = PingOutcome {
                answered: pinged.answered,
                took_ms: (pinged.took.as_secs_f64() * 10_000.0).round() / 10.0,
                alive_again: pinged.answered
                    && pinged.status_before == Some(NodeStatus::Dead)
                    && pinged.status_after != Some(NodeStatus::Dead),
            };
            text = format!("{}\n{text}", ping_in_words(&node, &pinged, &outcome));
            outcome
        });
        let stale = self.stale(&mut text);
        let mut counts = HealthCounts::default();
        count(&mut counts, health.condition);
        structured(
            text,
            &NetworkHealth {
                devices: vec![health],
                counts,
                controller: None,
                ping,
                stale,
            },
        )
    }

    /// Pings `node` (found by name for reading), unless it sleeps.
    async fn ping(&self, node: &NodeInfo) -> Result<Ping, ToolError> {
        if node.status == Some(NodeStatus::Asleep) {
            return Err(ToolError::PingAsleep {
                device: devices::describe(node),
            });
        }
        self.network
            .ping(node.id)
            .await
            .map_err(|source| ToolError::Ping {
                device: devices::describe(node),
                source,
            })
    }

    /// Whether this agent may see `node` as a device.
    fn is_visible(&self, node: &NodeInfo) -> bool {
        devices::is_device(node) && self.exposure.can_read(node)
    }

    /// `node`'s health; its repeaters named only when this agent may see them.
    fn device_health_of(
        &self,
        node: &NodeInfo,
        nodes: &Nodes,
        book: &HealthBook,
        now: i64,
    ) -> DeviceHealth {
        let name_of = |id: NodeId| {
            nodes
                .get(&id)
                .filter(|repeater| self.is_visible(repeater))
                .map(devices::display_name)
        };
        DeviceHealth::of(&Facts::of(node, book, now), &name_of)
    }

    /// Statistics at most a few seconds old where the backend does not send them as they
    /// change; when that fails, the answer is from those held (and says so when a link is
    /// down).
    async fn freshen_statistics(&self) {
        if let Err(err) = self.network.freshen_statistics().await {
            warn!(error = %err, "reading fresh statistics failed: answering with those held");
        }
    }
}

/// The ping's outcome in words, before the device's health.
fn ping_in_words(node: &NodeInfo, pinged: &Ping, outcome: &PingOutcome) -> String {
    let name = devices::describe(node);
    let took = millis(pinged.took);
    let dead_after = pinged.status_after == Some(NodeStatus::Dead);
    match (pinged.answered, outcome.alive_again, dead_after) {
        (true, true, _) => format!(
            "{name} answered the ping in {took}: it is alive again (Z-Wave JS had it dead)."
        ),
        (true, false, true) => format!(
            "{name} answered the ping in {took}, so it is reachable; Z-Wave JS has not marked it alive yet."
        ),
        (true, false, false) => format!("{name} answered the ping in {took}."),
        (false, _, true) => {
            format!("{name} did not answer the ping (Z-Wave JS gave up after {took}): it is dead.")
        }
        (false, _, false) => {
            format!("{name} did not answer the ping (Z-Wave JS gave up after {took}).")
        }
    }
}

/// How many devices are in each condition.
fn counts(devices: &[DeviceHealth]) -> HealthCounts {
    let mut counts = HealthCounts::default();
    for device in devices {
        count(&mut counts, device.condition);
    }
    counts
}

fn count(counts: &mut HealthCounts, condition: Condition) {
    *match condition {
        Condition::Dead => &mut counts.dead,
        Condition::Weak => &mut counts.weak,
        Condition::Unknown => &mut counts.unknown,
        Condition::Asleep => &mut counts.asleep,
        Condition::Fine => &mut counts.fine,
    } += 1;
}

/// `1 dead, 2 weak, 11 fine`; `no devices` for none.
fn counts_in_words(counts: &HealthCounts) -> String {
    let words: Vec<String> = [
        (counts.dead, "dead"),
        (counts.weak, "weak"),
        (counts.unknown, "not known yet"),
        (counts.asleep, "asleep"),
        (counts.fine, "fine"),
    ]
    .into_iter()
    .filter(|(count, _)| *count > 0)
    .map(|(count, word)| format!("{count} {word}"))
    .collect();
    if words.is_empty() {
        "no devices".to_owned()
    } else {
        words.join(", ")
    }
}
