//! The behavioural table: one test body, run once per backend, wherever the behaviour is the
//! same. A [`TestHome`] is the demo home behind either simulated server (Z-Wave JS UI's MQTT
//! gateway on an embedded broker, or zwave-js-server over WebSocket), both built on the same
//! simulated devices; the binary is pointed at it with `--mqtt-url` or `--zwave-js-url`.
//! [`per_backend!`] writes the two tests.

use std::{
    process::{Command, Output},
    time::Duration,
};

use serde_json::Value;
use zwave_mcp_server::sim::{ReportDelays, SimZwaveJsServer};

use super::{binary, eventually, gateway_home::GatewayHome, renamed, session::session, written_id};

/// The way the binary reaches the home.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    /// `--mqtt-url`: Z-Wave JS UI's MQTT gateway.
    Mqtt,
    /// `--zwave-js-url`: zwave-js-server.
    ZwaveJsServer,
}

/// The demo home (reports after the test delays) behind one backend.
pub enum TestHome {
    Mqtt(GatewayHome),
    ZwaveJsServer(SimZwaveJsServer),
}

impl TestHome {
    /// The demo home behind `backend`, ready to be connected to.
    pub async fn start(backend: Backend) -> Self {
        Self::with_nodes(
            backend,
            zwave_mcp_server::sim::home::demo_home(zwave_mcp_server::network::now_ms()),
        )
        .await
    }

    /// The basic home (the demo home's first seven nodes: the home the tests of names were
    /// written for) with nodes renamed (`(node, name, location)`) behind `backend`.
    pub async fn renamed(backend: Backend, renames: &[(u16, &str, &str)]) -> Self {
        let home = zwave_mcp_server::sim::home::basic_home(zwave_mcp_server::network::now_ms());
        Self::with_nodes(backend, renamed(home, renames)).await
    }

    /// A home of these nodes (`getNodes` objects) behind `backend`.
    pub async fn with_nodes(backend: Backend, nodes: Vec<serde_json::Value>) -> Self {
        match backend {
            Backend::Mqtt => Self::Mqtt(GatewayHome::with_nodes(nodes).await),
            Backend::ZwaveJsServer => Self::ZwaveJsServer(
                SimZwaveJsServer::start("127.0.0.1:0", nodes, ReportDelays::FAST)
                    .await
                    .unwrap(),
            ),
        }
    }

    /// Its backend.
    pub fn backend(&self) -> Backend {
        match self {
            Self::Mqtt(_) => Backend::Mqtt,
            Self::ZwaveJsServer(_) => Backend::ZwaveJsServer,
        }
    }

    /// The binary on this home with `args`.
    pub fn command(&self, args: &[&str]) -> Command {
        match self {
            Self::Mqtt(home) => home.command(args),
            Self::ZwaveJsServer(server) => {
                let mut command = binary::command(&["--zwave-js-url", server.url()]);
                command.args(args);
                command
            }
        }
    }

    /// Runs the binary on this home with `args`, feeds it a session of `calls` (ids 2, 3, …),
    /// and returns its output once it exited at stdin's end.
    pub async fn run(&self, args: &[&str], calls: &[(&str, Value)]) -> Output {
        binary::feed_blocking(self.command(args), &session(calls), Duration::from_secs(30)).await
    }

    /// Makes the lock `node` jam at every lock or unlock.
    pub fn set_jammed(&self, node: u16, jammed: bool) {
        match self {
            Self::Mqtt(home) => home.sim.set_jammed(node, jammed),
            Self::ZwaveJsServer(server) => server.set_jammed(node, jammed),
        }
    }

    /// Makes `node` acknowledge every Set and ignore it.
    pub fn set_stuck(&self, node: u16, stuck: bool) {
        match self {
            Self::Mqtt(home) => home.sim.set_stuck(node, stuck),
            Self::ZwaveJsServer(server) => server.set_stuck(node, stuck),
        }
    }

    /// Gives `node` Supervision.
    pub fn set_supervised(&self, node: u16, supervised: bool) {
        match self {
            Self::Mqtt(home) => home.sim.set_supervised(node, supervised),
            Self::ZwaveJsServer(server) => server.set_supervised(node, supervised),
        }
    }

    /// Makes `node` stop answering (a ping gets no answer: the driver marks it dead), or
    /// answer again.
    pub fn set_answering(&self, node: u16, answering: bool) {
        match self {
            Self::Mqtt(home) => home.sim.set_answering(node, answering),
            Self::ZwaveJsServer(server) => server.set_answering(node, answering),
        }
    }

    /// Makes `node`'s interview never complete (it stops in its command classes).
    pub fn set_interview_stalls(&self, node: u16, stalls: bool) {
        match self {
            Self::Mqtt(home) => home.sim.set_interview_stalls(node, stalls),
            Self::ZwaveJsServer(server) => server.set_interview_stalls(node, stalls),
        }
    }

