//! The Z-Wave JS UI client: API calls over MQTT, the live value cache and connection state.
//!
//! [`Gateway`] is a cheap `Clone` handle. One task owns the rumqttc event loop: it reconnects
//! with backoff, resubscribes and refreshes the node list after every (re)connection, routes
//! API replies to their waiting requests and keeps the cache current from value topics.
//! `getNodes` is the source of truth for nodes, values and which topic carries which value.

mod api;
mod error;
pub mod nodes;
pub mod topics;

use std::{
    collections::BTreeMap,
    sync::{Arc, RwLock, Weak},
    time::{Duration, SystemTime, UNIX_EPOCH},
};

use rumqttc::{AsyncClient, Event, EventLoop, MqttOptions, Packet, QoS, Transport};
use serde_json::Value;
use tokio::sync::watch;
use tracing::{Instrument, debug, info, info_span, warn};

pub use api::{ApiReply, PendingRequests, RequestId, write_status_name};
pub use error::GatewayError;
pub use nodes::{NodeId, NodeInfo, Property, ValueId, ValueInfo};
use topics::{Route, TopicIndex};

use crate::config::{MqttUrl, Secret};

/// How to reach the broker and the gateway.
#[derive(Debug, Clone)]
pub struct MqttSettings {
    /// Broker address.
    pub url: MqttUrl,
    /// User name, when the broker needs one.
    pub username: Option<String>,
    /// Password, when the broker needs one.
    pub password: Option<Secret>,
    /// Our client id (must not be `ZWAVE_GATEWAY-<name>`).
    pub client_id: String,
    /// Z-Wave JS UI's topic prefix.
    pub topic_prefix: String,
    /// Z-Wave JS UI's gateway name.
    pub gateway_name: String,
    /// How long one API request may take.
    pub api_timeout: Duration,
    /// CA certificates (PEM) trusted for `mqtts://`; `None` trusts the system's roots.
    pub ca_pem: Option<Vec<u8>>,
}

impl MqttSettings {
    /// Settings for a broker at `url` with Z-Wave JS UI's defaults (prefix `zwave`, gateway
    /// `zwave-js-ui`, 5 s API timeout).
    pub fn new(url: MqttUrl) -> Self {
        Self {
            url,
            username: None,
            password: None,
            client_id: format!("zwave-mcp-server-{}", std::process::id()),
            topic_prefix: "zwave".into(),
            gateway_name: "zwave-js-ui".into(),
            api_timeout: Duration::from_secs(5),
            ca_pem: None,
        }
    }

    /// rumqttc options for a client `client_id` of this broker: address, credentials, TLS.
    pub fn mqtt_options(&self, client_id: &str) -> MqttOptions {
        let mut options = MqttOptions::new(client_id, self.url.host.clone(), self.url.port);
        options.set_keep_alive(Duration::from_secs(30));
        options.set_max_packet_size(16 * 1024 * 1024, 1024 * 1024);
        if let Some(username) = &self.username {
            let password = self
                .password
                .as_ref()
                .map(|s| s.0.clone())
                .unwrap_or_default();
            options.set_credentials(username.clone(), password);
        }
        if self.url.tls {
            // One rustls provider for the process (ring: a small build, no cmake).
            let _ = rustls::crypto::ring::default_provider().install_default();
            options.set_transport(match &self.ca_pem {
                Some(ca) => Transport::tls(ca.clone(), None, None),
                None => Transport::tls_with_default_config(),
            });
        }
        options
    }

    /// `<prefix>/_CLIENTS/ZWAVE_GATEWAY-<name>`: where the gateway's own topics live.
    pub fn gateway_topic(&self) -> String {
        format!(
            "{}/_CLIENTS/ZWAVE_GATEWAY-{}",
            self.topic_prefix, self.gateway_name
        )
    }
}

/// Reconnection backoff: starts at `min`, doubles after every failure, never exceeds `max`.
#[derive(Debug, Clone, Copy)]
pub struct Backoff {
    /// First delay after a failure.
    pub min: Duration,
    /// Longest delay.
    pub max: Duration,
}

impl Default for Backoff {
    fn default() -> Self {
        Self {
            min: Duration::from_millis(250),
            max: Duration::from_secs(10),
        }
    }
}

