//! The WebSocket backend: zwave-js-server's API (the Z-Wave JS add-on of Home Assistant, and
//! Z-Wave JS UI with its WS server on). One task owns the socket: it reconnects with backoff,
//! checks the API schema, reads the whole state (`start_listening`) into the core on every
//! connection and keeps it current from the server's events; commands are matched to their
//! results by `messageId`.
//!
//! | module | owns |
//! |---|---|
//! | `target` | [`Target`]: where the server is (`ws://`, `wss://` with its TLS), [`TargetError`] |
//! | `client` | [`ZwaveJsServerClient`]: the handle; commands asked for, refused at once while down |
//! | `shared` | what the handles and the task share: the core, the [`Link`], requests |
//! | `connection` | the task owning the socket: connect, hand over to a session, back off |
//! | `session` | one open socket's conversation: handshake, commands by id, events, pings |
//! | `heard` | the stream noting when the server last sent a byte |
//! | `error` | [`ZwaveJsServerError`]: why a command got no result, and whether it may have run |
//! | `protocol` | its messages: version (and the schema check), results, events; the commands sent |
//! | `events` | the server's events, read into what they change in the node cache, and applied |
//! | `state` | the server's description of nodes and values, as the node model ([`crate::network::NodeInfo`]) |
//! | `url` | [`ZwaveJsUrl`]: zwave-js-server's address, parsed at the flag |

pub mod client;
mod connection;
mod error;
pub mod events;
mod heard;
pub mod protocol;
mod session;
mod shared;
pub mod state;
mod target;
mod url;

pub use client::ZwaveJsServerClient;
pub use error::ZwaveJsServerError;
pub use events::EventError;
pub use protocol::{FrameError, SchemaMismatch};
pub use shared::Link;
pub use state::StateError;
pub use target::{Target, TargetError, tls_config};
pub use url::{UrlError, ZwaveJsUrl};
