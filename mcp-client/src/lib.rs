//! Client toolkit for MCP agent hosts: connect to many MCP stdio servers and keep working
//! whatever they do.
//!
//! ```text
//! host ──▶ connection (config, retry, restart, timeouts) ──▶ transport (spawn, line reader,
//!          stderr tail, shutdown) ──stdin/stdout──▶ MCP server
//! ```
//!
//! # Layout
//! - [`cli`]: the `mcp-client` command line (`servers`, `doctor`).
//! - [`llm`]: provider wire formats for tool definitions and tool results.
//! - [`tools`]: the servers' tools for models: safe unique names, argument normalization.
//! - [`connection`]: `mcpServers` configuration, connect with retry, crash restart, requests
//!   with timeouts, clean shutdown.
//! - [`transport`]: our rmcp `Transport<RoleClient>` over a spawned child process.

pub mod agent;
pub mod cli;
pub mod connection;
pub mod history;
pub mod llm;
pub mod tools;
pub mod transport;

pub use connection::{
    ClientError, ServerConfig, ServerConnection,
    pool::{ConnectReport, ServerPool},
};
pub use tools::{McpTools, Normalizer};
pub use transport::ServerCommand;
