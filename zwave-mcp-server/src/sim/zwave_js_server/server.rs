//! [`SimZwaveJsServer`]: starting the simulated zwave-js-server, and its knobs (stuck,
//! jammed and supervised nodes, reports off, the start-up sequence, stopped and started again,
//! frozen and thawed, commands left unanswered or answered late).

use std::{
    sync::{
        Arc, Mutex,
        atomic::{AtomicBool, AtomicU64, Ordering},
    },
    time::Duration,
};

use serde_json::{Value, json};
use tokio::{net::TcpListener, sync::broadcast};
use tracing::info;

use super::{
    connection::accept,
    shared::ServerSim,
    state::{address, node_state, value_updated},
};
use crate::network::NodeId;
use crate::sim::{
    change::set_value,
    state::{Knobs, ReportDelays, lock},
};

/// A running simulated zwave-js-server; stops when dropped.
pub struct SimZwaveJsServer {
    url: String,
    sim: Arc<ServerSim>,
    task: tokio::task::JoinHandle<()>,
}

impl SimZwaveJsServer {
    /// Serves `home` (nodes as `getNodes` gives them, like [`crate::sim::home::demo_home`]) on
    /// `address` (`127.0.0.1:0` for a free port).
    ///
    /// # Errors
    /// The address cannot be bound.
    pub async fn start(
        address: &str,
        home: Vec<Value>,
        reports: ReportDelays,
    ) -> std::io::Result<Self> {
        let listener = TcpListener::bind(address).await?;
        let url = format!("ws://{}", listener.local_addr()?);
        let sim = Arc::new(ServerSim {
            nodes: Mutex::new(home),
            knobs: Mutex::new(Knobs::default()),
            last_levels: Mutex::default(),
            latest_write: Mutex::default(),
            truth: Mutex::default(),
            reports,
            events: broadcast::channel(1024).0,
            direct: broadcast::channel(256).0,
            received: Mutex::default(),
            interviewing: Mutex::default(),
            running: AtomicBool::new(true),
            generation: tokio::sync::watch::Sender::new(0),
            frozen: tokio::sync::watch::Sender::new(false),
            unanswered: Mutex::default(),
            next_connection: AtomicU64::new(1),
        });
        let task = tokio::spawn(accept(listener, Arc::clone(&sim)));
        info!(%url, "simulated zwave-js-server listening");
        Ok(Self { url, sim, task })
    }

    /// `ws://127.0.0.1:<port>`.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// Makes `node` acknowledge every Set and ignore it.
    pub fn set_stuck(&self, node: impl Into<NodeId>, stuck: bool) {
        let node = node.into();
        lock(&self.sim.knobs).set_stuck(node, stuck);
    }

    /// Makes the lock `node` jam at every lock or unlock.
    pub fn set_jammed(&self, node: impl Into<NodeId>, jammed: bool) {
        let node = node.into();
        lock(&self.sim.knobs).set_jammed(node, jammed);
    }

    /// Gives `node` Supervision: a Set is answered 255 once done, and no report follows.
    pub fn set_supervised(&self, node: impl Into<NodeId>, supervised: bool) {
        let node = node.into();
        lock(&self.sim.knobs).set_supervised(node, supervised);
    }

    /// Makes `node` stop answering (`false`: a ping gets no answer, and the driver marks it
    /// dead), or answer again.
    pub fn set_answering(&self, node: impl Into<NodeId>, answering: bool) {
        let node = node.into();
        lock(&self.sim.knobs).set_answering(node, answering);
    }

    /// Makes `node`'s interview stop in its command classes, never completing (`true`), or
    /// complete again.
    pub fn set_interview_stalls(&self, node: impl Into<NodeId>, stalls: bool) {
        lock(&self.sim.knobs).set_interview_stalls(node.into(), stalls);
    }

    /// How long each round of a lifeline health check takes (20 ms by default).
    pub fn set_health_round(&self, takes: std::time::Duration) {
        lock(&self.sim.knobs).upkeep.health_round = takes;
    }

    /// Whether devices report their state after a write (off: they acknowledge and stay
    /// silent, so all there is is zwave-js's optimistic update).
    pub fn set_confirm_writes(&self, confirm: bool) {
        lock(&self.sim.knobs).confirm_writes = confirm;
    }

    /// Stops serving: open connections are closed and new ones refused, until
    /// [`SimZwaveJsServer::resume`].
    pub fn stop(&self) {
        self.sim.running.store(false, Ordering::SeqCst);
        self.sim
            .generation
            .send_modify(|generation| *generation += 1);
    }

    /// Serves again after [`SimZwaveJsServer::stop`].
    pub fn resume(&self) {
        self.sim.running.store(true, Ordering::SeqCst);
    }

