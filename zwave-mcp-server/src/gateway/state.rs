//! What the server knows about the home and the path to it: the broker connection, the
//! gateway and driver status, and the nodes.

use std::collections::BTreeMap;

use super::nodes::{NodeId, NodeInfo};

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