/// The broker connection as last seen by the event loop.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BrokerState {
    /// Connecting for the first time.
    Connecting,
    /// Connected and subscribed.
    Connected,
    /// The last attempt failed; retrying with backoff.
    Down {
        /// Why the last attempt failed.
        reason: String,
    },
}

/// What the server knows about the home and the path to it.
#[derive(Debug, Clone)]
pub struct HomeState {
    /// Broker connection.
    pub broker: BrokerState,
    /// Gateway status topic (`None` until seen).
    pub gateway_online: Option<bool>,
    /// `driver/status` topic (`None` until seen).
    pub driver_ready: Option<bool>,
    /// Nodes by id from the last `getNodes`, kept current from value topics.
    pub nodes: BTreeMap<NodeId, NodeInfo>,
    /// Whether `getNodes` has succeeded at least once since the last connection.
    pub nodes_loaded: bool,
    /// Why the last node refresh failed, if it did.
    pub refresh_error: Option<String>,
}

struct Shared {
    client: AsyncClient,
    settings: MqttSettings,
    /// `settings.gateway_topic()`, computed once: it is compared with every message.
    gateway_topic: String,
    pending: PendingRequests,
    state: RwLock<HomeState>,
    topics: RwLock<TopicIndex>,
    /// Bumped after every value change, so waiters can re-check the cache.
    changes: watch::Sender<u64>,
    /// Serializes node refreshes so reconnect storms do not stack `getNodes` calls.
    refresh_lock: tokio::sync::Mutex<()>,
}

/// Handle to the Z-Wave JS UI gateway. Cloning is cheap; all clones share one connection.
#[derive(Clone)]
pub struct Gateway {
    shared: Arc<Shared>,
}

impl Gateway {
    /// Starts connecting to the broker in the background and returns at once.
    ///
    /// The connection is retried forever with `backoff`; after every connection the client
    /// subscribes to `<prefix>/#` and refreshes the node list.
    pub fn connect(settings: MqttSettings, backoff: Backoff) -> Self {
        let mut options = settings.mqtt_options(&settings.client_id);
        options.set_clean_session(true);
        let (client, mut event_loop) = AsyncClient::new(options, 64);
        let mut network = event_loop.network_options();
        // ~40 ms of every round trip is a delayed-ACK floor without it (API.md).
        network.set_tcp_nodelay(true);
        network.set_connection_timeout(5);
        event_loop.set_network_options(network);

        let shared = Arc::new(Shared {
            client,
            gateway_topic: settings.gateway_topic(),
            settings,
            pending: PendingRequests::default(),
            state: RwLock::new(HomeState {
                broker: BrokerState::Connecting,
                gateway_online: None,
                driver_ready: None,
                nodes: BTreeMap::new(),
                nodes_loaded: false,
                refresh_error: None,
            }),
            topics: RwLock::new(TopicIndex::default()),
            changes: watch::Sender::new(0),
            refresh_lock: tokio::sync::Mutex::new(()),
        });
        let span = info_span!("mqtt", url = %shared.settings.url);
        tokio::spawn(run_event_loop(Arc::downgrade(&shared), event_loop, backoff).instrument(span));
        Self { shared }
    }

    /// The settings this gateway was started with.
    pub fn settings(&self) -> &MqttSettings {
        &self.shared.settings
    }

    /// A copy of the current state (nodes and connection). Copies every node: tool calls use
    /// [`Gateway::with_nodes`] or [`Gateway::node`] instead.
    pub fn state(&self) -> HomeState {
        read(&self.shared.state).clone()
    }

    /// Runs `f` on the current nodes under the read lock (keep it short: no awaits inside).
    pub fn with_nodes<R>(&self, f: impl FnOnce(&BTreeMap<NodeId, NodeInfo>) -> R) -> R {
        f(&read(&self.shared.state).nodes)
    }

    /// A copy of one node.
    pub fn node(&self, id: NodeId) -> Option<NodeInfo> {
        read(&self.shared.state).nodes.get(&id).cloned()
    }

    /// Makes sure the node list has been loaded since the last connection, loading it now if not.
    /// While the first connection attempt is under way, waits for it (at most the API timeout).
    ///
    /// # Errors
    /// The error of the `getNodes` call, or why the broker or gateway cannot be reached.
    pub async fn ensure_nodes(&self) -> Result<(), GatewayError> {
        // The common case, without touching the refresh lock.
        if read(&self.shared.state).nodes_loaded {
            return Ok(());
        }
        refresh_nodes(&self.shared, true).await
    }

