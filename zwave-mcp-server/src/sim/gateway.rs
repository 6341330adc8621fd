//! A simulated Z-Wave JS UI gateway speaking the real MQTT API, for `--demo`, `simulate` and tests.
//!
//! It behaves like the captures: API requests on `.../api/<api>/set`, replies on the topic
//! without `/set` echoing the request as `origin`, `writeValue` statuses (254 on success, 2 for
//! unknown or dead nodes, 4 for read-only values, 5 for wrong types), optimistic value updates
//! published before the reply, retained status topics with a last will, and node names in
//! value topics. Knobs on [`SimControl`] inject the failures tests need.

use std::{
    collections::HashMap,
    sync::{
        Arc, Mutex, MutexGuard, PoisonError,
        atomic::{AtomicU64, Ordering},
    },
    time::Duration,
};

use rumqttc::{AsyncClient, Event, LastWill, Packet, QoS};
use serde::Deserialize as _;
use serde_json::{Value, json};
use tracing::{debug, info, warn};

use super::{home::demo_home, node::value_key_of};
use crate::{
    config::MqttUrl,
    gateway::{
        MqttSettings, NodeInfo, now_ms,
        topics::{self, TopicStyle},
    },
};

/// How value topics and payloads are published (Z-Wave JS UI's gateway settings).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum PayloadType {
    /// 0: `{"time":..,"value":..}`.
    #[default]
    TimeValue,
    /// 1: the entire value object.
    EntireValueId,
    /// 2: the bare value.
    Raw,
}

/// Settings of the simulated gateway.
#[derive(Debug, Clone)]
pub struct SimOptions {
    /// Topic prefix.
    pub prefix: String,
    /// Gateway name.
    pub gateway_name: String,
    /// How value topics are built.
    pub style: TopicStyle,
    /// How value payloads look.
    pub payload: PayloadType,
}

impl Default for SimOptions {
    fn default() -> Self {
        Self {
            prefix: "zwave".into(),
            gateway_name: "zwave-js-ui".into(),
            style: TopicStyle::default(),
            payload: PayloadType::default(),
        }
    }
}

#[derive(Debug)]
struct Knobs {
    driver_ready: bool,
    silent: bool,
    write_status: Option<i64>,
    confirm_writes: bool,
    delays: HashMap<String, Duration>,
}

pub(super) struct Sim {
    client: AsyncClient,
    pub(super) options: SimOptions,
    pub(super) nodes: Mutex<Vec<Value>>,
    knobs: Mutex<Knobs>,
    /// Last non-zero level of each dimmer, restored by a write of 255.
    last_levels: Mutex<HashMap<u16, u8>>,
    /// True once subscribed to the API topics (after every connection).
    ready: tokio::sync::watch::Sender<bool>,
    /// True once everything Z-Wave JS UI publishes on connecting has been handed to the client
    /// (after every connection).
    published: tokio::sync::watch::Sender<bool>,
    /// Messages handed to the client, and how many of them the broker acknowledged (QoS 1).
    sent: AtomicU64,
    acked: tokio::sync::watch::Sender<u64>,
    /// Every API request received, in order: what the gateway really got, and when.
    received: Mutex<Vec<ReceivedRequest>>,
    /// Values of nodes whose interview is running, restored when it completes.
    interviewing: Mutex<HashMap<u16, Value>>,
}

/// An API request as the simulated gateway received it.
#[derive(Debug, Clone, PartialEq)]
pub struct ReceivedRequest {
    /// When it arrived.
    pub at: std::time::Instant,
    /// The API (`writeValue`, ...).
    pub api: String,
    /// The request object (`requestId`, `args`).
    pub payload: Value,
}

/// Handle to a running simulated gateway; clones share it.
#[derive(Clone)]
pub struct SimControl {
    pub(super) sim: Arc<Sim>,
}

pub(super) fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

impl SimControl {
    /// Connects to the broker at `url` as `ZWAVE_GATEWAY-<name>` and serves the demo home.
    /// Returns at once; the connection is retried in the background.
    pub fn start(url: &MqttUrl, options: SimOptions) -> Self {
        Self::start_with(
            &MqttSettings::new(url.clone()),
            options,
            demo_home(now_ms()),
        )
    }