    /// How long each round of a lifeline health check takes.
    pub fn set_health_round(&self, takes: Duration) {
        match self {
            Self::Mqtt(home) => home.sim.set_health_round(takes),
            Self::ZwaveJsServer(server) => server.set_health_round(takes),
        }
    }

    /// The requests the server received, by name: Z-Wave JS UI's APIs (`pingNode`), or
    /// zwave-js-server's commands (`node.ping`).
    pub fn requests(&self) -> Vec<String> {
        match self {
            Self::Mqtt(home) => home
                .sim
                .received()
                .into_iter()
                .map(|request| request.api)
                .collect(),
            Self::ZwaveJsServer(server) => server
                .received()
                .into_iter()
                .filter_map(|command| Some(command["command"].as_str()?.to_owned()))
                .collect(),
        }
    }

    /// Whether devices report their state after a write.
    pub fn set_confirm_writes(&self, confirm: bool) {
        match self {
            Self::Mqtt(home) => home.sim.set_confirm_writes(confirm),
            Self::ZwaveJsServer(server) => server.set_confirm_writes(confirm),
        }
    }

    /// What the server was asked to write: `("<node>-<cc>-<endpoint>-<property>[-<key>]", value)`.
    pub fn writes(&self) -> Vec<(String, Value)> {
        match self {
            Self::Mqtt(home) => home.writes(),
            Self::ZwaveJsServer(server) => server
                .writes()
                .into_iter()
                .map(|(node, id, value)| (written_id(node, &id), value))
                .collect(),
        }
    }

    /// A stateless value's event on the device (a scene button pressed): Z-Wave JS UI
    /// publishes the value, zwave-js-server sends a `value notification`.
    pub async fn notify(&self, node: u16, key: &str, value: Value) {
        match self {
            Self::Mqtt(home) => home.sim.press(node, key, value).await,
            Self::ZwaveJsServer(server) => server.notify(node, key, value),
        }
    }

    /// The device reports `value` for `key` of `node` on its own (operated by hand, or by
    /// another client): the simulated server changes it and publishes it as any report.
    pub async fn report(&self, node: u16, key: &str, value: Value) {
        match self {
            Self::Mqtt(home) => home.sim.press(node, key, value).await,
            Self::ZwaveJsServer(server) => server.report(node, key, value),
        }
    }

    /// The way to the home goes down: Z-Wave JS UI says it is offline (its last will), or
    /// zwave-js-server stops (connections closed, new ones refused).
    pub async fn go_down(&self) {
        match self {
            Self::Mqtt(home) => home.sim.announce_offline().await,
            Self::ZwaveJsServer(server) => server.stop(),
        }
    }

    /// And comes back.
    pub async fn come_back(&self) {
        match self {
            Self::Mqtt(home) => home.sim.announce_online().await,
            Self::ZwaveJsServer(server) => server.resume(),
        }
    }

    /// Every node but the controller is known but not interviewed yet, as when the driver
    /// starts (a restart of Z-Wave JS UI; the port of zwave-js-server opening at driver ready).
    pub async fn start_interviews(&self) {
        match self {
            Self::Mqtt(home) => home.sim.driver_up_with_unready_nodes().await,
            Self::ZwaveJsServer(server) => server.start_interviews(),
        }
    }

    /// `node`'s interview completes.
    pub async fn finish_interview(&self, node: u16) {
        match self {
            Self::Mqtt(home) => home.sim.finish_interview(node).await,
            Self::ZwaveJsServer(server) => server.finish_interview(node),
        }
    }

    /// Whether the server received at least `count` writes within `within`.
    pub async fn writes_arrive(&self, count: usize, within: Duration) -> bool {
        match self {
            Self::Mqtt(home) => home.writes_arrive(count, within).await,
            Self::ZwaveJsServer(server) => {
                eventually(within, || server.writes().len() >= count).await
            }
        }
    }
}

/// `per_backend! { async fn name(backend) { … } … }`: a module `name` per body, with the
/// tests `mqtt` and `zwave_js_server` running it with each [`Backend`] (it starts its [`TestHome`]).
macro_rules! per_backend {
    ($($(#[$doc:meta])* async fn $name:ident($backend:ident) $body:block)*) => {
        $(
            $(#[$doc])*
            mod $name {
                #[allow(unused_imports, reason = "what the bodies use")]
                use super::*;
                use $crate::harness::{Backend, TestHome};

                async fn body($backend: Backend) $body

                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn mqtt() {
                    body(Backend::Mqtt).await;
                }

                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn zwave_js_server() {
                    body(Backend::ZwaveJsServer).await;
                }
            }
        )*
    };
}
pub(crate) use per_backend;