    /// Reloads the node list with `getNodes` and rebuilds the topic index.
    ///
    /// # Errors
    /// The error of the `getNodes` call.
    pub async fn refresh_nodes(&self) -> Result<(), GatewayError> {
        refresh_nodes(&self.shared, false).await
    }

    /// Calls a Z-Wave JS UI API and returns its `result` (`Null` when it has none).
    ///
    /// # Errors
    /// Fails fast when the broker is down or the gateway is known to be offline; otherwise
    /// the gateway's refusal, or a timeout after the configured API timeout.
    pub async fn call(&self, api: &'static str, args: Vec<Value>) -> Result<Value, GatewayError> {
        call(&self.shared, api, args).await
    }

    /// Writes a value with `writeValue` and checks `result.status` (254/255 mean success).
    ///
    /// # Errors
    /// [`GatewayError::WriteFailed`] with the status named when the device did not take it.
    pub async fn write_value(&self, value_id: &ValueId, value: Value) -> Result<i64, GatewayError> {
        let id = serde_json::to_value(value_id).map_err(|err| GatewayError::BadReply {
            api: "writeValue",
            reason: err.to_string(),
        })?;
        let result = self.call("writeValue", vec![id, value.clone()]).await?;
        // writeValue answers success:true even when the write failed: the truth is the status.
        let status = result
            .get("status")
            .and_then(Value::as_i64)
            .ok_or_else(|| GatewayError::BadReply {
                api: "writeValue",
                reason: format!("no result.status in {result}"),
            })?;
        if status == 254 || status == 255 {
            Ok(status)
        } else {
            Err(GatewayError::WriteFailed {
                value: value.to_string(),
                value_id: value_id.to_string(),
                status,
                status_name: write_status_name(status),
                detail: result
                    .get("message")
                    .and_then(Value::as_str)
                    .map(str::to_owned),
            })
        }
    }

    /// Asks the device for a value now (`pollValue`) and stores the answer in the cache.
    ///
    /// # Errors
    /// As [`Gateway::call`].
    pub async fn poll_value(&self, value_id: &ValueId) -> Result<Option<Value>, GatewayError> {
        let id = serde_json::to_value(value_id).map_err(|err| GatewayError::BadReply {
            api: "pollValue",
            reason: err.to_string(),
        })?;
        let result = self.call("pollValue", vec![id]).await?;
        let value = (!result.is_null()).then_some(result);
        if let Some(value) = &value {
            store_value(
                &self.shared,
                value_id.node_id,
                &value_id.key(),
                value.clone(),
            );
        }
        Ok(value)
    }

    /// The cached value `key` of `node`, if known.
    pub fn value(&self, node: NodeId, key: &str) -> Option<Value> {
        read(&self.shared.state)
            .nodes
            .get(&node)
            .and_then(|n| n.values.get(key))
            .and_then(|v| v.value.clone())
    }

    /// Waits until the device reports a value `key` of `node` that satisfies `accept`, in a
    /// report received after `since` (a write's send time), at most `timeout`. A cached value
    /// from before `since` never counts, even when it already equals the target: it proves
    /// nothing about the write. Returns the accepted value, or `None` when the time ran out.
    pub async fn wait_for_report(
        &self,
        node: NodeId,
        key: &str,
        since: std::time::Instant,
        timeout: Duration,
        accept: impl Fn(&Value) -> bool,
    ) -> Option<Value> {
        let mut changes = self.shared.changes.subscribe();
        let deadline = tokio::time::Instant::now() + timeout;
        loop {
            let reported = read(&self.shared.state)
                .nodes
                .get(&node)
                .and_then(|n| n.values.get(key))
                .filter(|v| v.seen_at.is_some_and(|at| at > since))
                .and_then(|v| v.value.clone());
            if let Some(value) = reported.filter(|value| accept(value)) {
                return Some(value);
            }
            match tokio::time::timeout_at(deadline, changes.changed()).await {
                Ok(Ok(())) => {}
                Ok(Err(_)) | Err(_) => return None,
            }
        }
    }
}

fn read<T>(lock: &RwLock<T>) -> std::sync::RwLockReadGuard<'_, T> {
    // Writers only assign whole fields, so a poisoned lock holds consistent data.
    lock.read()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

