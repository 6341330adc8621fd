//! The gateway-level home the real binary is pointed at: an embedded broker and a simulated
//! Z-Wave JS UI whose record of every API request it received is the witness of what was
//! written.

use std::{
    process::{Command, Output},
    time::Duration,
};

use serde_json::{Value, json};
use zwave_mcp_server::{
    MqttSettings,
    sim::{EmbeddedBroker, SimGateway, SimOptions},
};

use super::{binary, eventually, session::session};

/// A home the binary is pointed at: a broker and a simulated gateway that records requests.
pub struct GatewayHome {
    pub broker: EmbeddedBroker,
    pub sim: SimGateway,
}

impl GatewayHome {
    /// The basic home (the demo home's first seven nodes: the home the tests of names were
    /// written for) with nodes renamed: `(node, name, location)`.
    pub async fn renamed(renames: &[(u16, &str, &str)]) -> Self {
        Self::with_nodes(renamed(
            zwave_mcp_server::sim::home::basic_home(zwave_mcp_server::network::now_ms()),
            renames,
        ))
        .await
    }

    /// A home of these nodes (`getNodes` objects), reporting after the test delays.
    pub async fn with_nodes(nodes: Vec<Value>) -> Self {
        Self::with_options(nodes, SimOptions::default()).await
    }

    /// A home of these nodes behind a gateway with `options`, reporting after the test delays.
    pub async fn with_options(nodes: Vec<Value>, options: SimOptions) -> Self {
        let broker = EmbeddedBroker::start().unwrap();
        let sim = SimGateway::start_with(
            &MqttSettings::new(broker.url()),
            SimOptions {
                reports: zwave_mcp_server::sim::ReportDelays::FAST,
                ..options
            },
            nodes,
        );
        sim.wait_ready(Duration::from_secs(5)).await.unwrap();
        Self { broker, sim }
    }

    /// The binary on this home with `args`.
    pub fn command(&self, args: &[&str]) -> Command {
        let mut command = binary::command(&["--mqtt-url", &self.broker.url().to_string()]);
        command.args(args);
        command
    }

    /// Runs the binary on this home with `args`, feeds it a session of `calls` (ids 2, 3, …),
    /// and returns its output once it exited at stdin's end.
    pub async fn run(&self, args: &[&str], calls: &[(&str, Value)]) -> Output {
        self.run_lines(args, &session(calls)).await
    }

    /// Runs the binary on this home with `args`, feeds it `messages`, and returns its output
    /// once it exited at stdin's end.
    pub async fn run_lines(&self, args: &[&str], messages: &[Value]) -> Output {
        binary::feed_blocking(self.command(args), messages, Duration::from_secs(30)).await
    }

    /// Whether the gateway received at least `count` writes within `within`.
    pub async fn writes_arrive(&self, count: usize, within: Duration) -> bool {
        let sim = self.sim.clone();
        eventually(within, move || {
            sim.received()
                .iter()
                .filter(|request| request.api == "writeValue")
                .count()
                >= count
        })
        .await
    }

    /// What the gateway was asked to write: `(value id, value)`.
    pub fn writes(&self) -> Vec<(String, Value)> {
        self.sim
            .received()
            .into_iter()
            .filter(|request| request.api == "writeValue")
            .map(|request| {
                let id = &request.payload["args"][0];
                (
                    written_id(&id["nodeId"], id),
                    request.payload["args"][1].clone(),
                )
            })
            .collect()
    }
}

/// `nodes` with some renamed: `(node, name, location)`.
pub fn renamed(mut nodes: Vec<Value>, renames: &[(u16, &str, &str)]) -> Vec<Value> {
    for &(id, name, loc) in renames {
        let node = nodes
            .iter_mut()
            .find(|node| node["id"] == json!(id))
            .unwrap_or_else(|| panic!("the home has no node {id}"));
        node["name"] = json!(name);
        node["loc"] = json!(loc);
    }
    nodes
}

/// A written value id as `<node>-<cc>-<endpoint>-<property>[-<propertyKey>]`.
pub fn written_id(node: impl std::fmt::Display, id: &Value) -> String {
    let mut text = format!(
        "{node}-{}-{}-{}",
        id["commandClass"],
        id["endpoint"],
        id["property"].as_str().unwrap_or_default()
    );
    if let Some(key) = id.get("propertyKey").filter(|key| !key.is_null()) {
        text.push_str(&format!("-{key}"));
    }
    text
}
