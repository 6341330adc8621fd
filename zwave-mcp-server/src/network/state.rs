//! What the server knows about the home and the path to it: which backend, its link, the
//! gateway and driver status (MQTT), and the nodes.

use super::nodes::Nodes;

/// The way to the home.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    /// Z-Wave JS UI's MQTT gateway, through a broker (`--mqtt-url`).
    Mqtt,
    /// zwave-js-server's WebSocket API (`--zwave-js-url`): Home Assistant's Z-Wave JS add-on,
    /// or Z-Wave JS UI with its WS server on.
    ZwaveJsServer,
}

/// The link to the backend (the MQTT broker, or zwave-js-server) as last seen.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LinkState {
    /// Connecting for the first time.
    Connecting,
    /// Connected (MQTT: and subscribed; zwave-js-server: and listening).
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
    /// Which backend feeds this state.
    pub backend: Backend,
    /// The link to the backend.
    pub link: LinkState,
    /// Gateway status topic (`None` until seen; MQTT only).
    pub gateway_online: Option<bool>,
    /// `driver/status` topic (`None` until seen; MQTT only).
    pub driver_ready: Option<bool>,
    /// Nodes by id from the last full load, kept current from reports.
    pub nodes: Nodes,
    /// Whether the node list has been loaded at least once since the last connection.
    pub nodes_loaded: bool,
    /// Why the last reload of the node list failed, if it did.
    pub reload_error: Option<String>,
    /// When the link was lost (epoch ms), while it is down.
    pub link_down_since: Option<i64>,
    /// When the gateway went offline (epoch ms), while it is.
    pub gateway_offline_since: Option<i64>,
    /// When the Z-Wave driver went down (epoch ms), while it is.
    pub driver_down_since: Option<i64>,
    /// `driver/status` messages seen: an API reply saying the driver is down marks it down
    /// only if no status came after its request was sent (a reply of before the driver came
    /// back, delivered after its "up", is old news).
    pub driver_reports: u64,
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
    /// zwave-js-server cannot be reached.
    ServerUnreachable,
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
    /// Whether cached states may be out of date, and why: the link, then the gateway, then
    /// the driver (the first link down hides the ones behind it).
    pub fn stale(&self) -> Option<Stale> {
        let link = match self.backend {
            Backend::Mqtt => StaleCause::BrokerUnreachable,
            Backend::ZwaveJsServer => StaleCause::ServerUnreachable,
        };
        [
            (link, self.link_down_since),
            (StaleCause::GatewayOffline, self.gateway_offline_since),
            (StaleCause::DriverDown, self.driver_down_since),
        ]
        .into_iter()
        .find_map(|(cause, since)| since.map(|since_ms| Stale { cause, since_ms }))
    }
}