fn write<T>(lock: &RwLock<T>) -> std::sync::RwLockWriteGuard<'_, T> {
    lock.write()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Wall-clock time in epoch milliseconds, the unit Z-Wave JS UI uses.
pub fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
        .unwrap_or_default()
}

async fn call(shared: &Shared, api: &'static str, args: Vec<Value>) -> Result<Value, GatewayError> {
    let settings = &shared.settings;
    wait_while_connecting(shared).await;
    {
        let state = read(&shared.state);
        match &state.broker {
            BrokerState::Connected => {}
            BrokerState::Connecting => {
                return Err(GatewayError::BrokerUnreachable {
                    url: settings.url.to_string(),
                    reason: "not connected yet".into(),
                });
            }
            BrokerState::Down { reason } => {
                return Err(GatewayError::BrokerUnreachable {
                    url: settings.url.to_string(),
                    reason: reason.clone(),
                });
            }
        }
        if state.gateway_online == Some(false) {
            return Err(GatewayError::GatewayOffline {
                gateway: settings.gateway_name.clone(),
            });
        }
    }
    let (request_id, reply) = shared.pending.register(api);
    let topic = format!("{}/api/{api}/set", shared.gateway_topic);
    let payload = serde_json::to_vec(&api::ApiRequest {
        request_id: request_id.clone(),
        args,
    })
    .map_err(|err| GatewayError::BadReply {
        api,
        reason: err.to_string(),
    })?;
    debug!(api, %request_id, "api request");
    if let Err(err) = shared
        .client
        .publish(topic, QoS::AtLeastOnce, false, payload)
        .await
    {
        shared.pending.forget(&request_id);
        return Err(GatewayError::BrokerUnreachable {
            url: settings.url.to_string(),
            reason: err.to_string(),
        });
    }
    let reply = match tokio::time::timeout(settings.api_timeout, reply).await {
        Ok(Ok(reply)) => reply,
        Ok(Err(_)) => return Err(GatewayError::ConnectionLost { api }),
        Err(_) => {
            shared.pending.forget(&request_id);
            return Err(GatewayError::Timeout {
                api,
                gateway: settings.gateway_name.clone(),
                prefix: settings.topic_prefix.clone(),
                timeout: settings.api_timeout,
            });
        }
    };
    if reply.success {
        Ok(reply.result.unwrap_or(Value::Null))
    } else if reply.message == "Z-Wave client not connected" {
        write(&shared.state).driver_ready = Some(false);
        Err(GatewayError::DriverDown { api })
    } else {
        Err(GatewayError::Rejected {
            api,
            message: reply.message,
        })
    }
}

/// While the first connection attempt is under way, waits for its outcome (at most the API
/// timeout), so a call made right after start-up is not refused needlessly.
async fn wait_while_connecting(shared: &Shared) {
    let mut changes = shared.changes.subscribe();
    let deadline = tokio::time::Instant::now() + shared.settings.api_timeout;
    while read(&shared.state).broker == BrokerState::Connecting {
        if tokio::time::timeout_at(deadline, changes.changed())
            .await
            .is_err()
        {
            return;
        }
    }
}

/// Loads the node list; with `only_if_missing`, a list loaded meanwhile by another caller
/// (the refresh after a reconnection) is enough.
async fn refresh_nodes(shared: &Shared, only_if_missing: bool) -> Result<(), GatewayError> {
    let _one_at_a_time = shared.refresh_lock.lock().await;
    if only_if_missing && read(&shared.state).nodes_loaded {
        return Ok(());
    }
    let sent = std::time::Instant::now();
    let result = call(shared, "getNodes", Vec::new())
        .await
        .and_then(|result| {
            parse_nodes(result).map_err(|reason| GatewayError::BadReply {
                api: "getNodes",
                reason,
            })
        });
    match result {
        Ok(mut nodes) => {
            let index = TopicIndex::build(&shared.settings.topic_prefix, nodes.values());
            info!(
                nodes = nodes.len(),
                topics = index.len(),
                "node list loaded"
            );
            report_collisions(&index);
            *write(&shared.topics) = index;
            let mut state = write(&shared.state);
            keep_newer_values(&mut nodes, &state.nodes, sent);
            state.nodes = nodes;
            state.nodes_loaded = true;
            state.refresh_error = None;
            drop(state);
            shared.changes.send_modify(|version| *version += 1);
            Ok(())
        }
        Err(err) => {
            warn!(error = %err, "loading the node list failed");
            write(&shared.state).refresh_error = Some(err.to_string());
            Err(err)
        }
    }
}

