//! Issue 20's hostile review, reproduced through the release binary's code path: the real
//! binary against the simulated gateway on an embedded broker, with the gateway's own record
//! of every API request it received as the witness of what was written.

mod bound;
mod broker;
mod classes;
mod confirm;
mod down;
mod late;
mod marked;
mod memory;
mod names;
mod protocol;
mod reads;
mod text;

use std::{
    process::{Command, Output},
    time::Duration,
};

use serde_json::{Value, json};
use zwave_mcp_server::{
    MqttSettings,
    sim::{EmbeddedBroker, SimGateway, SimOptions},
};

pub const BIN: &str = env!("CARGO_BIN_EXE_zwave-mcp-server");

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
        let broker = EmbeddedBroker::start().unwrap();
        let sim = SimGateway::start_with(
            &MqttSettings::new(broker.url()),
            SimOptions {
                reports: zwave_mcp_server::sim::ReportDelays::FAST,
                ..SimOptions::default()
            },
            nodes,
        );
        sim.wait_ready(Duration::from_secs(5)).await.unwrap();
        Self { broker, sim }
    }

    /// The binary on this home with `args`.
    pub fn command(&self, args: &[&str]) -> Command {
        let mut command = Command::new(BIN);
        command
            .args(["--mqtt-url", &self.broker.url().to_string()])
            .args(args)
            .env_remove("RUST_LOG");
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
        let mut command = self.command(args);
        let input = lines(messages);
        tokio::task::spawn_blocking(move || {
            test_support::child::run(&mut command, input.as_bytes(), Duration::from_secs(30))
        })
        .await
        .unwrap()
    }

    /// Whether the gateway received at least `count` writes within `within`.
    pub async fn writes_arrive(&self, count: usize, within: Duration) -> bool {
        let sim = self.sim.clone();
        crate::harness::eventually(within, move || {
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

/// The binary in a session whose calls are made one after the other: each call's answer is
/// read before the next is sent (or, with [`Conversation::send`], when the test says).
pub struct Conversation {
    server: test_support::child::Live,
    next_id: u64,
    /// Answers read while waiting for another.
    early: Vec<Value>,
}

impl Conversation {
    /// Starts `command` (the binary with its flags) and initializes the session.
    pub fn over(command: &mut Command) -> Self {
        let mut server = test_support::child::Live::start(command);
        server.send(lines(&session(&[])).as_bytes());
        let _ = server.read_line(Duration::from_secs(20));
        Self {
            server,
            next_id: 100,
            early: Vec::new(),
        }
    }

    /// Calls `tool` and returns `(is_error, text, structuredContent)` of its answer.
    pub fn call(&mut self, tool: &str, args: Value) -> (bool, String, Value) {
        let id = self.send(tool, args);
        self.answer(id)
    }

    /// Calls `tool` until `done` holds of its text, at most 30 s (each call a round trip:
    /// nothing is ordered by sleeping); returns that text.
    pub fn call_until(&mut self, tool: &str, args: &Value, done: impl Fn(&str) -> bool) -> String {
        let deadline = std::time::Instant::now() + Duration::from_secs(30);
        loop {
            let (_, text, _) = self.call(tool, args.clone());
            if done(&text) {
                return text;
            }
            assert!(
                std::time::Instant::now() < deadline,
                "`{tool}` {args}: never; last: {text}"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// Sends a call of `tool` without waiting for its answer; returns its id.
    pub fn send(&mut self, tool: &str, args: Value) -> u64 {
        self.next_id += 1;
        let id = self.next_id;
        let request = json!({"jsonrpc":"2.0","id": id,"method":"tools/call","params":{"name": tool, "arguments": args}});
        self.server.send(lines(&[request]).as_bytes());
        id
    }

    /// The answer to call `id`: `(is_error, text, structuredContent)`. Answers to other calls
    /// that come first are kept for their turn.
    pub fn answer(&mut self, id: u64) -> (bool, String, Value) {
        let message = match self.early.iter().position(|m| m["id"] == json!(id)) {
            Some(at) => self.early.remove(at),
            None => loop {
                let line = self.server.read_line(Duration::from_secs(30));
                let message: Value = serde_json::from_str(&line).unwrap();
                if message["id"] == json!(id) {
                    break message;
                }
                self.early.push(message);
            },
        };
        let result = &message["result"];
        (
            result["isError"] == json!(true),
            result["content"][0]["text"]
                .as_str()
                .unwrap_or_default()
                .to_owned(),
            result["structuredContent"].clone(),
        )
    }

    /// The binary's process id (its `/proc/<pid>/status`).
    pub fn pid(&self) -> u32 {
        self.server.id()
    }

    /// Ends the session; returns everything the binary wrote.
    pub fn finish(self) -> Output {
        self.server.finish(Duration::from_secs(30))
    }
}

/// Each message on a line of its own.
pub fn lines(messages: &[Value]) -> String {
    messages
        .iter()
        .map(|message| format!("{message}\n"))
        .collect()
}

/// A `tools/call` of `control_zwave_device` with request id `id`.
pub fn control(id: impl Into<Value>, device: &str, action: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": id.into(), "method": "tools/call", "params": {
        "name": "control_zwave_device", "arguments": {"deviceName": device, "action": action}}})
}

/// The client's `notifications/cancelled` for request `id`.
pub fn cancel(id: impl Into<Value>) -> Value {
    json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": id.into(), "reason": "test"}})
}

/// `initialize`, `notifications/initialized`, then each call as `tools/call` with ids 2, 3, …
pub fn session(calls: &[(&str, Value)]) -> Vec<Value> {
    let mut messages = vec![
        json!({"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"test","version":"1"}}}),
        json!({"jsonrpc":"2.0","method":"notifications/initialized"}),
    ];
    for (i, (tool, args)) in calls.iter().enumerate() {
        messages.push(json!({"jsonrpc":"2.0","id": i + 2,"method":"tools/call","params":{"name": tool, "arguments": args}}));
    }
    messages
}

/// Every stdout line, each a JSON-RPC message.
pub fn messages(output: &Output) -> Vec<Value> {
    let stdout = std::str::from_utf8(&output.stdout).expect("stdout is UTF-8");
    assert!(stdout.is_empty() || stdout.ends_with('\n'), "{stdout:?}");
    stdout
        .lines()
        .map(|line| serde_json::from_str(line).unwrap_or_else(|err| panic!("{err}: {line:?}")))
        .collect()
}

/// The text of the tool result answering request `id`, and whether it is an error.
pub fn answer(output: &Output, id: impl Into<Value>) -> (bool, String) {
    let id = id.into();
    let messages = messages(output);
    let reply = messages
        .iter()
        .find(|message| message["id"] == id)
        .unwrap_or_else(|| {
            panic!(
                "no answer to {id}: {messages:?}\nstderr: {}",
                String::from_utf8_lossy(&output.stderr)
            )
        });
    let result = &reply["result"];
    (
        result["isError"] == json!(true),
        result["content"][0]["text"]
            .as_str()
            .unwrap_or_default()
            .to_owned(),
    )
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
