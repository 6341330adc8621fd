//! [`Network`], the handle the tools hold, over either backend: starting the connection,
//! reading the cache, writing and polling values, and waiting for a device's report.

use std::{
    sync::{Arc, RwLock},
    time::Duration,
};

use rumqttc::AsyncClient;
use serde_json::Value;
use tokio_util::sync::CancellationToken;
use tracing::{Instrument, info_span};

use super::{
    Backend, Backoff, HomeState, LinkState, MqttSettings, NetworkError, NodeId, NodeInfo, Nodes,
    PendingRequests, Stale, ValueId,
    core::{Core, InFlightWrite, MISS_RELOAD_FLOOR, lock, read, write},
    mqtt::{
        call, event_loop, reload,
        shared::{CLIENT_QUEUE, ReloadRequests, Shared},
        topics::TopicIndex,
    },
    write_status_name,
};
use crate::network::zwave_js_server::{
    self, Target, ZwaveJsServerClient, ZwaveJsServerError, protocol,
};

/// Handle to the home, through either backend. Cloning is cheap; all clones share one
/// connection and one cache. The tools never ask which backend runs.
#[derive(Clone)]
pub struct Network {
    pub(in crate::network) core: Arc<Core>,
    pub(in crate::network) connection: Connection,
}

/// The backend that feeds the core and carries the calls.
#[derive(Clone)]
pub(in crate::network) enum Connection {
    /// Z-Wave JS UI's MQTT gateway.
    Mqtt(Arc<Shared>),
    /// zwave-js-server, with the time a command may take.
    ZwaveJsServer(ZwaveJsServerClient, Duration),
}

impl Network {
    /// Starts connecting to the broker in the background and returns at once.
    ///
    /// The connection is retried forever with `backoff`; after every connection the client
    /// subscribes to `<prefix>/#` and reloads the node list.
    pub fn connect(settings: MqttSettings, backoff: Backoff) -> Self {
        Self::connect_after(settings, backoff, std::future::ready(()))
    }

    /// [`Network::connect`], with the first connection attempt made once `ready` completes
    /// (the demo's simulated gateway has published its home). Until then the network is
    /// connecting: calls wait for it as they wait for a first connection.
    pub fn connect_after(
        settings: MqttSettings,
        backoff: Backoff,
        ready: impl Future<Output = ()> + Send + 'static,
    ) -> Self {
        let mut options = settings.mqtt_options(&settings.client_id);
        options.set_clean_session(true);
        let (client, mut event_loop) = AsyncClient::new(options, CLIENT_QUEUE);
        let mut network = event_loop.network_options();
        // ~40 ms of every round trip is a delayed-ACK floor without it (API.md).
        network.set_tcp_nodelay(true);
        network.set_connection_timeout(5);
        event_loop.set_network_options(network);

        let core = Arc::new(Core::new(Backend::Mqtt));
        let shared = Arc::new(Shared {
            core: Arc::clone(&core),
            client,
            gateway_topic: settings.gateway_topic(),
            events_topic: settings.events_topic(),
            settings,
            pending: PendingRequests::default(),
            topics: RwLock::new(TopicIndex::default()),
            reload_lock: tokio::sync::Mutex::new(()),
            send_gate: std::sync::Mutex::new(()),
            reloads: ReloadRequests::default(),
            status_seen: std::sync::Mutex::default(),
        });
        let span = info_span!("mqtt", url = %shared.settings.url);
        let shared_weak = Arc::downgrade(&shared);
        tokio::spawn(
            async move {
                ready.await;
                event_loop::run_event_loop(shared_weak, event_loop, backoff).await;
            }
            .instrument(span),
        );
        Self {
            core,
            connection: Connection::Mqtt(shared),
        }
    }

    /// Starts connecting to zwave-js-server at `target` in the background and returns at
    /// once. The connection is retried forever with `backoff`; every command waits at most
    /// `timeout` for its result.
    pub fn connect_zwave_js_server(target: Target, backoff: Backoff, timeout: Duration) -> Self {
        let core = Arc::new(Core::new(Backend::ZwaveJsServer));
        let client = ZwaveJsServerClient::feeding(Arc::clone(&core), target, backoff);
        Self {
            core,
            connection: Connection::ZwaveJsServer(client, timeout),
        }
    }

    /// The settings this network was started with, when it runs over MQTT.
    pub fn settings(&self) -> Option<&MqttSettings> {
        match &self.connection {
            Connection::Mqtt(shared) => Some(&shared.settings),
            Connection::ZwaveJsServer(..) => None,
        }
    }

