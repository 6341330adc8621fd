//! A simulated zwave-js-server: the demo home (or any home of the simulator) served over
//! zwave-js-server's WebSocket API, as the recorded sessions show it
//! (`fixtures/zwave-js-server/`, `captures/ws/FACTS.md`), with its own code: none of the
//! backend's (`crate::gateway::zwave_js`) is used to build what it sends.
//!
//! Per connection: the `version` message, `set_api_schema`, `start_listening` (the whole
//! state: every node with its values and their metadata), then commands and events. Writes
//! go through the simulated devices (`device`) and come back in the real server's order:
//! without Supervision the result first and then zwave-js's optimistic `value updated`
//! events; with it the target value's event, the result, then the current value's. The
//! device's own report follows after its delay, to every listening client. Knobs as for the
//! MQTT simulator: stuck and supervised nodes, reports off, the start-up sequence (the port
//! open at driver ready, nodes not interviewed yet, then each node's `ready` with its whole
//! state), the server stopped (every connection closed and new ones refused) and started
//! again, and the server frozen (a stopped process: connections stay open and nothing is read
//! or answered, not even a ping) and thawed.

use std::{
    collections::HashMap,
    sync::{
        Arc, Mutex,
        atomic::{AtomicBool, AtomicU64, Ordering},
    },
    time::Duration,
};

use futures_util::{SinkExt as _, StreamExt as _};
use serde_json::{Value, json};
use tokio::{net::TcpListener, sync::broadcast};
use tokio_tungstenite::tungstenite::Message;
use tracing::{debug, info, warn};

use super::{
    api::find_node,
    device::{self, Change, Devices},
    node::value_key_of,
    state::{Knobs, ReportDelays, lock},
};

/// The versions the simulated server gives (those of the recorded sessions).
const SERVER_VERSION: &str = "3.10.2";
const DRIVER_VERSION: &str = "15.29.0";
const HOME_ID: u64 = 3_735_928_559;

/// A running simulated zwave-js-server; stops when dropped.
pub struct SimZwaveJsServer {
    url: String,
    sim: Arc<WsSim>,
    task: tokio::task::JoinHandle<()>,
}

struct WsSim {
    nodes: Mutex<Vec<Value>>,
    knobs: Mutex<Knobs>,
    last_levels: Mutex<HashMap<u16, u8>>,
    latest_write: Mutex<HashMap<(u16, String), u64>>,
    truth: Mutex<HashMap<(u16, String), Value>>,
    reports: ReportDelays,
    /// Events for every listening client: `(the connection that caused it, the message)`;
    /// that connection has sent it already, in its place among its answers.
    events: broadcast::Sender<(u64, String)>,
    /// Every command received, in order.
    received: Mutex<Vec<Value>>,
    /// The values of nodes whose interview runs, given back when it completes.
    interviewing: Mutex<HashMap<u16, Value>>,
    /// Whether connections are served: a stopped server closes them and refuses new ones.
    running: AtomicBool,
    /// Bumped when the server stops: connections of an older generation end.
    generation: tokio::sync::watch::Sender<u64>,
    /// Whether the server is frozen, as a process stopped by SIGSTOP.
    frozen: tokio::sync::watch::Sender<bool>,
    /// Commands received (and recorded) but never answered nor carried out: a server whose
    /// driver waits for ever on the device.
    unanswered: Mutex<std::collections::HashSet<String>>,
    next_connection: AtomicU64,
}

