//! A simulated Z-Wave JS UI gateway speaking the real MQTT API, for `--demo`, `simulate` and tests.
//!
//! It behaves like the captures: API requests on `.../api/<api>/set`, replies on the topic
//! without `/set` echoing the request as `origin`, `writeValue` statuses (254 on success, 2 for
//! unknown or dead nodes, 4 for read-only values, 5 for wrong types), optimistic value updates
//! published before the reply, retained status topics with a last will, and node names in
//! value topics. Knobs on [`SimGateway`] inject the failures tests need. This file is the
//! handle and its knobs; what the gateway publishes and answers is in `api.rs`.

use std::{
    collections::HashMap,
    sync::{
        Arc, Mutex,
        atomic::{AtomicU64, Ordering},
    },
    time::Duration,
};

use rumqttc::{AsyncClient, Event, LastWill, Packet, QoS};
use serde_json::{Value, json};
use tracing::{debug, info, warn};

use super::{
    api::{
        gateway_topic, handle_request, publish, publish_everything, publish_value, status_topic,
        value_topic,
    },
    change::{find_node, set_value},
    home::demo_home,
    state::{Knobs, ReceivedRequest, Sim, SimOptions, lock},
    topics,
};
use crate::network::{MqttSettings, MqttUrl, NodeId, now_ms};

/// Handle to a running simulated gateway; clones share it.
#[derive(Clone)]
pub struct SimGateway {
    pub(super) sim: Arc<Sim>,
}

impl SimGateway {
    /// Connects to the broker at `url` as `ZWAVE_GATEWAY-<name>` and serves the demo home.
    /// Returns at once; the connection is retried in the background.
    pub fn start(url: &MqttUrl, options: SimOptions) -> Self {
        Self::start_with(
            &MqttSettings::new(url.clone()),
            options,
            demo_home(now_ms()),
        )
    }

    /// Like [`SimGateway::start`], with the broker's credentials and TLS settings and a home
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
            knobs: Mutex::new(Knobs::default()),
            last_levels: Mutex::new(HashMap::new()),
            latest_write: Mutex::new(HashMap::new()),
            truth: Mutex::new(HashMap::new()),
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

    /// Makes `node` acknowledge Sets and ignore them (`stuck`), or work again.
    pub fn set_stuck(&self, node: impl Into<NodeId>, stuck: bool) {
        let node = node.into();
        lock(&self.sim.knobs).set_stuck(node, stuck);
    }

    /// Makes the lock `node` jam at every lock or unlock (it reports "Lock jammed" and its old
    /// mode), or work again.
    pub fn set_jammed(&self, node: impl Into<NodeId>, jammed: bool) {
        let node = node.into();
        lock(&self.sim.knobs).set_jammed(node, jammed);
    }

    /// Gives `node` Supervision (a Set is answered 255 once done, with no report after it),
    /// or takes it away.
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

    /// Answers every request of `api` with `success: false` and `message` (`None`: answers
    /// them again).
    pub fn set_refusal(&self, api: &str, message: Option<&str>) {
        let mut knobs = lock(&self.sim.knobs);
        match message {
            Some(message) => knobs.refusals.insert(api.to_owned(), message.to_owned()),
            None => knobs.refusals.remove(api),
        };
    }

    /// Answers every request of `api` with `success: true` and `result` (`None`: answers
    /// them as the gateway does again): a gateway answering absurdly.
    pub fn set_answer(&self, api: &str, result: Option<serde_json::Value>) {
        let mut knobs = lock(&self.sim.knobs);
        match result {
            Some(result) => knobs.forced.insert(api.to_owned(), result),
            None => knobs.forced.remove(api),
        };
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
    /// Until [`SimGateway::driver_up_with_unready_nodes`], every API call is answered "Z-Wave
    /// client not connected" (restart captures: about 8 s of that after the gateway is back).
    pub async fn stop_zwave_js_ui(&self) {
        lock(&self.sim.knobs).driver_ready = false;
        publish(&self.sim, self.driver_topic(), b"false".to_vec(), true).await;
        self.announce_offline().await;
    }

    /// The driver comes up as after a restart: every node is known but not interviewed yet
    /// (`ready: false`, status `Unknown`, no values) and its status topic says so. Each node's
    /// interview then completes with [`SimGateway::finish_interview`].
    pub async fn driver_up_with_unready_nodes(&self) {
        let unready: Vec<NodeId> = {
            let mut nodes = lock(&self.sim.nodes);
            let mut interviewing = lock(&self.sim.interviewing);
            nodes
                .iter_mut()
                .filter(|node| {
                    node["isControllerNode"] != json!(true) && node["virtual"] != json!(true)
                })
                .filter_map(|node| {
                    let id = NodeId(u16::try_from(node["id"].as_u64()?).ok()?);
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
    pub async fn finish_interview(&self, node: impl Into<NodeId>) {
        let node = node.into();
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
    pub async fn rename_node(&self, node: impl Into<NodeId>, name: &str, loc: &str) {
        let node = node.into();
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
    pub fn forget_node(&self, node: impl Into<NodeId>) {
        let node = node.into();
        lock(&self.sim.nodes).retain(|n| n["id"] != json!(node));
    }

    fn driver_topic(&self) -> String {
        format!("{}/driver/status", self.sim.options.prefix)
    }

    async fn publish_node_status(&self, node: NodeId, available: bool, status: &str) {
        let topic = {
            let nodes = lock(&self.sim.nodes);
            let Some(found) = find_node(&nodes, node) else {
                return;
            };
            let options = &self.sim.options;
            format!(
                "{}/status",
                topics::node_topic(&options.prefix, options.topics, found)
            )
        };
        let payload =
            json!({"time": now_ms(), "value": available, "status": status, "nodeId": node});
        publish(&self.sim, topic, payload.to_string().into_bytes(), true).await;
    }

    /// Publishes a node's status as Z-Wave JS UI does when a node dies or comes back
    /// (`{"value":<available>,"status":"Dead"|"Alive",...}`), and serves it from then on.
    pub async fn set_node_status(&self, node: impl Into<NodeId>, status: &str) {
        let node = node.into();
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
    pub async fn press(&self, node: impl Into<NodeId>, key: &str, value: Value) {
        let node = node.into();
        super::state::lock(&self.sim.truth).remove(&(node, key.to_owned()));
        let changed = {
            let mut nodes = lock(&self.sim.nodes);
            set_value(&mut nodes, node, key, value)
        };
        if let Some(change) = changed {
            publish_value(&self.sim, &change.node, &change.value).await;
        }
    }

    /// Every API request received so far, in order.
    pub fn received(&self) -> Vec<ReceivedRequest> {
        lock(&self.sim.received).clone()
    }

    /// The current value `key` of `node` in the simulated home.
    pub fn value(&self, node: impl Into<NodeId>, key: &str) -> Option<Value> {
        let node = node.into();
        let nodes = lock(&self.sim.nodes);
        find_node(&nodes, node)?
            .get("values")?
            .get(key)?
            .get("value")
            .cloned()
    }

    /// The topic the simulator publishes value `key` of `node` on.
    pub fn value_topic(&self, node: impl Into<NodeId>, key: &str) -> Option<String> {
        let node = node.into();
        let nodes = lock(&self.sim.nodes);
        let node_json = find_node(&nodes, node)?;
        let value = node_json.get("values")?.get(key)?;
        Some(value_topic(&self.sim.options, node_json, value))
    }
}
