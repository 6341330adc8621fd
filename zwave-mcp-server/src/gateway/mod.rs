//! The Z-Wave JS UI client: API calls over MQTT, the live value cache and connection state.
//!
//! [`Gateway`] is a cheap `Clone` handle. One task owns the rumqttc event loop: it reconnects
//! with backoff, resubscribes and refreshes the node list after every (re)connection, routes
//! API replies to their waiting requests and keeps the cache current from value topics.
//! `getNodes` is the source of truth for nodes, values and which topic carries which value.
//!
//! | module | owns |
//! |---|---|
//! | `mod.rs` | [`Gateway`], the handle: API calls (`call`, `writeValue`, `pollValue`), cache reads, waits |
//! | `settings` | [`MqttSettings`], [`Backoff`] |
//! | `state` | [`HomeState`], [`BrokerState`]: connection, gateway and driver status, nodes |
//! | `event_loop` | the task owning rumqttc: reconnects, routes replies, status and value topics |
//! | `refresh` | loading the node list (`getNodes`) and rebuilding the topic index |
//! | `api` | the request/reply envelope and [`PendingRequests`] (correlation) |
//! | `topics` | which topic carries which value; collisions |
//! | `nodes` | the node and value model of `getNodes`, and its parsing |
//! | `error` | [`GatewayError`] |

mod api;
mod error;
mod event_loop;
pub mod nodes;
mod refresh;
mod settings;
mod state;
pub mod topics;

use std::{
    sync::{Arc, RwLock},
    time::{Duration, SystemTime, UNIX_EPOCH},
};

use rumqttc::{AsyncClient, QoS};
use serde_json::Value;
use tokio::sync::watch;
use tracing::{Instrument, debug, info_span};

pub use api::{ApiReply, PendingRequests, RequestId, write_status_name};
pub use error::GatewayError;
pub use nodes::{
    NodeId, NodeInfo, Nodes, Property, Revision, ValueId, ValueInfo, parse_nodes, parse_nodes_raw,
};
pub use settings::{Backoff, MqttSettings};
pub use state::{BrokerState, HomeState, Stale, StaleCause};
use topics::TopicIndex;

/// What the handles and the event loop task share.
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
    /// Held to hand a request to rumqttc, and by the event loop task while it marks the
    /// connection down and empties rumqttc's queues. So a request is handed over only while
    /// the connection is up, and one handed over on a connection that is then lost is
    /// discarded, never sent after the reconnection (a caller that got an error must not see
    /// its command carried out later).
    send_gate: std::sync::Mutex<()>,
    /// Background node-list reloads, coalesced.
    reloads: refresh::ReloadRequests,
}

/// Requests the rumqttc client queues before `try_publish` refuses more.
const CLIENT_QUEUE: usize = 64;

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
            changes: watch::Sender::new(0),
            refresh_lock: tokio::sync::Mutex::new(()),
            send_gate: std::sync::Mutex::new(()),
            reloads: refresh::ReloadRequests::default(),
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
    match call_raw(shared, api, args).await? {
        Some(raw) => serde_json::from_str(raw.get()).map_err(|err| GatewayError::BadReply {
            api,
            reason: err.to_string(),
        }),
        None => Ok(Value::Null),
    }
}

/// [`call`], with the result as the gateway sent it (`None` when it sent none).
async fn call_raw(
    shared: &Shared,
    api: &'static str,
    args: Vec<Value>,
) -> Result<Option<Box<serde_json::value::RawValue>>, GatewayError> {
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
    {
        let _gate = shared
            .send_gate
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let down = match &read(&shared.state).broker {
            BrokerState::Connected => None,
            BrokerState::Connecting => Some("not connected yet".to_owned()),
            BrokerState::Down { reason } => Some(reason.clone()),
        };
        if let Some(reason) = down {
            shared.pending.forget(&request_id);
            return Err(GatewayError::BrokerUnreachable {
                url: settings.url.to_string(),
                reason,
            });
        }
        // try_publish: a full queue is an error at once, never a wait that could end after
        // the caller gave up.
        if let Err(err) = shared
            .client
            .try_publish(topic, QoS::AtLeastOnce, false, payload)
        {
            shared.pending.forget(&request_id);
            debug!(api, error = %err, "the mqtt client's queue is full");
            return Err(GatewayError::Busy {
                api,
                queued: CLIENT_QUEUE,
            });
        }
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
        Ok(reply.result)
    } else if reply.message == "Z-Wave client not connected" {
        let mut state = write(&shared.state);
        state.driver_ready = Some(false);
        state.driver_down_since.get_or_insert_with(now_ms);
        drop(state);
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

fn store_value(shared: &Shared, node: NodeId, key: &str, value: Value) -> bool {
    let stored = write(&shared.state)
        .nodes
        .record_report(node, key, Some(value), now_ms());
    if stored {
        shared.changes.send_modify(|version| *version += 1);
    }
    stored
}
