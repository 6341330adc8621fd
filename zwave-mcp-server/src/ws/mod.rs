//! zwave-js-server's WebSocket API (the Z-Wave JS add-on of Home Assistant, and Z-Wave JS UI
//! with its WS server on): the second way to reach a Z-Wave JS home, beside the MQTT gateway
//! (issue 24). Built in steps; what is here so far:
//!
//! | module | owns |
//! |---|---|
//! | `state` | the server's description of nodes and values, as the node model ([`crate::gateway::NodeInfo`]) |
//! | `events` | the server's events, read into what they change in the node cache, and applied |
//! | `protocol` | its messages: version (and the schema check), results, events; the commands sent |
//! | `client` | [`client::WsClient`]: the connection that stays up, the cache, commands by id |

pub mod client;
pub mod events;
pub mod protocol;
pub mod state;