    /// Like [`SimControl::start`], with the broker's credentials and TLS settings and a home
    /// of one's own (`getNodes` objects).
    pub fn start_with(broker: &MqttSettings, options: SimOptions, nodes: Vec<Value>) -> Self {
        let client_id = format!("ZWAVE_GATEWAY-{}", options.gateway_name);
        let mut mqtt = broker.mqtt_options(&client_id);
        mqtt.set_max_packet_size(16 * 1024 * 1024, 16 * 1024 * 1024);
        mqtt.set_last_will(LastWill::new(
            status_topic(&options),
            r#"{"value":false}"#,
            QoS::AtLeastOnce,
            true,
        ));
        let (client, mut event_loop) = AsyncClient::new(mqtt, 1024);
        let mut network = event_loop.network_options();
        network.set_tcp_nodelay(true);
        event_loop.set_network_options(network);
        let sim = Arc::new(Sim {
            client,
            options,
            nodes: Mutex::new(nodes),
            knobs: Mutex::new(Knobs {
                driver_ready: true,
                silent: false,
                write_status: None,
                confirm_writes: true,
                delays: HashMap::new(),
            }),
            last_levels: Mutex::new(HashMap::new()),
            ready: tokio::sync::watch::Sender::new(false),
            published: tokio::sync::watch::Sender::new(false),
            sent: AtomicU64::new(0),
            acked: tokio::sync::watch::Sender::new(0),
            received: Mutex::default(),
            interviewing: Mutex::default(),
        });
        let weak = Arc::downgrade(&sim);
        tokio::spawn(async move {
            loop {
                let event = event_loop.poll().await;
                let Some(sim) = weak.upgrade() else { return };
                match event {
                    Ok(Event::Incoming(Packet::ConnAck(_))) => {
                        info!(gateway = %sim.options.gateway_name, "simulated gateway connected");
                        let api = format!("{}/api/+/set", gateway_topic(&sim.options));
                        if let Err(err) = sim.client.try_subscribe(api, QoS::AtLeastOnce) {
                            warn!(error = %err, "simulated gateway cannot subscribe");
                        }
                        tokio::spawn(publish_everything(sim));
                    }
                    Ok(Event::Incoming(Packet::SubAck(_))) => {
                        sim.ready.send_replace(true);
                    }
                    Ok(Event::Incoming(Packet::Publish(publish))) => {
                        tokio::spawn(handle_request(sim, publish.topic, publish.payload.to_vec()));
                    }
                    Ok(Event::Incoming(Packet::PubAck(_))) => {
                        sim.acked.send_modify(|acked| *acked += 1);
                    }
                    Ok(_) => {}
                    Err(err) => {
                        debug!(error = %err, "simulated gateway lost the broker; retrying");
                        sim.ready.send_replace(false);
                        sim.published.send_replace(false);
                        // What was not acknowledged is lost with the connection.
                        sim.sent.store(*sim.acked.borrow(), Ordering::SeqCst);
                        drop(sim);
                        tokio::time::sleep(Duration::from_millis(200)).await;
                    }
                }
            }
        });
        Self { sim }
    }

    /// Waits until the gateway is connected and subscribed to its API topics.
    ///
    /// # Errors
    /// When that takes longer than `timeout`.
    pub async fn wait_ready(&self, timeout: Duration) -> Result<(), tokio::time::error::Elapsed> {
        let mut ready = self.sim.ready.subscribe();
        tokio::time::timeout(timeout, ready.wait_for(|ready| *ready))
            .await
            .map(|_| ())
    }

