//! Integration tests of zwave-mcp-server over real MQTT connections (embedded broker plus the
//! simulated gateway), through a real MCP client, and of the real binary's stdout.
#![expect(
    clippy::unwrap_used,
    reason = "tests: an unexpected error should fail the test with its message"
)]
#![allow(
    clippy::too_many_lines,
    reason = "a test reads as one story; the 120-line limit holds in the sources"
)]

mod binary;
mod captures;
mod exposure;
mod harness;
mod health;
mod http;
mod input_required;
mod look_alike;
mod maintain;
mod misuse_and_failures;
mod mqtt_backend;
mod oauth;
mod properties;
mod real_broker;
mod resources;
mod restart;
mod schemas;
mod sensitive;
mod tools;
mod zwave_js_server;