impl SimZwaveJsServer {
    /// Serves `home` (nodes as `getNodes` gives them, like [`super::home::demo_home`]) on
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
        let sim = Arc::new(WsSim {
            nodes: Mutex::new(home),
            knobs: Mutex::new(Knobs::default()),
            last_levels: Mutex::default(),
            latest_write: Mutex::default(),
            truth: Mutex::default(),
            reports,
            events: broadcast::channel(1024).0,
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
    pub fn set_stuck(&self, node: u16, stuck: bool) {
        lock(&self.sim.knobs).set_stuck(node, stuck);
    }

    /// Makes the lock `node` jam at every lock or unlock.
    pub fn set_jammed(&self, node: u16, jammed: bool) {
        lock(&self.sim.knobs).set_jammed(node, jammed);
    }

    /// Gives `node` Supervision: a Set is answered 255 once done, and no report follows.
    pub fn set_supervised(&self, node: u16, supervised: bool) {
        lock(&self.sim.knobs).set_supervised(node, supervised);
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
    pub fn report(&self, node: u16, key: &str, value: Value) {
        let change = super::api::set_value(&mut lock(&self.sim.nodes), node, key, value);
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
                .unwrap_or(0);
            interviewing.insert(id, std::mem::replace(&mut node["values"], json!({})));
            node["ready"] = json!(false);
            node["status"] = json!("Unknown");
        }
    }

    /// `node`'s interview completes, with the events of the recorded start-up: `alive`,
    /// `ready` with the node's whole state, `interview completed`.
    pub fn finish_interview(&self, node: u16) {
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
    pub fn notify(&self, node: u16, key: &str, value: Value) {
        devices(&self.sim).forget_truth(node, key);
        let change = super::api::set_value(&mut lock(&self.sim.nodes), node, key, value.clone());
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

async fn accept(listener: TcpListener, sim: Arc<WsSim>) {
    while let Ok((stream, _)) = listener.accept().await {
        if !sim.running.load(Ordering::SeqCst) {
            // As a server that is down: the connection goes at once.
            drop(stream);
            continue;
        }
        let _ = stream.set_nodelay(true);
        let sim = Arc::clone(&sim);
        tokio::spawn(async move {
            // A frozen process does not get to the WebSocket handshake.
            let _ = sim.frozen.subscribe().wait_for(|frozen| !*frozen).await;
            match tokio_tungstenite::accept_async(stream).await {
                Ok(socket) => serve(socket, &sim).await,
                Err(err) => debug!(error = %err, "a WebSocket handshake failed"),
            }
        });
    }
}

type Socket = tokio_tungstenite::WebSocketStream<tokio::net::TcpStream>;

/// One client, until it goes or the server stops.
async fn serve(mut socket: Socket, sim: &Arc<WsSim>) {
    let id = sim.next_connection.fetch_add(1, Ordering::SeqCst);
    let mut generation = sim.generation.subscribe();
    let mut frozen = sim.frozen.subscribe();
    let mut events = sim.events.subscribe();
    let mut listening = false;
    let version = json!({"type": "version", "driverVersion": DRIVER_VERSION,
        "serverVersion": SERVER_VERSION, "homeId": HOME_ID,
        "minSchemaVersion": 0, "maxSchemaVersion": 50});
    if socket
        .send(Message::text(version.to_string()))
        .await
        .is_err()
    {
        return;
    }
    loop {
        // Frozen: the socket stays open, untouched, until thawed or the server stops.
        while *frozen.borrow_and_update() {
            tokio::select! {
                changed = frozen.changed() => if changed.is_err() { return },
                _ = generation.changed() => return,
            }
        }
        let outgoing = tokio::select! {
            _ = generation.changed() => return,
            Ok(()) = frozen.changed() => continue,
            frame = socket.next() => match frame {
                Some(Ok(Message::Text(text))) => {
                    let outgoing = answer(sim, id, &text, &mut listening);
                    if let Some(delay) = delay_of(sim, &text) {
                        tokio::time::sleep(delay).await;
                    }
                    outgoing
                }
                Some(Ok(Message::Close(_)) | Err(_)) | None => return,
                Some(Ok(_)) => continue,
            },
            event = events.recv() => match event {
                Ok((origin, _)) if origin == id || !listening => continue,
                Ok((_, event)) => vec![event],
                Err(broadcast::error::RecvError::Lagged(missed)) => {
                    warn!(missed, "a client of the simulated zwave-js-server missed events");
                    continue;
                }
                Err(broadcast::error::RecvError::Closed) => return,
            },
        };
        for message in outgoing {
            if socket.send(Message::text(message)).await.is_err() {
                return;
            }
        }
    }
}

/// How late the answer to the command `text` comes, if late.
fn delay_of(sim: &WsSim, text: &str) -> Option<Duration> {
    let command = serde_json::from_str::<Value>(text).ok()?;
    let name = command.get("command")?.as_str()?;
    lock(&sim.knobs).delays.get(name).copied()
}

/// What to send for one command, in order.
fn answer(sim: &Arc<WsSim>, connection: u64, text: &str, listening: &mut bool) -> Vec<String> {
    let Ok(command) = serde_json::from_str::<Value>(text) else {
        return Vec::new();
    };
    lock(&sim.received).push(command.clone());
    if command
        .get("command")
        .and_then(Value::as_str)
        .is_some_and(|name| lock(&sim.unanswered).contains(name))
    {
        return Vec::new();
    }
    let id = command.get("messageId").cloned().unwrap_or(Value::Null);
    let ok = |result: Value| {
        json!({"type": "result", "success": true, "messageId": id, "result": result}).to_string()
    };
    let failed = |code: &str, extra: Value| {
        let mut failure =
            json!({"type": "result", "success": false, "messageId": id, "errorCode": code});
        if let (Value::Object(fields), Value::Object(extra)) = (&mut failure, extra) {
            fields.extend(extra);
        }
        failure.to_string()
    };
    let node_id = command
        .get("nodeId")
        .and_then(Value::as_u64)
        .and_then(|node| u16::try_from(node).ok());
    let known = node_id.filter(|node| find_node(&lock(&sim.nodes), *node).is_some());
    let not_found = || {
        failed(
            "node_not_found",
            json!({"message": "", "args": {"nodeId": command.get("nodeId")}}),
        )
    };
    match command.get("command").and_then(Value::as_str).unwrap_or("") {
        "set_api_schema" => vec![ok(json!({}))],
        "start_listening" => {
            *listening = true;
            vec![ok(json!({"state": state(&lock(&sim.nodes))}))]
        }
        "node.set_value" => match known {
            Some(node) => set_value(sim, connection, node, &command, ok),
            None => vec![not_found()],
        },
        "node.poll_value" => match known {
            Some(node) => poll_value(sim, connection, node, &command, ok),
            None => vec![not_found()],
        },
        "node.get_state" => match known {
            Some(node) => {
                let nodes = lock(&sim.nodes);
                let state = find_node(&nodes, node).map(node_state).unwrap_or_default();
                vec![ok(json!({ "state": state }))]
            }
            None => vec![not_found()],
        },
        "node.set_name" | "node.set_location" => match known {
            Some(node) => {
                let (field, key) = if command["command"] == "node.set_name" {
                    ("name", "name")
                } else {
                    ("loc", "location")
                };
                let mut nodes = lock(&sim.nodes);
                if let Some(found) = nodes.iter_mut().find(|n| n["id"] == json!(node)) {
                    found[field] = command.get(key).cloned().unwrap_or_default();
                }
                vec![ok(json!({}))]
            }
            None => vec![not_found()],
        },
        other => vec![failed(
            "unknown_command",
            json!({"args": {"command": other}}),
        )],
    }
}

/// `node.set_value`, answered in the real server's order.
fn set_value(
    sim: &Arc<WsSim>,
    connection: u64,
    node: u16,
    command: &Value,
    ok: impl Fn(Value) -> String,
) -> Vec<String> {
    let key = value_key(command.get("valueId").unwrap_or(&Value::Null));
    let value = command.get("value").cloned().unwrap_or(Value::Null);
    let write = device::write(&devices(sim), node, &key, value);
    let result = ok(json!({ "result": write.result }));
    let events: Vec<String> = write.optimistic.iter().map(value_updated).collect();
    // Every other listener gets the events; this connection gets them in their place.
    for event in &events {
        let _ = sim.events.send((connection, event.clone()));
    }
    let mut messages = Vec::with_capacity(events.len() + 1);
    let mut events = events.into_iter();
    if write.result["status"] == json!(255) {
        // The target value's event, the result, then the rest.
        messages.extend(events.next());
    }
    messages.push(result);
    messages.extend(events);
    for report in write.reports {
        let sim = Arc::clone(sim);
        tokio::spawn(async move {
            tokio::time::sleep(report.delay).await;
            for change in device::report(&devices(&sim), &report) {
                let _ = sim.events.send((0, value_updated(&change)));
            }
        });
    }
    messages
}

/// `node.poll_value`: the device answers with its value, which is also an event.
fn poll_value(
    sim: &Arc<WsSim>,
    connection: u64,
    node: u16,
    command: &Value,
    ok: impl Fn(Value) -> String,
) -> Vec<String> {
    let key = value_key(command.get("valueId").unwrap_or(&Value::Null));
    let mut nodes = lock(&sim.nodes);
    let Some(found) = find_node(&nodes, node) else {
        return Vec::new();
    };
    let Some(value) = found["values"].get(&key) else {
        return vec![ok(json!({}))];
    };
    let cached = value.get("value").cloned().unwrap_or(Value::Null);
    // The device answers the Get with its own state, which the driver then caches.
    let answer = devices(sim).answer(node, &key, cached.clone());
    let change = if answer == cached {
        Some(Change {
            node: found.clone(),
            value: value.clone(),
            previous: cached,
        })
    } else {
        super::api::set_value(&mut nodes, node, &key, answer.clone())
    };
    let Some(change) = change else {
        return vec![ok(json!({ "value": answer }))];
    };
    let event = value_updated(&change);
    let _ = sim.events.send((connection, event.clone()));
    vec![ok(json!({ "value": answer })), event]
}

fn devices(sim: &WsSim) -> Devices<'_> {
    Devices {
        nodes: &sim.nodes,
        knobs: &sim.knobs,
        last_levels: &sim.last_levels,
        latest_write: &sim.latest_write,
        truth: &sim.truth,
        reports: sim.reports,
    }
}

/// The key the simulator keeps a value under, of a command's `valueId`.
fn value_key(value_id: &Value) -> String {
    let mut id = value_id.clone();
    if id.get("endpoint").is_none() {
        id["endpoint"] = json!(0);
    }
    value_key_of(&id)
}

/// Where a value is, as an event's `args` name it: command class, endpoint, property, key.
fn address(value: &Value) -> Value {
    let mut args = json!({
        "commandClass": value["commandClass"],
        "endpoint": value.get("endpoint").cloned().unwrap_or(json!(0)),
        "property": value["property"],
    });
    if let Some(key) = value.get("propertyKey").filter(|key| !key.is_null()) {
        args["propertyKey"] = key.clone();
    }
    args
}

/// A `value updated` event for a change.
fn value_updated(change: &Change) -> String {
    let value = &change.value;
    let mut args = address(value);
    args["commandClassName"] = value["commandClassName"].clone();
    args["newValue"] = value.get("value").cloned().unwrap_or(Value::Null);
    args["prevValue"] = change.previous.clone();
    args["propertyName"] = value
        .get("propertyName")
        .cloned()
        .unwrap_or(value["property"].clone());
    json!({"type": "event", "event": {"source": "node", "event": "value updated",
        "nodeId": change.node["id"], "args": args}})
    .to_string()
}

/// The `start_listening` state of a home: the driver, the controller, every node.
fn state(nodes: &[Value]) -> Value {
    json!({
        "driver": {"logConfig": {"enabled": true, "level": "info"}, "statisticsEnabled": false},
        "controller": {"type": 1, "homeId": HOME_ID, "ownNodeId": 1, "isSISPresent": true},
        "nodes": nodes.iter().filter(|node| node["virtual"] != json!(true)).map(node_state).collect::<Vec<_>>(),
    })
}

/// A node as zwave-js-server describes it: status as a number, location, `lastSeen` as a
/// date, values as a list each with its metadata (states as a map).
fn node_state(node: &Value) -> Value {
    let status = match node["status"].as_str().unwrap_or("Unknown") {
        "Asleep" => 1,
        "Awake" => 2,
        "Dead" => 3,
        "Alive" => 4,
        _ => 0,
    };
    let values: Vec<Value> = node["values"]
        .as_object()
        .into_iter()
        .flat_map(|values| values.values())
        .map(value_state)
        .collect();
    let ready = node["ready"].as_bool().unwrap_or(true);
    let mut state = json!({
        "nodeId": node["id"],
        "index": 0,
        "status": status,
        "ready": ready,
        "isControllerNode": node.get("isControllerNode").cloned().unwrap_or(json!(false)),
        // As recorded at driver start: the interview not begun, or done.
        "interviewStage": if ready { "Complete" } else { "None" },
        "deviceConfig": {"label": node["productLabel"], "manufacturer": node["manufacturer"]},
        "values": values,
    });
    for (field, key) in [("name", "name"), ("loc", "location")] {
        if let Some(text) = node[field].as_str().filter(|text| !text.is_empty()) {
            state[key] = json!(text);
        }
    }
    if let Some(at) = node["lastActive"]
        .as_i64()
        .and_then(|ms| jiff::Timestamp::from_millisecond(ms).ok())
    {
        state["lastSeen"] = json!(at.to_string());
    }
    state
}

/// A value as zwave-js-server describes it: the address and the value, the rest in
/// `metadata`.
fn value_state(value: &Value) -> Value {
    let mut metadata = json!({
        "type": value.get("type").cloned().unwrap_or(json!("any")),
        "readable": value.get("readable").cloned().unwrap_or(json!(true)),
        "writeable": value.get("writeable").cloned().unwrap_or(json!(false)),
        "stateful": true,
        "secret": false,
    });
    for field in ["label", "unit", "min", "max"] {
        if let Some(found) = value.get(field).filter(|found| !found.is_null()) {
            metadata[field] = found.clone();
        }
    }
    if let Some(states) = value["states"].as_array() {
        let map: serde_json::Map<String, Value> = states
            .iter()
            .map(|state| {
                let key = match &state["value"] {
                    Value::String(text) => text.clone(),
                    other => other.to_string(),
                };
                (key, state["text"].clone())
            })
            .collect();
        metadata["states"] = Value::Object(map);
    }
    let mut state = json!({
        "endpoint": value.get("endpoint").cloned().unwrap_or(json!(0)),
        "commandClass": value["commandClass"],
        "commandClassName": value.get("commandClassName").cloned().unwrap_or_default(),
        "property": value["property"],
        "metadata": metadata,
    });
    for field in ["propertyName", "propertyKey", "propertyKeyName", "value"] {
        if let Some(found) = value.get(field).filter(|found| !found.is_null()) {
            state[field] = found.clone();
        }
    }
    state
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{
        gateway::zwave_js::state::nodes_from_state,
        gateway::{NodeId, now_ms},
        sim::home::demo_home,
    };

    /// The backend reads the simulator's state as the node model `getNodes` gives for the
    /// same home: names, kinds of value, units, states and what sets what.
    #[test]
    fn the_state_reads_back_as_the_same_home() {
        let home = demo_home(now_ms());
        let from_ws = nodes_from_state(&state(&home)).unwrap();
        let mut from_mqtt = crate::gateway::parse_nodes(Value::Array(home)).unwrap();
        // zwave-js-server does not list Z-Wave JS UI's virtual broadcast node.
        from_mqtt.retain(|_, node| !node.is_virtual);
        assert_eq!(
            from_ws.keys().collect::<Vec<_>>(),
            from_mqtt.keys().collect::<Vec<_>>()
        );
        for (id, node) in &from_mqtt {
            let other = &from_ws[id];
            assert_eq!(
                (&other.name, &other.loc, other.ready),
                (&node.name, &node.loc, node.ready),
                "{id}"
            );
            assert_eq!(
                other.values.keys().collect::<Vec<_>>(),
                node.values.keys().collect::<Vec<_>>(),
                "{id}"
            );
            // A JavaScript object keeps its text keys in insertion order ("true" before
            // "false"); ours sorts them: the states are compared as a set.
            let states = |value: &crate::gateway::ValueInfo| {
                value.states.clone().map(|mut states| {
                    states.sort_by(|a, b| a.text.cmp(&b.text));
                    states
                })
            };
            for (key, value) in &node.values {
                let seen = &other.values[key];
                assert_eq!(
                    (
                        &seen.value,
                        &seen.unit,
                        &seen.kind,
                        seen.writeable,
                        states(seen)
                    ),
                    (
                        &value.value,
                        &value.unit,
                        &value.kind,
                        value.writeable,
                        states(value)
                    ),
                    "{id} {key}"
                );
                assert_eq!(seen.target_value, value.target_value, "{id} {key}");
            }
        }
        assert!(from_ws.contains_key(&NodeId(2)));
    }
}