    /// Waits until the gateway is subscribed to its API topics and the broker holds everything
    /// the gateway publishes on connecting (statuses and every value, retained), so a client subscribing now gets all of it as retained messages.
    ///
    /// # Errors
    /// When that takes longer than `timeout`.
    pub async fn wait_published(
        &self,
        timeout: Duration,
    ) -> Result<(), tokio::time::error::Elapsed> {
        tokio::time::timeout(timeout, async {
            let mut ready = self.sim.ready.subscribe();
            let _ = ready.wait_for(|ready| *ready).await;
            let mut published = self.sim.published.subscribe();
            let _ = published.wait_for(|published| *published).await;
            let sent = self.sim.sent.load(Ordering::SeqCst);
            let mut acked = self.sim.acked.subscribe();
            let _ = acked.wait_for(|acked| *acked >= sent).await;
        })
        .await
    }

    /// Switches the Z-Wave driver on or off: off publishes `driver/status false` and makes every
    /// API answer "Z-Wave client not connected", as seen when the controller is lost.
    pub async fn set_driver_ready(&self, ready: bool) {
        lock(&self.sim.knobs).driver_ready = ready;
        let topic = format!("{}/driver/status", self.sim.options.prefix);
        publish(&self.sim, topic, ready.to_string().into_bytes(), true).await;
    }

    /// When silent, API requests get no reply at all.
    pub fn set_silent(&self, silent: bool) {
        lock(&self.sim.knobs).silent = silent;
    }

    /// Forces the `writeValue` status (e.g. 2 Fail) and leaves values unchanged; `None` restores.
    pub fn set_write_status(&self, status: Option<i64>) {
        lock(&self.sim.knobs).write_status = status;
    }

    /// When false, writes are acknowledged but the device never reports its new state.
    pub fn set_confirm_writes(&self, confirm: bool) {
        lock(&self.sim.knobs).confirm_writes = confirm;
    }

    /// Delays the reply to every request of `api` (replies then arrive out of order).
    pub fn set_delay(&self, api: &str, delay: Duration) {
        lock(&self.sim.knobs).delays.insert(api.to_owned(), delay);
    }

    /// Publishes the gateway's last will (`{"value":false}`, retained), as after a crash.
    pub async fn announce_offline(&self) {
        publish(
            &self.sim,
            status_topic(&self.sim.options),
            br#"{"value":false}"#.to_vec(),
            true,
        )
        .await;
    }

    /// Publishes the gateway status `{"value":true}` again.
    pub async fn announce_online(&self) {
        let payload = json!({"value": true, "time": now_ms()})
            .to_string()
            .into_bytes();
        publish(&self.sim, status_topic(&self.sim.options), payload, true).await;
    }

    /// Z-Wave JS UI stops (restart, crash): its driver and then its gateway status go false.
    /// Until [`SimControl::driver_up_with_unready_nodes`], every API call is answered "Z-Wave
    /// client not connected" (restart captures: about 8 s of that after the gateway is back).
    pub async fn stop_zwave_js_ui(&self) {
        lock(&self.sim.knobs).driver_ready = false;
        publish(&self.sim, self.driver_topic(), b"false".to_vec(), true).await;
        self.announce_offline().await;
    }

    /// The driver comes up as after a restart: every node is known but not interviewed yet
    /// (`ready: false`, status `Unknown`, no values) and its status topic says so. Each node's
    /// interview then completes with [`SimControl::finish_interview`].
    pub async fn driver_up_with_unready_nodes(&self) {
        let unready: Vec<u16> = {
            let mut nodes = lock(&self.sim.nodes);
            let mut interviewing = lock(&self.sim.interviewing);
            nodes
                .iter_mut()
                .filter(|node| {
                    node["isControllerNode"] != json!(true) && node["virtual"] != json!(true)
                })
                .filter_map(|node| {
                    let id = u16::try_from(node["id"].as_u64()?).ok()?;
                    interviewing.insert(id, node["values"].take());
                    node["values"] = json!({});
                    node["ready"] = json!(false);
                    node["status"] = json!("Unknown");
                    Some(id)
                })
                .collect()
        };
        lock(&self.sim.knobs).driver_ready = true;
        publish(&self.sim, self.driver_topic(), b"true".to_vec(), true).await;
        for id in unready {
            self.publish_node_status(id, true, "Unknown").await;
        }
    }

