//! What the server knows about the home and the path to it: the broker connection, the
//! gateway and driver status, and the nodes.

use super::nodes::Nodes;

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
    pub nodes: Nodes,
    /// Whether `getNodes` has succeeded at least once since the last connection.
    pub nodes_loaded: bool,
    /// Why the last node refresh failed, if it did.
    pub refresh_error: Option<String>,
    /// When the broker connection was lost (epoch ms), while it is down.
    pub broker_down_since: Option<i64>,
    /// When the gateway went offline (epoch ms), while it is.
    pub gateway_offline_since: Option<i64>,
    /// When the Z-Wave driver went down (epoch ms), while it is.
    pub driver_down_since: Option<i64>,
}

/// Which link to the devices is down, making cached states possibly out of date.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StaleCause {
    /// The MQTT broker cannot be reached.
    BrokerUnreachable,
    /// Z-Wave JS UI is offline.
    GatewayOffline,
    /// Z-Wave JS UI runs, but its Z-Wave driver is down.
    DriverDown,
}

/// Cached states are possibly out of date: why, and since when.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stale {
    /// The link that is down.
    pub cause: StaleCause,
    /// Since when (epoch ms): the states are at least this old.
    pub since_ms: i64,
}

impl HomeState {
    /// Whether cached states may be out of date, and why: the broker, then the gateway, then
    /// the driver (the first link down hides the ones behind it).
    pub fn stale(&self) -> Option<Stale> {
        [
            (StaleCause::BrokerUnreachable, self.broker_down_since),
            (StaleCause::GatewayOffline, self.gateway_offline_since),
            (StaleCause::DriverDown, self.driver_down_since),
        ]
        .into_iter()
        .find_map(|(cause, since)| since.map(|since_ms| Stale { cause, since_ms }))
    }
}