    /// A copy of the current state (nodes and connection). Copies every node: tool calls use
    /// [`Network::with_nodes`] or [`Network::node`] instead.
    pub fn state(&self) -> HomeState {
        read(&self.core.state).clone()
    }

    /// Runs `f` on the current nodes under the read lock (keep it short: no awaits inside).
    pub fn with_nodes<R>(&self, f: impl FnOnce(&Nodes) -> R) -> R {
        f(&read(&self.core.state).nodes)
    }

    /// Whether cached states may be out of date (a link to the devices is down), since when.
    pub fn staleness(&self) -> Option<Stale> {
        read(&self.core.state).stale()
    }

    /// Calls `hook` with every node list loaded from the backend, from then on (one hook: a
    /// second call replaces the first). It runs on the loading task: keep it short.
    pub fn on_nodes_loaded(&self, hook: impl Fn(&Nodes) + Send + Sync + 'static) {
        *write(&self.core.on_load) = Some(Box::new(hook));
    }

    /// A receiver that wakes after every change of the state (a report stored, a node added
    /// or removed, the link up or down): what watches the home waits on it rather than polling.
    /// Sending never waits for a receiver, so no watcher can hold up the backend.
    pub fn changes(&self) -> tokio::sync::watch::Receiver<u64> {
        self.core.changes.subscribe()
    }

    /// The values of `node` whose last write zwave-js echoed at once (its own cache, updated
    /// when the Set was acknowledged) and which the device has not reported since: by key,
    /// the value zwave-js shows there. The cache itself keeps the device's last report.
    pub fn optimistic(&self, node: NodeId) -> Vec<(String, Value)> {
        let mut echoed: Vec<(String, Value)> = lock(&self.core.awaiting_reports)
            .iter()
            .filter(|((id, _), _)| *id == node)
            .map(|((_, key), (_, value))| (key.clone(), value.clone()))
            .collect();
        echoed.sort_by(|a, b| a.0.cmp(&b.0));
        echoed
    }

    /// Whether any node is known (from a `getNodes` now or before a disconnection).
    pub fn has_nodes(&self) -> bool {
        !read(&self.core.state).nodes.is_empty()
    }

    /// A copy of one node.
    pub fn node(&self, id: NodeId) -> Option<NodeInfo> {
        read(&self.core.state).nodes.get(&id).cloned()
    }

    /// Makes sure the node list has been loaded since the last connection, loading it now if not.
    /// While the first connection attempt is under way, waits for it (at most the API timeout).
    ///
    /// # Errors
    /// The error of loading the node list, or why the backend cannot be reached.
    pub async fn ensure_nodes(&self) -> Result<(), NetworkError> {
        // The common case, without touching the reload lock.
        if read(&self.core.state).nodes_loaded {
            return Ok(());
        }
        match &self.connection {
            Connection::Mqtt(shared) => reload::reload_nodes(shared, true).await,
            // The connection reads the whole state as soon as it is up: wait for that.
            Connection::ZwaveJsServer(client, timeout) => {
                let mut changes = self.core.changes.subscribe();
                let deadline = tokio::time::Instant::now() + *timeout;
                loop {
                    let why = {
                        // One guard: a second read while a writer waits could deadlock.
                        let state = read(&self.core.state);
                        if state.nodes_loaded {
                            return Ok(());
                        }
                        match &state.link {
                            LinkState::Down { reason } => Some(reason.clone()),
                            LinkState::Connecting | LinkState::Connected => None,
                        }
                    };
                    let timed_out = match why {
                        Some(_) => true,
                        None => tokio::time::timeout_at(deadline, changes.changed())
                            .await
                            .is_err(),
                    };
                    if timed_out {
                        return Err(NetworkError::ZwaveJsServer(ZwaveJsServerError::Down {
                            url: client.url().to_owned(),
                            why: why.unwrap_or_else(|| "still connecting".to_owned()),
                        }));
                    }
                }
            }
        }
    }

    /// Reloads the node list (MQTT: `getNodes`, and the topic index rebuilt; zwave-js-server:
    /// `start_listening`).
    ///
    /// # Errors
    /// The error of the call that loads it.
    pub async fn reload_nodes(&self) -> Result<(), NetworkError> {
        match &self.connection {
            Connection::Mqtt(shared) => reload::reload_nodes(shared, false).await,
            Connection::ZwaveJsServer(client, timeout) => Ok(client.reload(*timeout).await?),
        }
    }

