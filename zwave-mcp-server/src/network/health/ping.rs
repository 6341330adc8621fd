//! Pinging a node ([`Network::ping`]): Z-Wave JS UI's `pingNode` or zwave-js-server's
//! `node.ping`, both zwave-js's `ping()`: a No Operation frame the device acknowledges, which
//! changes nothing on it. The driver marks a listening node dead when it does not answer, and
//! alive again when it does; the ping waits a moment for that word, so its caller reads the
//! status that follows from the answer.

use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::network::{
    Network, NetworkError, NodeId, NodeStatus, handle::Connection, mqtt::call, now_ms,
    zwave_js_server::ZwaveJsServerError,
};

/// How long after a ping's answer the driver's new status of the node may take to come
/// (zwave-js sends it a few milliseconds after the result, `captures/ws/FACTS.md`).
const STATUS_SETTLE: Duration = Duration::from_secs(2);

/// What a ping found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ping {
    /// Whether the device answered.
    pub answered: bool,
    /// From sending the ping to its answer (the device's, or the driver's giving up).
    pub took: Duration,
    /// The node's status before the ping, as cached.
    pub status_before: Option<NodeStatus>,
    /// Its status after it, once the driver said (or as cached when it said nothing new
    /// within a moment).
    pub status_after: Option<NodeStatus>,
}

impl Network {
    /// Pings `node` (it must not be asleep: a sleeping device answers only when it wakes, so
    /// the ping would wait until then) and waits a moment for the status that follows from
    /// its answer: a dead node that answered alive again, a live one that did not, dead.
    ///
    /// # Errors
    /// The backend's: the link is down, the gateway or server refused the ping (no such
    /// node), or gave no answer within the API timeout.
    pub async fn ping(&self, node: NodeId) -> Result<Ping, NetworkError> {
        let status_before = self.node(node).and_then(|info| info.status);
        let started = Instant::now();
        let answered = match &self.connection {
            Connection::Mqtt(shared) => {
                let result = call::call(shared, "pingNode", vec![json!(node.0)]).await?;
                result.as_bool().ok_or_else(|| NetworkError::BadReply {
                    api: "pingNode",
                    reason: format!("expected true or false, got {}", common::kind(&result)),
                })?
            }
            Connection::ZwaveJsServer(client, timeout) => {
                let result = client
                    .request("node.ping", json!({"nodeId": node.0}), *timeout)
                    .await
                    .inspect_err(|err| {
                        if matches!(err, ZwaveJsServerError::Failed { failure, .. } if failure.code == "node_not_found")
                        {
                            self.request_reload();
                        }
                    })?;
                result
                    .get("responded")
                    .and_then(Value::as_bool)
                    .ok_or_else(|| NetworkError::BadReply {
                        api: "node.ping",
                        reason: format!("expected {{\"responded\": true or false}}, got {result}"),
                    })?
            }
        };
        let took = started.elapsed();
        self.core.commanded();
        if answered {
            // The device acknowledged the frame: it was heard from now (its statistics,
            // which say so too, may come a moment after the answer).
            self.core.heard_from(node, now_ms());
        }
        let dead = Some(NodeStatus::Dead);
        // Answered: it is not dead. Not answered: dead (a listening node), or asleep (a
        // battery one thought awake); already dead, nothing changes.
        let settles = |status: &Option<NodeStatus>| {
            if answered {
                *status != dead
            } else {
                *status == dead || *status != status_before
            }
        };
        let status_after = if answered != (status_before == dead) {
            status_before.clone()
        } else {
            match self
                .wait_for_node(node, |info| settles(&info.status), STATUS_SETTLE)
                .await
            {
                Some(info) => info.status,
                None => self.node(node).and_then(|info| info.status),
            }
        };
        Ok(Ping {
            answered,
            took,
            status_before,
            status_after,
        })
    }
}
