//! What the MQTT backend's [`Network`](super::Network) handles and its event loop task share,
//! beside the backend-neutral core.

use std::sync::{Arc, RwLock, atomic::AtomicBool};

use rumqttc::AsyncClient;

use super::{MqttSettings, PendingRequests, core::Core, topics::TopicIndex};

/// What the MQTT backend's handles and its event loop task share.
pub(in crate::network) struct Shared {
    /// The backend-neutral core it feeds.
    pub(in crate::network) core: Arc<Core>,
    pub(in crate::network) client: AsyncClient,
    pub(in crate::network) settings: MqttSettings,
    /// `settings.gateway_topic()`, computed once: it is compared with every message.
    pub(in crate::network) gateway_topic: String,
    /// `settings.events_topic()`, computed once, for the same reason.
    pub(in crate::network) events_topic: String,
    pub(in crate::network) pending: PendingRequests,
    pub(in crate::network) topics: RwLock<TopicIndex>,
    /// Serializes node-list reloads so reconnect storms do not stack `getNodes` calls.
    pub(in crate::network) reload_lock: tokio::sync::Mutex<()>,
    /// Held to hand a request to rumqttc, and by the event loop task while it marks the
    /// connection down and empties rumqttc's queues. So a request is handed over only while
    /// the connection is up, and one handed over on a connection that is then lost is
    /// discarded, never sent after the reconnection (a caller that got an error must not see
    /// its command carried out later).
    pub(in crate::network) send_gate: std::sync::Mutex<()>,
    /// Background node-list reloads, coalesced.
    pub(in crate::network) reloads: ReloadRequests,
    /// When each node's status topic last said something: a `getNodes` reply sent before
    /// that is older news about the node's status and availability than the topic.
    pub(in crate::network) status_seen:
        std::sync::Mutex<std::collections::HashMap<crate::network::NodeId, std::time::Instant>>,
}

/// Background reload requests, coalesced.
/// Invariant: at most one reload task runs (`running`); a request made while it runs sets
/// `wanted`, and the task runs once more for all such requests.
#[derive(Debug, Default)]
pub(in crate::network) struct ReloadRequests {
    pub(in crate::network) wanted: AtomicBool,
    /// A full reload was asked for (not only "load if missing").
    pub(in crate::network) force: AtomicBool,
    pub(in crate::network) running: AtomicBool,
}

/// Requests the rumqttc client queues before `try_publish` refuses more.
pub(in crate::network) const CLIENT_QUEUE: usize = 64;
