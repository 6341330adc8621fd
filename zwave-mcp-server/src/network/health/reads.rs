//! Reading the network's health ([`Network::with_health`]) and keeping its statistics fresh
//! ([`Network::freshen_statistics`]): zwave-js-server sends every change to its listening
//! clients, but Z-Wave JS UI publishes statistics only when its gateway sends events (off by
//! default), so over MQTT the node list is read again when the statistics held are old.

use std::time::Duration;

use crate::network::{
    HealthBook, Network, NetworkError, Nodes,
    core::{lock, read},
    handle::Connection,
};

/// How old the node list's statistics may be before a health read over MQTT loads it again,
/// while Z-Wave JS UI sends no statistics events (they are also out of date once a command
/// this server sent was answered after the list): `getNodes` of a full network takes some
/// 50 ms, and a person asking about the network wants it as it is.
pub const STATISTICS_MAX_AGE: Duration = Duration::from_secs(5);

impl Network {
    /// Runs `f` on the nodes and the health book together, under their locks (keep it short:
    /// no awaits inside). A node's statistics are the book's when it holds newer ones than
    /// the list's.
    pub fn with_health<R>(&self, f: impl FnOnce(&Nodes, &HealthBook) -> R) -> R {
        let state = read(&self.core.state);
        let book = lock(&self.core.health);
        f(&state.nodes, &book)
    }

    /// Makes the statistics held current where the backend does not send them as they
    /// change: over MQTT without statistics events, the node list is loaded again when it is
    /// older than [`STATISTICS_MAX_AGE`] or than the last command this server sent. Returns
    /// whether it was.
    ///
    /// # Errors
    /// The error of loading the node list.
    pub async fn freshen_statistics(&self) -> Result<bool, NetworkError> {
        match &self.connection {
            Connection::Mqtt(_) => {
                if !lock(&self.core.health).is_out_of_date(STATISTICS_MAX_AGE) {
                    return Ok(false);
                }
                self.reload_nodes().await.map(|()| true)
            }
            Connection::ZwaveJsServer(..) => Ok(false),
        }
    }
}