    /// Reloads the node list because a name was not found in it (the device may be new or
    /// renamed), unless such a reload started less than [`MISS_RELOAD_FLOOR`] ago: a model
    /// that loops on a wrong name must not make the server hammer the backend. Returns
    /// whether it reloaded.
    ///
    /// # Errors
    /// The error of the call that loads it.
    pub async fn reload_nodes_after_miss(&self) -> Result<bool, NetworkError> {
        {
            let mut last = lock(&self.core.last_miss_reload);
            let now = std::time::Instant::now();
            if last.is_some_and(|at| now.duration_since(at) < MISS_RELOAD_FLOOR) {
                return Ok(false);
            }
            *last = Some(now);
        }
        self.reload_nodes().await.map(|()| true)
    }

    /// Calls a Z-Wave JS UI API and returns its `result` (`Null` when it has none).
    ///
    /// # Errors
    /// Fails fast when the broker is down or the gateway is known to be offline; otherwise
    /// the gateway's refusal, or a timeout after the configured API timeout; and always over
    /// zwave-js-server, which has other commands.
    pub async fn call(&self, api: &'static str, args: Vec<Value>) -> Result<Value, NetworkError> {
        match &self.connection {
            Connection::Mqtt(shared) => call::call(shared, api, args).await,
            Connection::ZwaveJsServer(..) => Err(NetworkError::NotOnThisBackend { api }),
        }
    }

    /// Writes a value (MQTT: `writeValue`; zwave-js-server: `node.set_value`) and checks the
    /// status it answers: 255 (a supervised Set succeeded: the device did it), 254 (sent; the
    /// device only acknowledged it) and 1 (a supervised Set is under way) are successes.
    ///
    /// While the write waits for its answer, zwave-js's optimistic echo of it (the new value,
    /// sent before the answer) is not stored: the cache keeps what the device itself last
    /// reported. A supervised success is the device's own word: its value is stored then.
    ///
    /// # Errors
    /// [`NetworkError::WriteFailed`] with the status named when the device did not take it.
    pub async fn write_value(&self, value_id: &ValueId, value: Value) -> Result<i64, NetworkError> {
        let known = self.node(value_id.node_id);
        let echoes = value_id
            .current_key()
            .map(|current_key| vec![(current_key, value.clone())])
            .unwrap_or_default();
        self.write_value_to(
            known.as_ref(),
            value_id,
            value,
            echoes,
            &CancellationToken::new(),
        )
        .await
    }

    /// [`Network::write_value`] to a device found by name as `known` (its node as the lookup
    /// saw it): over zwave-js-server, nothing is sent when the node's name or location is no
    /// longer what the lookup saw ([`NetworkError::Renamed`]). `echoes`: the values zwave-js
    /// sets at once when the Set is acknowledged (key and value), which are not the device's
    /// report: a switch's `currentValue`, a lock's `currentMode`, a setpoint itself. Nothing is
    /// sent once `cancelled` is: over zwave-js-server it is looked at after the name check
    /// (a round trip), right before the write goes out ([`NetworkError::was_cancelled`]);
    /// over MQTT nothing is awaited between the caller's own look and the publish.
    ///
    /// # Errors
    /// As [`Network::write_value`], [`NetworkError::Renamed`], and the cancellation.
    pub async fn write_value_to(
        &self,
        known: Option<&NodeInfo>,
        value_id: &ValueId,
        value: Value,
        echoes: Vec<(String, Value)>,
        cancelled: &CancellationToken,
    ) -> Result<i64, NetworkError> {
        let in_flight = (!echoes.is_empty()).then(|| InFlightWrite::new(value_id.node_id, echoes));
        if let Some(write) = &in_flight {
            // Until the device reports them, its optimistic values are not its state, even
            // in a reload of the whole state.
            self.core.await_reports(write);
        }
        let result = self
            .send_write(known, value_id, &value, in_flight.as_ref(), cancelled)
            .await;
        self.core.commanded();
        if let (Some(write), Err(_)) = (&in_flight, &result) {
            // Never reached the driver (it set nothing), or its answer never came: its caller
            // was told it may have been carried out, and with no answer there is no write to
            // await a report of: a report swallowed in its echo window must not keep the old
            // state over every later reload.
            self.core.stop_awaiting(write);
        }
        let result = result?;
        // The call answers success even when the write failed: the truth is the status.
        let status = result
            .get("status")
            .and_then(Value::as_i64)
            .ok_or_else(|| NetworkError::BadReply {
                api: "writeValue",
                reason: format!("no result.status in {result}"),
            })?;
        if status == 255
            && let Some(write) = &in_flight
        {
            for (key, echoed) in &write.echoes {
                self.core
                    .store_value(write.node, key, Some(echoed.clone()), true);
            }
        }
        if matches!(status, 1 | 254 | 255) {
            Ok(status)
        } else {
            if let Some(write) = &in_flight {
                // Refused: the driver set nothing.
                self.core.stop_awaiting(write);
            }
            if status == 2 {
                // The real Z-Wave JS UI answers a write to a node it does not have (removed, or
                // replaced under another id) with status 2: the node list is out of date.
                self.request_reload();
            }
            Err(NetworkError::WriteFailed {
                value: value.to_string(),
                value_id: value_id.to_string(),
                status,
                status_name: write_status_name(status),
                detail: result
                    .get("message")
                    .and_then(Value::as_str)
                    .map(|message| {
                        super::text::clean(message, super::text::MAX_TEXT_CHARS).into_owned()
                    }),
            })
        }
    }