    /// A node's interview completes: its values are back, it is `ready` and `Alive`, and its
    /// status topic and values are published.
    pub async fn finish_interview(&self, node: u16) {
        let Some(values) = lock(&self.sim.interviewing).remove(&node) else {
            return;
        };
        let updated = {
            let mut nodes = lock(&self.sim.nodes);
            let Some(found) = nodes.iter_mut().find(|n| n["id"] == json!(node)) else {
                return;
            };
            found["values"] = values;
            found["ready"] = json!(true);
            found["status"] = json!("Alive");
            found.clone()
        };
        self.publish_node_status(node, true, "Alive").await;
        for value in updated["values"]
            .as_object()
            .into_iter()
            .flat_map(|v| v.values())
        {
            publish_value(&self.sim, &updated, value).await;
        }
    }

    /// The owner renames a node (and moves it) in Z-Wave JS UI: `getNodes` gives the new name
    /// and location, and the node's status is published on its new topic.
    pub async fn rename_node(&self, node: u16, name: &str, loc: &str) {
        let status = {
            let mut nodes = lock(&self.sim.nodes);
            let Some(found) = nodes.iter_mut().find(|n| n["id"] == json!(node)) else {
                return;
            };
            found["name"] = json!(name);
            found["loc"] = json!(loc);
            found["status"].as_str().unwrap_or("Alive").to_owned()
        };
        self.publish_node_status(node, status != "Dead", &status)
            .await;
    }

    /// Z-Wave JS UI no longer has this node (removed while nobody watched): `getNodes` leaves
    /// it out and `writeValue` to it answers `success: true` with `result.status: 2`.
    pub fn forget_node(&self, node: u16) {
        lock(&self.sim.nodes).retain(|n| n["id"] != json!(node));
    }

    fn driver_topic(&self) -> String {
        format!("{}/driver/status", self.sim.options.prefix)
    }

    async fn publish_node_status(&self, node: u16, available: bool, status: &str) {
        let info = {
            let nodes = lock(&self.sim.nodes);
            nodes
                .iter()
                .find(|n| n["id"] == json!(node))
                .and_then(|n| serde_json::from_value::<NodeInfo>(n.clone()).ok())
        };
        let Some(info) = info else { return };
        let topic = format!(
            "{}/status",
            topics::node_path(&self.sim.options.prefix, &info, self.sim.options.style)
        );
        let payload =
            json!({"time": now_ms(), "value": available, "status": status, "nodeId": node});
        publish(&self.sim, topic, payload.to_string().into_bytes(), true).await;
    }

    /// Publishes a node's status as Z-Wave JS UI does when a node dies or comes back
    /// (`{"value":<available>,"status":"Dead"|"Alive",...}`), and serves it from then on.
    pub async fn set_node_status(&self, node: u16, status: &str) {
        let available = status != "Dead";
        {
            let mut nodes = lock(&self.sim.nodes);
            let Some(node_json) = nodes.iter_mut().find(|n| n["id"] == json!(node)) else {
                return;
            };
            node_json["status"] = json!(status);
            node_json["available"] = json!(available);
        }
        self.publish_node_status(node, available, status).await;
    }

    /// Changes a value as a local button press would: the current value changes and is
    /// published, the target value does not.
    pub async fn press(&self, node: u16, key: &str, value: Value) {
        let changed = {
            let mut nodes = lock(&self.sim.nodes);
            set_value(&mut nodes, node, key, value)
        };
        if let Some((node, value)) = changed {
            publish_value(&self.sim, &node, &value).await;
        }
    }

    /// Every API request received so far, in order.
    pub fn received(&self) -> Vec<ReceivedRequest> {
        lock(&self.sim.received).clone()
    }

    /// The current value `key` of `node` in the simulated home.
    pub fn value(&self, node: u16, key: &str) -> Option<Value> {
        let nodes = lock(&self.sim.nodes);
        find_node(&nodes, node)?
            .get("values")?
            .get(key)?
            .get("value")
            .cloned()
    }

