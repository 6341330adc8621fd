//! The network's health as Z-Wave JS knows it: each node's and the controller's
//! communication statistics, since when each node has had its status, and a ping.
//!
//! ```text
//!   getNodes / start_listening ──▶ NodeInfo::statistics (the list's snapshot)
//!   statistics updated events  ──▶ HealthBook (newer than the list; latest wins; wakes nobody)
//!   status topics / events     ──▶ HealthBook (since when each status holds)
//!   Network::ping ──▶ pingNode / node.ping ──▶ answered or not, how fast, the status after
//! ```
//!
//! Both backends feed the same book through the core, under the same rules. What a gateway
//! sends is data: statistics are bounded and read field by field ([`statistics`]).
//!
//! | module | owns |
//! |---|---|
//! | [`statistics`] | [`NodeStatistics`], [`ControllerStatistics`], routes, signals, speeds: their reading |
//! | `book` | [`HealthBook`]: statistics newer than the list, the controller's, statuses since when |
//! | `ping` | [`Network::ping`](crate::network::Network::ping): [`Ping`] over either backend |
//! | `reads` | reading the book with the nodes; statistics kept fresh over MQTT |
//! | [`upkeep`] | re-interviews, lifeline health checks, route rebuilds: one per device at once |

pub(crate) mod book;
mod ping;
mod reads;
pub mod statistics;
pub mod upkeep;

pub use book::HealthBook;
pub use ping::Ping;
pub use reads::STATISTICS_MAX_AGE;
pub use statistics::{
    ControllerStatistics, DataRate, ListedStatistics, NodeStatistics, Route, Rssi,
    StatisticsRefused,
};