    /// Sends a write; its answer as `writeValue` gives it (`{status, message?}`). `echo`: the
    /// write as kept in flight, so its optimistic echo is not taken for a report. Over MQTT
    /// the echo comes before the answer; over zwave-js-server after an unsupervised one, and
    /// the connection's task, which sees the order of both, keeps the write for it.
    async fn send_write(
        &self,
        known: Option<&NodeInfo>,
        value_id: &ValueId,
        value: &Value,
        echo: Option<&InFlightWrite>,
        cancelled: &CancellationToken,
    ) -> Result<Value, NetworkError> {
        match &self.connection {
            Connection::Mqtt(shared) => {
                // Z-Wave JS UI's node list, reloaded on its own when a node is renamed: the
                // node as the lookup saw it must still be the node the cache has now (a
                // person may have taken a minute to confirm the command).
                if let Some(known) = known
                    && let Some(now) = self.node(known.id)
                    && (&now.name, &now.loc) != (&known.name, &known.loc)
                {
                    return Err(renamed(known, &now));
                }
                tracing::debug!(%value_id, %value, "sending the write");
                // Out of flight with the answer (its echo came before it), or as soon as this
                // future is dropped.
                let flight = self.core.keep_in_flight(echo, Duration::ZERO);
                let args = vec![value_id.to_json(), value.clone()];
                let result = call::call(shared, "writeValue", args).await;
                drop(flight);
                result
            }
            Connection::ZwaveJsServer(client, timeout) => {
                if let Some(known) = known {
                    self.same_device(client, *timeout, known).await?;
                }
                tracing::debug!(%value_id, %value, "sending the write");
                let params = protocol::value_command(value_id, Some(value));
                match client
                    .write(params, echo.cloned(), cancelled, *timeout)
                    .await
                {
                    Ok(result) => Ok(protocol::set_value_result(&result)),
                    Err(err) => {
                        if matches!(&err, ZwaveJsServerError::Failed { failure, .. } if failure.code == "node_not_found")
                        {
                            self.request_reload();
                        }
                        Err(err.into())
                    }
                }
            }
        }
    }

    /// Before a write over zwave-js-server: whether the node still has the name and location
    /// it had in `known`, the node the command's name was looked up as. zwave-js-server says
    /// nothing when another client renames a node, so the cache can hold a name that now means
    /// another device (and a reload between the lookup and now would hide it from the cache).
    async fn same_device(
        &self,
        client: &ZwaveJsServerClient,
        timeout: Duration,
        known: &NodeInfo,
    ) -> Result<(), NetworkError> {
        // Whatever stops the check, nothing was sent: the write waits for it.
        let unchecked = |reason: NetworkError| NetworkError::NotChecked {
            node: known.id,
            reason: Box::new(reason),
        };
        let result = client
            .request(
                "node.get_state",
                serde_json::json!({"nodeId": known.id.0}),
                timeout,
            )
            .await
            .map_err(|err| unchecked(err.into()))?;
        let now =
            zwave_js_server::state::node_from_state(result.get("state").unwrap_or(&Value::Null))
                .map_err(|reason| {
                    unchecked(NetworkError::BadReply {
                        api: "node.get_state",
                        reason: reason.to_string(),
                    })
                })?;
        if (&now.name, &now.loc) == (&known.name, &known.loc) {
            return Ok(());
        }
        self.request_reload();
        Err(renamed(known, &now))
    }

    /// The node list is out of date: reload it without waiting.
    pub(in crate::network) fn request_reload(&self) {
        match &self.connection {
            Connection::Mqtt(shared) => reload::request_reload(shared, true),
            Connection::ZwaveJsServer(client, timeout) => {
                let (client, timeout) = (client.clone(), *timeout);
                tokio::spawn(async move {
                    if let Err(err) = client.reload(timeout).await {
                        tracing::warn!(error = %err, "reloading the node list failed");
                    }
                });
            }
        }
    }