    /// Freezes the server as SIGSTOP does its process: open connections stay open, but
    /// nothing is read from them (so not even a ping is answered: tungstenite answers pings
    /// when it reads) and nothing is sent; a new connection's TCP handshake succeeds (the
    /// kernel's) but its WebSocket handshake waits. Until [`SimZwaveJsServer::thaw`].
    pub fn freeze(&self) {
        self.sim.frozen.send_replace(true);
    }

    /// Runs again after [`SimZwaveJsServer::freeze`], as SIGCONT.
    pub fn thaw(&self) {
        self.sim.frozen.send_replace(false);
    }

    /// `command` is received (and recorded) but never answered nor carried out, as by a
    /// server whose driver waits for ever on the device; `false` answers it again.
    pub fn set_unanswered(&self, command: &str, unanswered: bool) {
        let mut commands = lock(&self.sim.unanswered);
        if unanswered {
            commands.insert(command.to_owned());
        } else {
            commands.remove(command);
        }
    }

    /// Answers `command` `delay` late; its connection reads and sends nothing meanwhile.
    pub fn set_delay(&self, command: &str, delay: Duration) {
        lock(&self.sim.knobs)
            .delays
            .insert(command.to_owned(), delay);
    }

    /// The device reports `value` for `key` of `node` on its own (operated by hand): the
    /// value changes, and every listening client gets a `value updated`.
    pub fn report(&self, node: impl Into<NodeId>, key: &str, value: Value) {
        let node = node.into();
        let change = set_value(&mut lock(&self.sim.nodes), node, key, value);
        if let Some(change) = change {
            let _ = self.sim.events.send((0, value_updated(&change)));
        }
    }

    /// Every node but the controller becomes as at driver start (the real server opens its
    /// port at driver ready, before the interviews end): not ready, status unknown, no
    /// values. A client connecting now reads them so; [`SimZwaveJsServer::finish_interview`]
    /// completes each.
    pub fn start_interviews(&self) {
        let mut nodes = lock(&self.sim.nodes);
        let mut interviewing = lock(&self.sim.interviewing);
        for node in nodes.iter_mut().filter(|node| {
            node["isControllerNode"] != json!(true) && node["virtual"] != json!(true)
        }) {
            let id = node["id"]
                .as_u64()
                .and_then(|id| u16::try_from(id).ok())
                .map_or(NodeId(0), NodeId);
            interviewing.insert(id, std::mem::replace(&mut node["values"], json!({})));
            node["ready"] = json!(false);
            node["status"] = json!("Unknown");
        }
    }

    /// `node`'s interview completes, with the events of the recorded start-up: `alive`,
    /// `ready` with the node's whole state, `interview completed`.
    pub fn finish_interview(&self, node: impl Into<NodeId>) {
        let node = node.into();
        let state = {
            let mut nodes = lock(&self.sim.nodes);
            let Some(found) = nodes.iter_mut().find(|n| n["id"] == json!(node)) else {
                return;
            };
            if let Some(values) = lock(&self.sim.interviewing).remove(&node) {
                found["values"] = values;
            }
            found["ready"] = json!(true);
            found["status"] = json!("Alive");
            node_state(found)
        };
        for event in [
            json!({"source": "node", "event": "alive", "nodeId": node, "oldStatus": 0}),
            json!({"source": "node", "event": "ready", "nodeId": node, "nodeState": state}),
            json!({"source": "node", "event": "interview completed", "nodeId": node}),
        ] {
            let _ = self
                .sim
                .events
                .send((0, json!({"type": "event", "event": event}).to_string()));
        }
    }

    /// A stateless value's event, as a scene button's press: the value changes and every
    /// listening client gets a `value notification`.
    pub fn notify(&self, node: impl Into<NodeId>, key: &str, value: Value) {
        let node = node.into();
        self.sim.devices().forget_truth(node, key);
        let change = set_value(&mut lock(&self.sim.nodes), node, key, value.clone());
        if let Some(change) = change {
            let mut args = address(&change.value);
            args["value"] = value;
            let event = json!({"type": "event", "event": {"source": "node",
                "event": "value notification", "nodeId": node, "args": args}});
            let _ = self.sim.events.send((0, event.to_string()));
        }
    }

    /// Every command received so far, in order.
    pub fn received(&self) -> Vec<Value> {
        lock(&self.sim.received).clone()
    }

    /// The `node.set_value` commands received: `(node, valueId, value)`.
    pub fn writes(&self) -> Vec<(u64, Value, Value)> {
        self.received()
            .into_iter()
            .filter(|command| command["command"] == "node.set_value")
            .map(|command| {
                (
                    command["nodeId"].as_u64().unwrap_or(0),
                    command["valueId"].clone(),
                    command["value"].clone(),
                )
            })
            .collect()
    }
}

impl Drop for SimZwaveJsServer {
    fn drop(&mut self) {
        self.stop();
        self.task.abort();
    }
}
