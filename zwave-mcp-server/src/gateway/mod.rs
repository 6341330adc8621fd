//! The Z-Wave JS UI client: API calls over MQTT, the live value cache and connection state.
//!
//! [`Gateway`] is a cheap `Clone` handle. One task owns the rumqttc event loop: it reconnects
//! with backoff, resubscribes and refreshes the node list after every (re)connection, routes
//! API replies to their waiting requests and keeps the cache current from value topics.
//! `getNodes` is the source of truth for nodes, values and which topic carries which value.
//!
//! | module | owns |
//! |---|---|
//! | `handle` | [`Gateway`], the handle: start-up, cache reads, `writeValue`, `pollValue`, waits |
//! | `call` | one API call: refusals while down, publishing, the reply or a timeout |
//! | `shared` | what the handles and the event loop share; lock helpers, [`now_ms`] |
//! | `settings` | [`MqttSettings`], [`Secret`], [`RECONNECT_BACKOFF`] |
//! | `url` | [`MqttUrl`], the broker's address |
//! | `state` | [`HomeState`], [`LinkState`]: connection, gateway and driver status, nodes |
//! | `event_loop` | the task owning rumqttc: reconnects, routes replies, status and value topics |
//! | `refresh` | loading the node list (`getNodes`) and rebuilding the topic index |
//! | `api` | the request/reply envelope and [`PendingRequests`] (correlation) |
//! | `topics` | which topic carries which value; collisions |
//! | `nodes` | the node model of `getNodes` and the node list, and its parsing |
//! | `values` | a node's values, their keys and their API addresses |
//! | `text` | gateway-supplied text as data: escaped and capped |
//! | `node_id` | [`NodeId`] |
//! | `error` | [`GatewayError`] |

mod api;
mod call;
pub(crate) mod core;
mod error;
mod event_loop;
mod handle;
mod node_id;
pub mod nodes;
mod refresh;
mod settings;
mod shared;
mod state;
pub mod text;
pub mod topics;
mod url;
pub mod values;

pub use api::{ApiReply, PendingRequests, RequestId, write_status_name};
pub use common::Backoff;
pub use core::{MISS_RELOAD_FLOOR, now_ms};
pub use error::GatewayError;
pub use handle::Gateway;
pub use node_id::NodeId;
pub use nodes::{NodeInfo, NodeStatus, Nodes, Revision, parse_nodes, parse_nodes_raw};
pub use settings::{MqttSettings, RECONNECT_BACKOFF, Secret};
pub use state::{Backend, HomeState, LinkState, Stale, StaleCause};
pub use url::MqttUrl;
pub use values::{Property, ValueId, ValueInfo, ValueKey};