    /// Asks the device for a value now (MQTT: `pollValue`; zwave-js-server:
    /// `node.poll_value`) and stores the answer in the cache.
    ///
    /// # Errors
    /// As [`Network::call`].
    pub async fn poll_value(&self, value_id: &ValueId) -> Result<Option<Value>, NetworkError> {
        let value = match &self.connection {
            Connection::Mqtt(shared) => {
                // The value itself: parsed only within the bounds of one value.
                match call::call_raw(shared, "pollValue", vec![value_id.to_json()]).await? {
                    Some(raw) => Some(super::values::parse_value(raw.get()).map_err(|why| {
                        NetworkError::BadReply {
                            api: "pollValue",
                            reason: why.to_string(),
                        }
                    })?)
                    .filter(|value| !value.is_null()),
                    None => None,
                }
            }
            Connection::ZwaveJsServer(client, timeout) => {
                let params = protocol::value_command(value_id, None);
                // At most `MAX_RESULT` of text (the client refuses more).
                let mut result = client.request("node.poll_value", params, *timeout).await?;
                // `{"value": …}`, or `{}` when the device gave none; within the bounds of one
                // value, as every report.
                match result.get_mut("value").map(Value::take) {
                    Some(value) => Some(super::values::parse_value(&value.to_string()).map_err(
                        |why| NetworkError::BadReply {
                            api: "node.poll_value",
                            reason: why.to_string(),
                        },
                    )?),
                    None => None,
                }
            }
        };
        self.core.commanded();
        if let Some(value) = &value {
            // The device's answer to a Get: its report.
            self.core.store_value(
                value_id.node_id,
                value_id.key().as_str(),
                Some(value.clone()),
                true,
            );
        }
        Ok(value)
    }

    /// The cached value `key` of `node`, if known.
    pub fn value(&self, node: NodeId, key: &str) -> Option<Value> {
        read(&self.core.state)
            .nodes
            .get(&node)
            .and_then(|n| n.values.get(key))
            .and_then(|v| v.value.clone())
    }

    /// Waits for the device's next report of value `key` of `node` received after `since` (a
    /// write's acknowledgement), at most `timeout`. A cached value from before `since` never
    /// counts, even when it already equals the target: it proves nothing about the write.
    /// Returns the reported value, or `None` when the time ran out.
    pub async fn wait_for_report(
        &self,
        node: NodeId,
        key: &str,
        since: std::time::Instant,
        timeout: Duration,
    ) -> Option<Value> {
        let mut changes = self.core.changes.subscribe();
        let deadline = tokio::time::Instant::now() + timeout;
        loop {
            let reported = read(&self.core.state)
                .nodes
                .get(&node)
                .and_then(|n| n.values.get(key))
                .filter(|v| v.seen_at.is_some_and(|at| at > since))
                .map(|v| v.value.clone().unwrap_or(Value::Null));
            if reported.is_some() {
                return reported;
            }
            match tokio::time::timeout_at(deadline, changes.changed()).await {
                Ok(Ok(())) => {}
                Ok(Err(_)) | Err(_) => return None,
            }
        }
    }

    /// Waits until `node`, as cached, satisfies `check` (looked at now and after every change),
    /// at most `timeout`; the node then, or `None` when the time ran out or it is gone.
    pub async fn wait_for_node(
        &self,
        node: NodeId,
        check: impl Fn(&NodeInfo) -> bool,
        timeout: Duration,
    ) -> Option<NodeInfo> {
        let mut changes = self.core.changes.subscribe();
        let deadline = tokio::time::Instant::now() + timeout;
        loop {
            let now = read(&self.core.state).nodes.get(&node).cloned()?;
            if check(&now) {
                return Some(now);
            }
            match tokio::time::timeout_at(deadline, changes.changed()).await {
                Ok(Ok(())) => {}
                Ok(Err(_)) | Err(_) => return None,
            }
        }
    }
}

/// The refusal of a write to `known`, a node now named as in `now`.
fn renamed(known: &NodeInfo, now: &NodeInfo) -> NetworkError {
    let named = |info: &NodeInfo| match info.loc.as_str() {
        "" => format!("\"{}\"", info.name),
        loc => format!("\"{}\" ({loc})", info.name),
    };
    NetworkError::Renamed {
        node: known.id,
        was: named(known),
        now: named(now),
    }
}