/// Says once per node list which nodes share topics: their reports on those topics are
/// ignored, so their state is only as fresh as the last `getNodes` or `pollValue`.
fn report_collisions(index: &TopicIndex) {
    let ambiguous = index.ambiguous();
    let Some((example, _)) = ambiguous.iter().next() else {
        return;
    };
    let nodes: std::collections::BTreeSet<NodeId> = ambiguous.values().flatten().copied().collect();
    let nodes: Vec<String> = nodes.iter().map(ToString::to_string).collect();
    warn!(
        topics = ambiguous.len(),
        nodes = %nodes.join(", "),
        example = %example,
        "nodes share MQTT topics, so updates on those topics are ignored: give each node a \
         distinct name and location, or in Z-Wave JS UI's gateway settings include the location \
         in topics or use numeric node ids instead of names"
    );
}

/// A value that arrived on its topic after `getNodes` was sent is newer than the snapshot in
/// the reply (the reply can be overtaken by the value updates of a concurrent write).
fn keep_newer_values(
    fresh: &mut BTreeMap<NodeId, NodeInfo>,
    cached: &BTreeMap<NodeId, NodeInfo>,
    sent: std::time::Instant,
) {
    for (id, node) in fresh.iter_mut() {
        let Some(old) = cached.get(id) else { continue };
        for (key, value) in node.values.iter_mut() {
            if let Some(live) = old.values.get(key)
                && live.seen_at.is_some_and(|at| at > sent)
            {
                value.value = live.value.clone();
                value.last_update = live.last_update;
                value.seen_at = live.seen_at;
            }
        }
    }
}

/// Parses a `getNodes` result node by node, so one odd node does not hide the others.
pub fn parse_nodes(result: Value) -> Result<BTreeMap<NodeId, NodeInfo>, String> {
    let Value::Array(items) = result else {
        return Err(format!(
            "expected an array of nodes, got {}",
            kind_of(&result)
        ));
    };
    let mut nodes = BTreeMap::new();
    for item in items {
        let id = item.get("id").cloned();
        match serde_json::from_value::<NodeInfo>(item) {
            Ok(node) => {
                nodes.insert(node.id, node);
            }
            Err(err) => warn!(node = ?id, error = %err, "skipping a node that does not parse"),
        }
    }
    Ok(nodes)
}

