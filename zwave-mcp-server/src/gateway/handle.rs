//! [`Gateway`], the handle the tools hold: starting the connection, reading the cache, API
//! calls (`writeValue`, `pollValue`) and waiting for a device's report.

use std::{
    sync::{Arc, RwLock},
    time::Duration,
};

use rumqttc::AsyncClient;
use serde_json::Value;
use tokio::sync::watch;
use tracing::{Instrument, info_span};

use super::{
    Backoff, BrokerState, GatewayError, HomeState, MqttSettings, NodeId, NodeInfo, Nodes,
    PendingRequests, Stale, ValueId, call, event_loop, refresh,
    shared::{
        CLIENT_QUEUE, InFlightWrite, MISS_RELOAD_FLOOR, ReloadRequests, Shared, read, store_value,
    },
    topics::TopicIndex,
    write_status_name,
};

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
        Self::connect_after(settings, backoff, std::future::ready(()))
    }

    /// [`Gateway::connect`], with the first connection attempt made once `ready` completes
    /// (the demo's simulated gateway has published its home). Until then the gateway is
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

        let shared = Arc::new(Shared {
            client,
            gateway_topic: settings.gateway_topic(),
            settings,
            pending: PendingRequests::default(),
            state: RwLock::new(HomeState {
                broker: BrokerState::Connecting,
                gateway_online: None,
                driver_ready: None,
                nodes: Nodes::default(),
                nodes_loaded: false,
                refresh_error: None,
                broker_down_since: None,
                gateway_offline_since: None,
                driver_down_since: None,
            }),
            topics: RwLock::new(TopicIndex::default()),
            on_load: RwLock::new(None),
            last_miss_reload: std::sync::Mutex::new(None),
            writes_in_flight: std::sync::Mutex::new(Vec::new()),
            changes: watch::Sender::new(0),
            refresh_lock: tokio::sync::Mutex::new(()),
            send_gate: std::sync::Mutex::new(()),
            reloads: ReloadRequests::default(),
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
    pub fn with_nodes<R>(&self, f: impl FnOnce(&Nodes) -> R) -> R {
        f(&read(&self.shared.state).nodes)
    }

    /// Whether cached states may be out of date (a link to the devices is down), since when.
    pub fn staleness(&self) -> Option<Stale> {
        read(&self.shared.state).stale()
    }

    /// Calls `hook` with every node list loaded from the gateway, from then on (one hook: a
    /// second call replaces the first). It runs on the loading task: keep it short.
    pub fn on_nodes_loaded(&self, hook: impl Fn(&Nodes) + Send + Sync + 'static) {
        *super::shared::write(&self.shared.on_load) = Some(Box::new(hook));
    }

    /// Whether any node is known (from a `getNodes` now or before a disconnection).
    pub fn has_nodes(&self) -> bool {
        !read(&self.shared.state).nodes.is_empty()
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
        refresh::refresh_nodes(&self.shared, true).await
    }

    /// Reloads the node list with `getNodes` and rebuilds the topic index.
    ///
    /// # Errors
    /// The error of the `getNodes` call.
    pub async fn refresh_nodes(&self) -> Result<(), GatewayError> {
        refresh::refresh_nodes(&self.shared, false).await
    }

    /// Reloads the node list because a name was not found in it (the device may be new or
    /// renamed), unless such a reload started less than [`MISS_RELOAD_FLOOR`] ago: a model
    /// that loops on a wrong name must not make the server hammer the gateway. Returns
    /// whether it reloaded.
    ///
    /// # Errors
    /// The error of the `getNodes` call.
    pub async fn refresh_nodes_after_miss(&self) -> Result<bool, GatewayError> {
        {
            let mut last = self
                .shared
                .last_miss_reload
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            let now = std::time::Instant::now();
            if last.is_some_and(|at| now.duration_since(at) < MISS_RELOAD_FLOOR) {
                return Ok(false);
            }
            *last = Some(now);
        }
        refresh::refresh_nodes(&self.shared, false)
            .await
            .map(|()| true)
    }

    /// Calls a Z-Wave JS UI API and returns its `result` (`Null` when it has none).
    ///
    /// # Errors
    /// Fails fast when the broker is down or the gateway is known to be offline; otherwise
    /// the gateway's refusal, or a timeout after the configured API timeout.
    pub async fn call(&self, api: &'static str, args: Vec<Value>) -> Result<Value, GatewayError> {
        call::call(&self.shared, api, args).await
    }

    /// Writes a value with `writeValue` and checks `result.status`: 255 (a supervised Set
    /// succeeded: the device did it), 254 (sent; the device only acknowledged it) and 1 (a
    /// supervised Set is under way) are successes.
    ///
    /// While the write waits for its reply, zwave-js's optimistic echo of it (the new value,
    /// published before the reply) is not stored: the cache keeps what the device itself last
    /// reported. A supervised success is the device's own word: its value is stored then.
    ///
    /// # Errors
    /// [`GatewayError::WriteFailed`] with the status named when the device did not take it.
    pub async fn write_value(&self, value_id: &ValueId, value: Value) -> Result<i64, GatewayError> {
        let in_flight = value_id.current_key().map(|current_key| InFlightWrite {
            node: value_id.node_id,
            current_key,
            value: value.clone(),
        });
        if let Some(write) = &in_flight {
            lock_writes(&self.shared).push(write.clone());
        }
        let result = self
            .call("writeValue", vec![value_id.to_json(), value.clone()])
            .await;
        if let Some(write) = &in_flight {
            let mut writes = lock_writes(&self.shared);
            if let Some(at) = writes.iter().position(|w| w == write) {
                writes.swap_remove(at);
            }
        }
        let result = result?;
        // writeValue answers success:true even when the write failed: the truth is the status.
        let status = result
            .get("status")
            .and_then(Value::as_i64)
            .ok_or_else(|| GatewayError::BadReply {
                api: "writeValue",
                reason: format!("no result.status in {result}"),
            })?;
        if status == 255
            && let Some(write) = &in_flight
        {
            store_value(&self.shared, write.node, &write.current_key, value.clone());
        }
        if matches!(status, 1 | 254 | 255) {
            Ok(status)
        } else {
            if status == 2 {
                // The real gateway answers a write to a node it does not have (removed, or
                // replaced under another id) with status 2: the node list is out of date.
                refresh::request_reload(&self.shared, true);
            }
            Err(GatewayError::WriteFailed {
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

    /// Asks the device for a value now (`pollValue`) and stores the answer in the cache.
    ///
    /// # Errors
    /// As [`Gateway::call`].
    pub async fn poll_value(&self, value_id: &ValueId) -> Result<Option<Value>, GatewayError> {
        let result = self.call("pollValue", vec![value_id.to_json()]).await?;
        let value = (!result.is_null()).then_some(result);
        if let Some(value) = &value {
            store_value(
                &self.shared,
                value_id.node_id,
                value_id.key().as_str(),
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
        let mut changes = self.shared.changes.subscribe();
        let deadline = tokio::time::Instant::now() + timeout;
        loop {
            let reported = read(&self.shared.state)
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
}

fn lock_writes(shared: &Shared) -> std::sync::MutexGuard<'_, Vec<InFlightWrite>> {
    shared
        .writes_in_flight
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}
