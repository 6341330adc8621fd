//! mcp-client against misbehaving fake servers (fixtures/fake-servers) and real servers.
#![expect(
    clippy::unwrap_used,
    reason = "tests: an unexpected error should fail the test with its message"
)]
#![allow(
    clippy::too_many_lines,
    reason = "a test reads as one story; the 120-line limit holds in the sources"
)]

mod agent;
mod agent_policies;
mod bench_cli;
mod chat_cli;
mod cli;
mod elicitation;
mod executor;
mod fake_provider;
mod formats;
mod harness;
mod history;
mod http;
mod http_hostile;
mod input_required;
mod library;
mod misbehaving;
#[cfg(feature = "oauth")]
mod oauth;
mod oauth_zwave;
mod offered;
mod pool;
mod properties;
mod real_servers;
mod scripted_http;
mod terminal;
mod watch;
