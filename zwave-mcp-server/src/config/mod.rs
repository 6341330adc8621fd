//! Command-line and environment configuration of the server (clap derive), parsed once in
//! `main`. Every flag can also be set through a `ZWAVE_MCP_*` environment variable, because MCP
//! hosts start servers with an `env` block rather than a shell.
//!
//! Laid out as ripgrep lays out its flags: the flags in groups (one file each, flattened into
//! [`Config`], each under its own `--help` heading), what is derived from them, their errors
//! and their parsers apart. Only the demo group knows the simulator.
//!
//! | module | owns |
//! |---|---|
//! | `backend` | [`BackendFlags`]: the MQTT broker or zwave-js-server, and how to reach it |
//! | `timeouts` | [`TimeoutFlags`]: how long to wait for the backend and for a device |
//! | `logging` | [`LoggingFlags`]: the log filter and the log directory |
//! | `demo` | [`DemoFlags`], [`DemoBackend`], [`Command`]: `--demo` and `simulate` |
//! | `exposure` | [`ExposureFlags`]: what the agent may see and switch |
//! | `http` | [`HttpFlags`]: Streamable HTTP for remote hosts, its token and bounds |
//! | `safety` | [`SafetyFlags`]: sensitive actions, sensitive devices, the thermostat band |
//! | `settings` | what the rest of the crate takes, derived from the flags (files read here) |
//! | `error` | [`ConfigError`]: a configuration that parsed but cannot work |
//! | `parse` | the production flags' value parsers, and `Band` (what `--thermostat-band` holds) |

mod backend;
mod demo;
mod error;
mod exposure;
mod http;
mod logging;
mod parse;
mod safety;
mod settings;
mod timeouts;

use clap::Parser;

pub use backend::BackendFlags;
pub use demo::{Command, DemoBackend, DemoFlags};
pub use error::ConfigError;
pub use exposure::ExposureFlags;
pub use http::HttpFlags;
pub use logging::LoggingFlags;
pub use safety::SafetyFlags;
pub use timeouts::TimeoutFlags;

/// Configuration of `zwave-mcp-server`, parsed once in `main`.
#[derive(Debug, Clone, Parser)]
#[command(
    name = "zwave-mcp-server",
    version,
    about = "MCP server (stdio, or Streamable HTTP with --http) that lists, reads and controls Z-Wave devices through Z-Wave JS (Z-Wave JS UI's MQTT gateway, or zwave-js-server)",
    long_about = "MCP server that lists, reads and controls Z-Wave devices through Z-Wave JS: \
                  Z-Wave JS UI's MQTT gateway (--mqtt-url), or zwave-js-server's WebSocket API \
                  (--zwave-js-url; Home Assistant's Z-Wave JS add-on).\n\nOn stdio (the default, for hosts that start it) stdout carries only newline-delimited JSON-RPC; --http serves remote hosts over MCP Streamable HTTP instead. Logs go to stderr \
                  (and optionally to a daily log file). Run with --demo to try it against a built-in \
                  simulated home."
)]
pub struct Config {
    /// What to run (default: the MCP server).
    #[command(subcommand)]
    pub command: Option<Command>,

    /// Where the home is, and how to reach it.
    #[command(flatten)]
    pub backend: BackendFlags,

    /// How long the server waits for the backend and for devices.
    #[command(flatten)]
    pub timeouts: TimeoutFlags,

    /// What is logged, and where besides stderr.
    #[command(flatten)]
    pub logging: LoggingFlags,

    /// The built-in simulated home.
    #[command(flatten)]
    pub demo: DemoFlags,

    /// What the agent may see and switch.
    #[command(flatten)]
    pub exposure: ExposureFlags,

    /// What the agent may do only with the owner's leave, and within which bounds.
    #[command(flatten)]
    pub safety: SafetyFlags,

    /// How remote MCP hosts reach the server (Streamable HTTP instead of stdio).
    #[command(flatten)]
    pub http: HttpFlags,
}
