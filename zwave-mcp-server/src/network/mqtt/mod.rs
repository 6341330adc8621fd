//! The MQTT backend: Z-Wave JS UI's API over a broker. One task owns the rumqttc event loop:
//! it reconnects with backoff, resubscribes and reloads the node list after every
//! (re)connection, routes API replies to their waiting requests and keeps the core current
//! from value and status topics. `getNodes` is the source of truth for nodes, values and
//! which topic carries which value.
//!
//! | module | owns |
//! |---|---|
//! | `call` | one API call: refusals while down, publishing, the reply or a timeout |
//! | `shared` | what the handles and the event loop share beside the core |
//! | `settings` | [`MqttSettings`], [`Secret`], [`RECONNECT_BACKOFF`] |
//! | `url` | [`MqttUrl`], the broker's address |
//! | `event_loop` | the task owning rumqttc: reconnects, routes replies, status and value topics |
//! | `events` | the gateway's event topics (when it sends events): the statistics they carry |
//! | `reload` | loading the node list (`getNodes`) and rebuilding the topic index |
//! | `api` | the request/reply envelope and [`PendingRequests`] (correlation) |
//! | [`topics`] | which topic carries which value; collisions |

mod api;
pub(super) mod call;
pub(super) mod event_loop;
mod events;
pub(super) mod reload;
mod settings;
pub(super) mod shared;
pub mod topics;
mod url;

// What the modules here take from the core, as `super::…`.
use super::{Backoff, LinkState, NetworkError, NodeId, core, nodes, text};

pub use api::{ApiReply, PendingRequests, RequestId};
pub use settings::{MqttSettings, RECONNECT_BACKOFF, Secret};
pub use url::MqttUrl;
