//! Integration tests of zwave-mcp-server over real MQTT connections (embedded broker plus the
//! simulated gateway), through a real MCP client, and of the real binary's stdout.
#![allow(clippy::unwrap_used, missing_docs)]

mod binary;
mod captures;
mod exposure;
mod gateway_client;
mod harness;
mod properties;
mod real_broker;
mod restart;
mod schemas;
mod tools;
