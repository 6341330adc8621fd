//! Shared test plumbing: every way a test starts a home and talks to the server, with one
//! copy of each helper. It is not a test module: nothing here asserts a behaviour of its own.
//!
//! | module | what it owns |
//! |---|---|
//! | `home` | [`Home`]: broker, simulated gateway, gateway client and MCP server in this process, with an rmcp client attached |
//! | `gateway_home` | [`GatewayHome`]: a broker and a simulated Z-Wave JS UI that the real binary is pointed at, and its record of writes |
//! | `backends` | [`TestHome`]: the same simulated home behind either backend, and [`per_backend!`] |
//! | `http` | the binary serving Streamable HTTP ([`HttpServer`]), a client of it ([`Mcp`]) and raw TCP ([`Raw`]) |
//! | `oauth` | [`OAuthHome`]: the demo with the server as its own authorization server; [`Owner`]: a client and the owner's browser, step by step |
//! | `binary` | the real binary: [`command`], one-shot [`run`]s, a live [`Conversation`], [`Reaper`] |
//! | `session` | MCP sessions: the JSON-RPC lines sent and read back, tool calls through rmcp |
//! | `zwave_js_server` | the real zwave-js-server: another client of it, and waiting on a client's cache |

mod backends;
mod binary;
mod gateway_home;
mod home;
mod http;
mod oauth;
mod session;
mod tls;
mod zwave_js_server;

use std::time::Duration;

use serde_json::Value;

pub(crate) use backends::per_backend;
pub use backends::{Backend, TestHome};
pub use binary::{
    BIN, CALL_UNTIL_LIMIT, Conversation, Reaper, closed_port_url, command, feed_blocking, run,
    run_with_env,
};
pub use gateway_home::{GatewayHome, renamed, written_id};
pub use home::{Home, fast_backoff, serve, serve_exposed, serve_with, settings_for};
pub use http::{
    Events, HttpServer, Mcp, Raw, Reply, TOKEN, TokenFile, http_command, initialize, json_headers,
    raw_request, read_reply, said, serve_demo, serve_home, tool_call, without_http_env,
};
pub use oauth::{OAuthHome, Owner, VERIFIER, challenge_of, cookies_of, free_port};
pub use session::{
    answer, by_id, call, cancel, control, lines, messages, protocol_messages, session,
    session_listing_tools, text_of,
};
pub use test_support::fixture_text;
pub use tls::tls_acceptor;
pub use zwave_js_server::{cache_until, cached_value, listening, other_client};

/// A fixture parsed as JSON.
pub fn fixture_json(name: &str) -> Value {
    let text = fixture_text(name);
    serde_json::from_str(&text).unwrap_or_else(|err| panic!("fixture {name} is not JSON: {err}"))
}

/// Polls `check` every 20 ms until it holds, for at most `within`.
pub async fn eventually(within: Duration, mut check: impl FnMut() -> bool) -> bool {
    let deadline = tokio::time::Instant::now() + within;
    while tokio::time::Instant::now() < deadline {
        if check() {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    check()
}
