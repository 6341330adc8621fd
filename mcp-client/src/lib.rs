//! Client toolkit for MCP agent hosts: connect to many MCP stdio servers and keep working
//! whatever they do.
//!
//! ```text
//! host ──▶ connection (config, retry, restart) ──▶ transport (spawn, line reader, stderr) ──▶ server
//! ```
//!
//! # Layout
//! - [`transport`]: our rmcp `Transport<RoleClient>` over a spawned child process.
#![allow(clippy::module_name_repetitions)]

pub mod transport;
