//! The way to the home: one backend-neutral core the tools read and write through, fed by
//! either of two backends, Z-Wave JS UI's MQTT gateway or zwave-js-server's WebSocket API.
//!
//! ```text
//!            devices, mcp (the tools)
//!                      │ Network (handle.rs): reads, write_value, poll_value, waits
//!                      ▼
//!   core.rs ── HomeState: nodes and values as the devices reported them, the link and
//!              since when it is down, readiness; writes in flight (their echo is no report)
//!        ▲                                   ▲
//!        │ getNodes, value and status topics │ start_listening, events
//!   mqtt/ (rumqttc event loop) ──▶ broker    zwave_js_server/ (one WebSocket task) ──▶ zwave-js-server
//!        writeValue, pollValue                node.set_value, node.poll_value
//!              ▼                                   ▼
//!   Z-Wave JS UI ── zwave-js driver          (the same driver, behind its own API)
//! ```
//!
//! [`Network`] is a cheap `Clone` handle over either backend; the tools never ask which runs.
//! Both write the same core under the same rules: a value is stored when the device reports
//! it (not zwave-js's optimistic echo of a write, which each backend recognises in its own
//! message order), the link's state and since when it is down decide the stale banner, and
//! a command is sent only on a live connection and never after it was lost.
//!
//! | module | owns |
//! |---|---|
//! | `handle` | [`Network`]: start-up over either backend, cache reads, writes, polls, waits |
//! | `core` | what the handles and the backend share: the state, changes, writes in flight |
//! | `state` | [`HomeState`], [`LinkState`], [`Backend`], [`Stale`]: the link, status, nodes |
//! | `nodes` | the node model (first made for `getNodes`) and the node list, and its parsing |
//! | `values` | a node's values, their keys and their addresses |
//! | `text` | text from Z-Wave JS as data: escaped and capped |
//! | `node_id` | [`NodeId`] |
//! | `error` | [`NetworkError`], the names of write statuses |
//! | [`health`] | statistics, since when each status holds ([`HealthBook`]), [`Network::ping`] |
//! | [`mqtt`] | the MQTT backend: Z-Wave JS UI's API over a broker, topics ↔ values |
//! | [`zwave_js_server`] | the WebSocket backend: zwave-js-server's API, its state and events |

pub(crate) mod core;
mod error;
mod handle;
pub mod health;
pub mod mqtt;
mod node_id;
pub mod nodes;
mod state;
pub mod text;
pub mod values;
pub mod zwave_js_server;

pub use common::Backoff;
pub use core::{MISS_RELOAD_FLOOR, now_ms};
pub use error::{NetworkError, write_status_name};
pub use handle::Network;
pub use health::{HealthBook, Ping};
pub use mqtt::{
    ApiReply, MqttSettings, MqttUrl, PendingRequests, RECONNECT_BACKOFF, RequestId, Secret, topics,
};
pub use node_id::NodeId;
pub use nodes::{NodeInfo, NodeStatus, Nodes, Revision, parse_nodes, parse_nodes_raw};
pub use state::{Backend, HomeState, LinkState, Stale, StaleCause};
pub use values::{Property, ValueId, ValueInfo, ValueKey};
pub use zwave_js_server::ZwaveJsUrl;