fn kind_of(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

fn store_value(shared: &Shared, node: NodeId, key: &str, value: Value) -> bool {
    let mut state = write(&shared.state);
    let Some(slot) = state
        .nodes
        .get_mut(&node)
        .and_then(|n| n.values.get_mut(key))
    else {
        return false;
    };
    slot.value = Some(value);
    slot.last_update = Some(now_ms());
    slot.seen_at = Some(std::time::Instant::now());
    drop(state);
    shared.changes.send_modify(|version| *version += 1);
    true
}

/// Owns the rumqttc event loop until every [`Gateway`] handle is gone.
async fn run_event_loop(shared: Weak<Shared>, mut event_loop: EventLoop, backoff: Backoff) {
    let mut delay = backoff.min;
    loop {
        let event = event_loop.poll().await;
        let Some(shared) = shared.upgrade() else {
            return;
        };
        match event {
            Ok(Event::Incoming(Packet::ConnAck(_))) => {
                delay = backoff.min;
                on_connected(&shared);
            }
            Ok(Event::Incoming(Packet::Publish(publish))) => {
                on_publish(&shared, &publish.topic, &publish.payload);
            }
            Ok(_) => {}
            Err(err) => {
                let reason = err.to_string();
                let was_connected = {
                    let mut state = write(&shared.state);
                    let was = state.broker == BrokerState::Connected;
                    state.broker = BrokerState::Down {
                        reason: reason.clone(),
                    };
                    state.nodes_loaded = false;
                    was
                };
                shared.pending.fail_all();
                shared.changes.send_modify(|version| *version += 1);
                if was_connected {
                    warn!(error = %reason, "lost the mqtt connection; reconnecting");
                } else {
                    warn!(error = %reason, retry_in = ?delay, "cannot connect to the mqtt broker");
                }
                drop(shared);
                tokio::time::sleep(delay).await;
                delay = (delay * 2).min(backoff.max);
            }
        }
    }
}

fn on_connected(shared: &Arc<Shared>) {
    let filter = format!("{}/#", shared.settings.topic_prefix);
    // try_subscribe: this task is the one that drains the request channel, so it must not
    // wait for room in it.
    if let Err(err) = shared
        .client
        .try_subscribe(filter.clone(), QoS::AtLeastOnce)
    {
        warn!(error = %err, %filter, "subscribing failed");
    }
    write(&shared.state).broker = BrokerState::Connected;
    shared.changes.send_modify(|version| *version += 1);
    info!(%filter, "connected to the mqtt broker");
    spawn_refresh(shared, true);
}

/// Reloads the node list in the background. A retryable failure (the gateway not answering
/// yet, its driver still starting) is retried after 1 s, 2 s, 4 s … up to 30 s for as long as
/// the broker connection lasts; errors are logged and kept in the state for tool calls.
fn spawn_refresh(shared: &Arc<Shared>, only_if_missing: bool) {
    let weak = Arc::downgrade(shared);
    tokio::spawn(async move {
        let mut delay = Duration::from_secs(1);
        loop {
            let Some(shared) = weak.upgrade() else { return };
            match refresh_nodes(&shared, only_if_missing).await {
                Err(err)
                    if err.is_retryable()
                        && read(&shared.state).broker == BrokerState::Connected => {}
                _ => return,
            }
            drop(shared);
            tokio::time::sleep(delay).await;
            delay = (delay * 2).min(Duration::from_secs(30));
        }
    });
}

fn on_publish(shared: &Arc<Shared>, topic: &str, payload: &[u8]) {
    let settings = &shared.settings;
    let Some(rest) = topic
        .strip_prefix(settings.topic_prefix.as_str())
        .and_then(|r| r.strip_prefix('/'))
    else {
        return;
    };
    if rest.ends_with("/set") {
        return;
    }
    if rest == "driver/status" {
        let ready = topics::decode_flag(payload);
        let was = std::mem::replace(&mut write(&shared.state).driver_ready, ready);
        info!(ready = ?ready, "z-wave driver status");
        // The driver came back (controller reconnected, Z-Wave JS UI restarted): nodes may
        // have changed while it was down.
        if ready == Some(true) && was == Some(false) {
            spawn_refresh(shared, false);
        }
        return;
    }
    if let Some(gateway_rest) = topic.strip_prefix(shared.gateway_topic.as_str()) {
        if gateway_rest == "/status" {
            let online = topics::decode_flag(payload);
            let was = std::mem::replace(&mut write(&shared.state).gateway_online, online);
            info!(online = ?online, gateway = %settings.gateway_name, "gateway status");
            // Back after a crash: nodes may have changed. First seen: load them if missing.
            if online == Some(true) && was != Some(true) {
                spawn_refresh(shared, was != Some(false));
            }
        } else if let Some(api) = gateway_rest.strip_prefix("/api/") {
            match serde_json::from_slice::<ApiReply>(payload) {
                Ok(reply) => {
                    if !shared.pending.complete(api, reply) {
                        debug!(
                            topic,
                            "api reply for nobody waiting (another client, or timed out)"
                        );
                    }
                }
                Err(err) => warn!(topic, error = %err, "api reply does not parse"),
            }
        }
        return;
    }
    let route = read(&shared.topics).route(topic).cloned();
    match route {
        Some(Route::Value(target)) => {
            let value = topics::decode_value(payload);
            let mut state = write(&shared.state);
            if let Some(slot) = state
                .nodes
                .get_mut(&target.node)
                .and_then(|n| n.values.get_mut(&target.key))
            {
                slot.value = value;
                slot.last_update = Some(now_ms());
                slot.seen_at = Some(std::time::Instant::now());
                drop(state);
                shared.changes.send_modify(|version| *version += 1);
            }
        }
        Some(Route::NodeStatus(node)) => {
            if let Some((available, status)) = topics::decode_node_status(payload) {
                let mut state = write(&shared.state);
                if let Some(info) = state.nodes.get_mut(&node) {
                    info.available = available;
                    if status.is_some() {
                        info.status = status;
                    }
                }
            }
        }
        Some(Route::NodeLastActive(node)) => {
            if let Some(ms) = topics::decode_epoch_ms(payload)
                && let Some(info) = write(&shared.state).nodes.get_mut(&node)
            {
                info.last_active = Some(ms);
            }
        }
        None => {}
    }
}