    /// The topic the simulator publishes value `key` of `node` on.
    pub fn value_topic(&self, node: u16, key: &str) -> Option<String> {
        let nodes = lock(&self.sim.nodes);
        let node_json = find_node(&nodes, node)?;
        let value = node_json.get("values")?.get(key)?;
        Some(value_topic(&self.sim.options, node_json, value))
    }
}

fn gateway_topic(options: &SimOptions) -> String {
    format!(
        "{}/_CLIENTS/ZWAVE_GATEWAY-{}",
        options.prefix, options.gateway_name
    )
}

fn status_topic(options: &SimOptions) -> String {
    format!("{}/status", gateway_topic(options))
}

fn find_node(nodes: &[Value], id: u16) -> Option<&Value> {
    nodes.iter().find(|node| node["id"] == json!(id))
}

pub(super) fn value_topic(options: &SimOptions, node: &Value, value: &Value) -> String {
    // The topic needs only the node's id, name and location: parsing its values too would
    // make publishing a node's values quadratic in their number.
    let identity = json!({"id": node["id"], "name": node["name"], "loc": node["loc"]});
    let (Ok(node_info), Ok(value_info)) = (
        NodeInfo::deserialize(&identity),
        crate::gateway::ValueInfo::deserialize(value),
    ) else {
        return format!("{}/invalid", options.prefix);
    };
    format!(
        "{}/{}",
        topics::node_path(&options.prefix, &node_info, options.style),
        topics::value_path(&value_info, options.style.kind)
    )
}

pub(super) fn value_payload(options: &SimOptions, value: &Value) -> Vec<u8> {
    let now = now_ms();
    match options.payload {
        PayloadType::TimeValue => {
            let mut payload = json!({"time": now});
            if let Some(current) = value.get("value") {
                payload["value"] = current.clone();
            }
            payload.to_string().into_bytes()
        }
        PayloadType::EntireValueId => value.to_string().into_bytes(),
        PayloadType::Raw => match value.get("value") {
            Some(Value::String(text)) => text.clone().into_bytes(),
            Some(current) => current.to_string().into_bytes(),
            None => Vec::new(),
        },
    }
}

/// Sets a value; returns the node and the updated value object to publish.
fn set_value(nodes: &mut [Value], node: u16, key: &str, new: Value) -> Option<(Value, Value)> {
    let node_json = nodes.iter_mut().find(|n| n["id"] == json!(node))?;
    let slot = node_json.get_mut("values")?.get_mut(key)?;
    slot["value"] = new;
    slot["lastUpdate"] = json!(now_ms());
    let value = slot.clone();
    node_json["lastActive"] = json!(now_ms());
    Some((node_json.clone(), value))
}

pub(super) async fn publish(sim: &Sim, topic: String, payload: Vec<u8>, retain: bool) {
    match sim
        .client
        .publish(topic.clone(), QoS::AtLeastOnce, retain, payload)
        .await
    {
        Ok(()) => {
            sim.sent.fetch_add(1, Ordering::SeqCst);
        }
        Err(err) => warn!(%topic, error = %err, "simulated gateway cannot publish"),
    }
}

async fn publish_value(sim: &Sim, node: &Value, value: &Value) {
    let topic = value_topic(&sim.options, node, value);
    publish(sim, topic, value_payload(&sim.options, value), true).await;
}

