//! An MCP server (stdio, or Streamable HTTP for remote hosts) that lets AI agents list, read and control the Z-Wave devices of a home
//! run by Z-Wave JS, through Z-Wave JS UI's MQTT gateway or zwave-js-server's WebSocket API.
//!
//! ```text
//! MCP host ──stdin/stdout (JSON-RPC) or HTTP /mcp──▶ transport (lines or rmcp's HTTP service, the bound)
//!                                        └─▶ mcp (rmcp tools)
//!                                              └─▶ devices (names, kinds, actions, readings)
//!                                                    └─▶ network (the core: live cache, link state)
//!                                                          ├─ mqtt ──▶ broker ──▶ Z-Wave JS UI
//!                                                          └─ zwave_js_server ──WebSocket──▶ zwave-js-server
//!                       (a real home, or sim: --demo, simulate, the tests)
//! ```
//!
//! # Layout
//! - `config`: flags and `ZWAVE_MCP_*` environment variables (clap), in groups; what is
//!   derived from them; their errors and parsers.
//! - [`logging`]: tracing to stderr and an optional daily file; never stdout.
//! - `app`: [`run`]: what the binary runs, wired from the configuration (the MCP session,
//!   `--demo`, `simulate`).
//! - `transport`: our JSON-RPC layer under rmcp: the protocol's private stdin/stdout (fd 1
//!   pointed at stderr), newline-delimited messages, refusals, batches, the bound on requests
//!   in flight; and MCP Streamable HTTP (`--http`): rmcp's service on hyper behind our gate
//!   (the path, the bearer token, the cap on sessions, bounded bodies).
//! - `mcp`: the rmcp server, its five tools (the health read and its ping among them) and
//!   their typed errors; the home as resources with subscriptions, completions and prompts.
//! - [`devices`]: pure domain logic: device kinds, name resolution, actions, readings, a
//!   link's health in words ([`devices::health`]).
//! - [`network`]: the backend-neutral core (cache, link state, the write path's rules, the
//!   network's health: statistics, statuses since when, ping in [`network::health`]) and its
//!   two backends, [`network::mqtt`] (Z-Wave JS UI's MQTT API, topics ↔ values) and
//!   [`network::zwave_js_server`] (zwave-js-server's WebSocket API).
//! - [`auth`]: the server as its own OAuth 2.1 authorization server (`--oauth-issuer`): public
//!   for its benchmark beside the owner's key (`benches/bearer.rs`); the HTTP transport uses it.
//! - [`sim`]: an embedded MQTT broker, a simulated Z-Wave JS UI gateway and a simulated
//!   zwave-js-server (demo and tests), over the same simulated devices; they build what they
//!   send with their own code, not the backends'.
//!
//! `config`, `app`, `transport` and `mcp` are private: the binary and the tests reach them
//! through [`run`], [`Config`] and [`ZwaveServer`]. The reconnection backoff and the duration
//! grammar come from the workspace's `common` crate, shared with the client.

mod app;
mod audit;
pub mod auth;
mod config;
pub mod devices;
pub mod logging;
mod mcp;
pub mod network;
pub mod sim;
mod state;
mod transport;

pub use app::run;
pub use config::{Command, Config, ConfigError, DemoBackend};
pub use mcp::{SensitivePolicy, ZwaveServer};
pub use network::{Backoff, MqttSettings, Network, NetworkError};
