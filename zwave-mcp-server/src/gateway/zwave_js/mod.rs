//! The WebSocket backend: zwave-js-server's API (the Z-Wave JS add-on of Home Assistant, and
//! Z-Wave JS UI with its WS server on). One task owns the socket: it reconnects with backoff,
//! checks the API schema, reads the whole state (`start_listening`) into the core on every
//! connection and keeps it current from the server's events; commands are matched to their
//! results by `messageId`.
//!
//! | module | owns |
//! |---|---|
//! | `state` | the server's description of nodes and values, as the node model ([`crate::gateway::NodeInfo`]) |
//! | `events` | the server's events, read into what they change in the node cache, and applied |
//! | `protocol` | its messages: version (and the schema check), results, events; the commands sent |
//! | `client` | [`client::WsClient`]: the connection that stays up, the core it feeds, commands by id |
//! | `url` | [`ZwaveJsUrl`]: zwave-js-server's address, parsed at the flag |

pub mod client;
pub mod events;
pub mod protocol;
pub mod state;
mod url;

pub use url::ZwaveJsUrl;