/// Publishes what Z-Wave JS UI publishes (retained) when it connects.
async fn publish_everything(sim: Arc<Sim>) {
    let options = &sim.options;
    let now = now_ms();
    let gateway = gateway_topic(options);
    publish(
        &sim,
        format!("{gateway}/version"),
        json!({"value": "11.22.2", "time": now})
            .to_string()
            .into_bytes(),
        true,
    )
    .await;
    publish(
        &sim,
        format!("{gateway}/status"),
        json!({"value": true, "time": now}).to_string().into_bytes(),
        true,
    )
    .await;
    let ready = lock(&sim.knobs).driver_ready;
    publish(
        &sim,
        format!("{}/driver/status", options.prefix),
        ready.to_string().into_bytes(),
        true,
    )
    .await;
    let nodes = lock(&sim.nodes).clone();
    for node in nodes.iter().filter(|node| node["virtual"] != json!(true)) {
        let Ok(info) = serde_json::from_value::<NodeInfo>(node.clone()) else {
            continue;
        };
        let path = topics::node_path(&options.prefix, &info, options.style);
        let status =
            json!({"time": now, "value": info.available, "status": info.status, "nodeId": info.id});
        publish(
            &sim,
            format!("{path}/status"),
            status.to_string().into_bytes(),
            true,
        )
        .await;
        if let Some(at) = info.last_active {
            publish(
                &sim,
                format!("{path}/lastActive"),
                json!({"time": now, "value": at}).to_string().into_bytes(),
                true,
            )
            .await;
        }
        for value in node["values"]
            .as_object()
            .into_iter()
            .flat_map(|values| values.values())
        {
            publish_value(&sim, node, value).await;
        }
    }
    sim.published.send_replace(true);
}

async fn handle_request(sim: Arc<Sim>, topic: String, payload: Vec<u8>) {
    let Some(api) = topic
        .strip_prefix(&format!("{}/api/", gateway_topic(&sim.options)))
        .and_then(|rest| rest.strip_suffix("/set"))
        .map(str::to_owned)
    else {
        return;
    };
    let origin: Value = serde_json::from_slice(&payload).unwrap_or_else(|_| json!({}));
    lock(&sim.received).push(ReceivedRequest {
        at: std::time::Instant::now(),
        api: api.clone(),
        payload: origin.clone(),
    });
    let (silent, delay, driver_ready) = {
        let knobs = lock(&sim.knobs);
        (
            knobs.silent,
            knobs.delays.get(&api).copied(),
            knobs.driver_ready,
        )
    };
    if silent {
        debug!(%api, "simulated gateway stays silent");
        return;
    }
    if let Some(delay) = delay {
        tokio::time::sleep(delay).await;
    }
    let args = origin.get("args").cloned().unwrap_or(Value::Null);
    let reply = match &args {
        Value::Array(items) if driver_ready => match answer(&sim, &api, items).await {
            Ok(result) => {
                let mut reply =
                    json!({"success": true, "message": "Success zwave api call", "args": args});
                if !result.is_null() {
                    reply["result"] = result;
                }
                reply
            }
            Err(message) => json!({"success": false, "message": message, "args": args}),
        },
        Value::Array(_) => {
            json!({"success": false, "message": "Z-Wave client not connected", "args": args})
        }
        _ => json!({"success": false, "message": "Args must be an array"}),
    };
    let mut reply = reply;
    reply["origin"] = origin;
    let reply_topic = topic.trim_end_matches("/set").to_owned();
    publish(&sim, reply_topic, reply.to_string().into_bytes(), false).await;
}

/// The result of one API call, or the error message Z-Wave JS UI would give.
async fn answer(sim: &Sim, api: &str, args: &[Value]) -> Result<Value, String> {
    match api {
        "getNodes" => Ok(Value::Array(lock(&sim.nodes).clone())),
        "getInfo" => Ok(json!({
            "homeid": 3_735_928_559_u32, "name": "demo", "controllerId": 1, "status": "scan done",
            "cntStatus": "Scan completed", "inclusionState": 0, "appVersion": "11.22.2",
            "zwaveVersion": "15.29.0", "serverVersion": "3.10.2",
        })),
        "writeValue" => Ok(write_value(sim, args).await),
        "pollValue" => {
            let (node, key) = address(args.first())
                .ok_or("Cannot read properties of undefined (reading 'pollValue')")?;
            let nodes = lock(&sim.nodes);
            let node = find_node(&nodes, node)
                .ok_or("Cannot read properties of undefined (reading 'pollValue')")?;
            if node["status"] == json!("Dead") {
                return Err("Failed to poll value: the node is dead (ZW0204)".into());
            }
            Ok(node["values"]
                .get(&key)
                .and_then(|v| v.get("value"))
                .cloned()
                .unwrap_or(Value::Null))
        }
        "refreshValues" | "refreshCCValues" | "refreshInfo" => Ok(Value::Null),
        "pingNode" => {
            let id = args
                .first()
                .and_then(Value::as_u64)
                .and_then(|id| u16::try_from(id).ok())
                .unwrap_or(0);
            let nodes = lock(&sim.nodes);
            Ok(json!(
                find_node(&nodes, id).is_some_and(|node| node["status"] != json!("Dead"))
            ))
        }
        _ => Err("Unknown API".into()),
    }
}

/// `(nodeId, value key)` of a valueId argument.
fn address(arg: Option<&Value>) -> Option<(u16, String)> {
    let arg = arg?;
    let node = u16::try_from(arg.get("nodeId")?.as_u64()?).ok()?;
    let mut id = arg.clone();
    if id.get("endpoint").is_none() {
        id["endpoint"] = json!(0);
    }
    Some((node, value_key_of(&id)))
}

async fn write_value(sim: &Sim, args: &[Value]) -> Value {
    let fail = json!({"status": 2});
    let Some((node_id, key)) = address(args.first()) else {
        return fail;
    };
    let Some(new) = args.get(1).cloned() else {
        return fail;
    };
    let (forced, confirm) = {
        let knobs = lock(&sim.knobs);
        (knobs.write_status, knobs.confirm_writes)
    };
    if let Some(status) = forced {
        return json!({"status": status});
    }
    let (target, current_key) = {
        let nodes = lock(&sim.nodes);
        let Some(node) = find_node(&nodes, node_id) else {
            return fail;
        };
        if node["status"] == json!("Dead") {
            return fail;
        }
        let Some(target) = node["values"].get(&key).cloned() else {
            return fail;
        };
        (
            target,
            node["values"].as_object().and_then(|values| {
                values
                    .iter()
                    .find(|(_, v)| v["targetValue"] == json!(key))
                    .map(|(k, _)| k.clone())
            }),
        )
    };
    let cc_name = target["commandClassName"]
        .as_str()
        .unwrap_or("Unknown")
        .to_owned();
    if target["writeable"] != json!(true) {
        return json!({"status": 4, "message": format!("The {cc_name} CC does not support setting values")});
    }
    let expected = target["type"].as_str().unwrap_or("any");
    let received = match &new {
        Value::Bool(_) => "boolean",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        _ => "object",
    };
    if (expected == "boolean" || expected == "number") && expected != received {
        let property = target["property"].as_str().unwrap_or("value");
        return json!({
            "status": 5,
            "message": format!("{cc_name}: \"{property}\" must be of type \"{expected}\", received \"{received}\" (ZW0322)"),
        });
    }
    // A multilevel switch stores 0–99; 255 restores the last non-zero level.
    let stored = if target["commandClass"] == json!(38) {
        let level = new.as_f64().unwrap_or(0.0);
        let level = if level >= 255.0 {
            let last = lock(&sim.last_levels).get(&node_id).copied().unwrap_or(99);
            f64::from(last)
        } else {
            level.clamp(0.0, 99.0)
        };
        json!(level.round() as u8)
    } else {
        new
    };
    let mut updates = Vec::new();
    {
        let mut nodes = lock(&sim.nodes);
        updates.extend(set_value(&mut nodes, node_id, &key, stored.clone()));
        if confirm && let Some(current_key) = &current_key {
            updates.extend(set_value(&mut nodes, node_id, current_key, stored.clone()));
        }
        if confirm && target["commandClass"] == json!(37) {
            let watts = if stored == json!(true) {
                json!(42.5)
            } else {
                json!(0)
            };
            updates.extend(set_value(&mut nodes, node_id, "50-0-value-66049", watts));
        }
    }
    if target["commandClass"] == json!(38)
        && let Some(level) = stored
            .as_u64()
            .and_then(|l| u8::try_from(l).ok())
            .filter(|l| *l > 0)
    {
        lock(&sim.last_levels).insert(node_id, level);
    }
    // Optimistic updates are published just before the API reply, as Z-Wave JS UI does.
    for (node, value) in &updates {
        publish_value(sim, node, value).await;
    }
    json!({"status": 254})
}
