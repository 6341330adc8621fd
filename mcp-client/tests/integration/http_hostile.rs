//! Remote servers that misbehave on purpose (issue 34; `scripted_http`): an SSE event that
//! never ends, a 1 GiB answer, a web page, redirect loops and redirects elsewhere, 401
//! forever, a token quoted back, silence. Each is bounded, said with what to check, hangs
//! nobody, and never shows the bearer token, through the library and the `mcp-client` binary.

use std::time::Duration;

use axum::http::StatusCode;
use mcp_client::{ClientError, ServerConfig, ServerConnection};
use serde_json::{Value, json};

use crate::{
    harness::{TOKEN, args},
    http::{connect_error, entry, server},
    scripted_http::{Echo, Hostile, Scripted, When},
};

/// The entry for `url` with the token from `${ZWAVE_MCP_TOKEN}`, plus `extra` keys.
fn config(url: &str, extra: &Value) -> ServerConfig {
    server(&with(entry(url), extra), TOKEN)
}

/// `entry` with the keys of `extra` set.
fn with(mut entry: Value, extra: &Value) -> Value {
    for (key, value) in extra.as_object().unwrap() {
        entry[key] = value.clone();
    }
    entry
}

/// `future`, which must end within 60 s: every bound under test is well below that.
async fn bounded<T>(future: impl Future<Output = T>) -> T {
    tokio::time::timeout(Duration::from_secs(60), future)
        .await
        .expect("hung: no outcome within 60 s")
}

/// Connects with `config`, then calls `hostile`: the call's error, which shows no token.
async fn call_error(config: ServerConfig) -> (ServerConnection, ClientError) {
    let connection = ServerConnection::new(config);
    bounded(connection.connect()).await.unwrap();
    let call = connection.call_tool("hostile", args(json!({})));
    let err = bounded(call).await.unwrap_err();
    assert!(!format!("{err} {err:?} {}", err.for_model()).contains(TOKEN));
    (connection, err)
}

/// `tools/call fine` answers: the connection is usable after what went wrong.
async fn fine_still_answers(connection: &ServerConnection) {
    let result = bounded(connection.call_tool("fine", args(json!({}))))
        .await
        .unwrap();
    assert_ne!(result.is_error, Some(true), "{result:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_sse_event_that_never_ends_is_cut_at_max_line_bytes() {
    let small = json!({"maxLineBytes": 65536});
    let mut scripted = Scripted::start(Hostile::EndlessEvent, When::Call).await;
    let (connection, err) = call_error(config(&scripted.url, &small)).await;
    assert_eq!(
        err.to_string(),
        "MCP server unreachable during `tools/call hostile`: server `home`: the server sent an SSE event over `maxLineBytes` (65536 bytes): the client stopped reading it\n  check: raise `maxLineBytes` in the entry if the server's messages are really this large"
    );
    let sent = scripted.body_dropped().await;
    assert!(
        sent < 16 << 20,
        "{sent} bytes sent before the client hung up"
    );
    fine_still_answers(&connection).await;
    connection.shutdown().await;

    let mut scripted = Scripted::start(Hostile::EndlessEvent, When::Initialize).await;
    let err = bounded(connect_error(config(&scripted.url, &small))).await;
    assert_eq!(
        err,
        "MCP connection failed after 1 attempt: server `home`: initialize failed: the server sent an SSE event over `maxLineBytes` (65536 bytes): the client stopped reading it\n  check: raise `maxLineBytes` in the entry if the server's messages are really this large"
    );
    assert!(scripted.body_dropped().await < 16 << 20);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_1_gib_json_answer_is_read_only_up_to_max_line_bytes() {
    // The default bound: 16 MiB.
    let mut scripted = Scripted::start(Hostile::HugeJson, When::Call).await;
    let (connection, err) = call_error(config(&scripted.url, &json!({}))).await;
    assert_eq!(
        err.to_string(),
        "MCP server unreachable during `tools/call hostile`: server `home`: the server sent an answer over `maxLineBytes` (16777216 bytes): the client stopped reading it\n  check: raise `maxLineBytes` in the entry if the server's messages are really this large"
    );
    let sent = scripted.body_dropped().await;
    assert!(
        sent < 64 << 20,
        "{sent} bytes sent before the client hung up"
    );
    fine_still_answers(&connection).await;
    connection.shutdown().await;

    // The entry's bound holds for JSON answers as for SSE events (it was rmcp's 16 MiB).
    let mut scripted = Scripted::start(Hostile::HugeJson, When::Initialize).await;
    let small = config(&scripted.url, &json!({"maxLineBytes": 65536}));
    let err = bounded(connect_error(small)).await;
    assert!(
        err.contains(
            "initialize failed: the server sent an answer over `maxLineBytes` (65536 bytes)"
        ),
        "{err}"
    );
    assert!(scripted.body_dropped().await < 16 << 20);
}

#[tokio::test]
async fn a_web_page_to_initialize_is_not_mcp() {
    let mut scripted = Scripted::start(Hostile::Html, When::Initialize).await;
    let mut config = config(&scripted.url, &json!({}));
    config.retry.attempts = 3;
    let err = bounded(connect_error_after(config, 1)).await;
    assert_eq!(
        err,
        format!(
            "MCP connection failed after 1 attempt: server `home`: initialize failed: the answer is `text/html; charset=utf-8`, not MCP (application/json or text/event-stream)\n  check: is {} the server's MCP Streamable HTTP endpoint? a web page or another API answers like this",
            scripted.url
        )
    );
    assert_eq!(scripted.requests(), ["server/discover", "initialize"]);
}

/// [`connect_error`] for a connection that must give up after `attempts` attempts.
async fn connect_error_after(config: ServerConfig, attempts: u32) -> String {
    let connection = ServerConnection::new(config);
    let err = connection.connect().await.unwrap_err();
    assert!(
        matches!(err, ClientError::ConnectFailed { attempts: made, .. } if made == attempts),
        "{err}"
    );
    connection.shutdown().await;
    err.to_string()
}

#[tokio::test]
async fn a_redirect_loop_stops_after_10_redirects_and_says_so() {
    let mut scripted = Scripted::start(Hostile::RedirectTo(String::new()), When::Initialize).await;
    let mut config = config(&scripted.url, &json!({}));
    config.retry.attempts = 3;
    let err = bounded(connect_error_after(config, 1)).await;
    let at = scripted
        .url
        .trim_start_matches("http://")
        .trim_end_matches("/mcp");
    assert_eq!(
        err,
        format!(
            "MCP connection failed after 1 attempt: server `home`: initialize failed: {at} redirected the request more than 10 times (a redirect loop?)\n  check: give in `url` the address the server serves MCP at itself (`curl -i` on `url` shows where it redirects)"
        )
    );
    // server/discover (refused: a 2025-06-18 server), then the initialize POST and reqwest's
    // GETs (a 302 turns a POST into a GET), 10 of them.
    let requests = scripted.requests();
    assert_eq!(requests.len(), 12, "{requests:?}");
}

#[tokio::test]
async fn a_redirect_to_another_server_is_not_followed_and_the_headers_stay_home() {
    let mut elsewhere = Scripted::start(Hostile::Html, When::Initialize).await;
    let mut scripted =
        Scripted::start(Hostile::RedirectTo(elsewhere.url.clone()), When::Initialize).await;
    // reqwest drops `Authorization` on such a redirect, but would send any other header.
    let key = json!({"headers": {"Authorization": "Bearer ${ZWAVE_MCP_TOKEN}",
                                  "X-Api-Key": "${ZWAVE_MCP_TOKEN}"}});
    let err = bounded(connect_error(config(&scripted.url, &key))).await;
    let at = scripted
        .url
        .trim_start_matches("http://")
        .trim_end_matches("/mcp");
    let origin = elsewhere.url.trim_end_matches("/mcp");
    assert_eq!(
        err,
        format!(
            "MCP connection failed after 1 attempt: server `home`: initialize failed: {at} redirects to another server, {origin}: not followed, so that the entry's `headers` go only where `url` says\n  check: if {origin} is where the MCP server is, write its address in `url`"
        )
    );
    assert_eq!(scripted.requests(), ["server/discover", "initialize"]);
    assert_eq!(elsewhere.requests(), Vec::<String>::new());
}

#[tokio::test]
async fn a_401_forever_says_to_check_the_token_and_is_tried_once() {
    for challenge in [true, false] {
        let mut scripted =
            Scripted::start(Hostile::Unauthorized { challenge }, When::Initialize).await;
        let mut config = config(&scripted.url, &json!({}));
        config.retry.attempts = 3;
        let err = bounded(connect_error_after(config, 1)).await;
        assert_eq!(
            err,
            "MCP connection failed after 1 attempt: server `home`: initialize failed: the server refused our credentials (HTTP 401)\n  check: check the token in the entry's `headers` (\"Authorization\": \"Bearer ${TOKEN}\"): is the variable set, to this server's token?",
            "challenge: {challenge}"
        );
        assert_eq!(
            scripted.requests(),
            ["server/discover", "initialize"],
            "challenge: {challenge}"
        );
    }
}

#[tokio::test]
async fn a_token_the_server_quotes_back_is_never_shown() {
    let at_call = [
        Echo::Text(StatusCode::BAD_REQUEST),
        Echo::JsonRpcError(StatusCode::BAD_REQUEST),
        Echo::JsonRpcError(StatusCode::OK),
    ];
    for echo in at_call {
        let scripted = Scripted::start(Hostile::Echo(echo), When::Call).await;
        let (connection, err) = call_error(config(&scripted.url, &json!({}))).await;
        assert!(
            err.to_string().contains("token [redacted] is not valid"),
            "{echo:?}: {err}"
        );
        connection.shutdown().await;
    }
    // In a result (the model would read it, the history keep it).
    let scripted = Scripted::start(Hostile::Echo(Echo::SseResult), When::Call).await;
    let connection = ServerConnection::new(config(&scripted.url, &json!({})));
    bounded(connection.connect()).await.unwrap();
    let result = bounded(connection.call_tool("hostile", args(json!({}))))
        .await
        .unwrap();
    let text = serde_json::to_string(&result).unwrap();
    assert!(text.contains("token [redacted] is not valid"), "{text}");
    assert!(!text.contains(TOKEN), "{text}");
    connection.shutdown().await;

    for status in [StatusCode::BAD_REQUEST, StatusCode::UNAUTHORIZED] {
        let scripted = Scripted::start(Hostile::Echo(Echo::Text(status)), When::Initialize).await;
        let connection = ServerConnection::new(config(&scripted.url, &json!({})));
        let err = bounded(connection.connect()).await.unwrap_err();
        let shown = format!("{err} {err:?} {}", err.for_model());
        assert!(!shown.contains(TOKEN), "{shown}");
        connection.shutdown().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_never_answers_is_timed_out_and_told_to_cancel() {
    // A socket that is accepted and never read: initialize's own timeout.
    let silent = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", silent.local_addr().unwrap());
    tokio::spawn(async move {
        let mut held = Vec::new();
        while let Ok((socket, _)) = silent.accept().await {
            held.push(socket);
        }
    });
    let mut config_silent = config(&url, &json!({}));
    config_silent.init_timeout = Duration::from_secs(1);
    let err = bounded(connect_error(config_silent)).await;
    assert_eq!(
        err,
        format!(
            "MCP connection failed after 1 attempt: server `home`: no answer to initialize within 1s\n  check: is the server at {url} overloaded, or a proxy holding the request? raise timeouts.initialize if it is just slow"
        )
    );

    // A call held open, and one whose SSE answer stalls after its first event: the call's
    // timeout, `notifications/cancelled`, and the session still serves.
    for hostile in [Hostile::Silent, Hostile::StallAfterFirstEvent] {
        let mut scripted = Scripted::start(hostile.clone(), When::Call).await;
        let mut config = config(&scripted.url, &json!({}));
        config.call_timeout = Duration::from_secs(1);
        let (connection, err) = call_error(config).await;
        assert_eq!(
            err.to_string(),
            "MCP server `home` did not answer `tools/call hostile` within 1s; the request was cancelled (see timeouts.call)",
            "{hostile:?}"
        );
        scripted.wait_for("notifications/cancelled").await;
        fine_still_answers(&connection).await;
        connection.shutdown().await;
    }
}

/// `mcp-client ARGS` logging at `log` with `file`'s servers, its home in a scratch folder:
/// exit code, stdout, stderr, and every file it left in its home, read whole.
async fn client(
    args: &[&str],
    log: &str,
    servers: &Value,
) -> (Option<i32>, String, String, String) {
    let file = crate::harness::scratch_file("hostile-servers.json");
    std::fs::write(&file, json!({"mcpServers": servers}).to_string()).unwrap();
    let home = crate::harness::scratch_file("hostile-home");
    std::fs::create_dir_all(&home).unwrap();
    let mut command = std::process::Command::new(env!("CARGO_BIN_EXE_mcp-client"));
    command
        .args(args)
        .arg("--config")
        .arg(&file)
        .env("MCP_CLIENT_LOG", log)
        .env("ZWAVE_MCP_TOKEN", TOKEN)
        .env("HOME", &home)
        .env("XDG_DATA_HOME", home.join("data"));
    // Blocking, off the runtime that serves the scripted server.
    let output = tokio::task::spawn_blocking(move || {
        test_support::child::output(&mut command, Duration::from_secs(60))
    })
    .await
    .unwrap();
    let mut stored = String::new();
    let mut folders = vec![home];
    while let Some(folder) = folders.pop() {
        for entry in std::fs::read_dir(folder).unwrap().flatten() {
            if entry.path().is_dir() {
                folders.push(entry.path());
            } else {
                stored.push_str(&String::from_utf8_lossy(
                    &std::fs::read(entry.path()).unwrap(),
                ));
            }
        }
    }
    (
        output.status.code(),
        String::from_utf8(output.stdout).unwrap(),
        String::from_utf8(output.stderr).unwrap(),
        stored,
    )
}

/// An entry of the binary's configuration file: the scripted server, tried once.
fn cli_entry(scripted: &Scripted, extra: &Value) -> Value {
    let entry = with(entry(&scripted.url), &json!({"retry": {"attempts": 1}}));
    json!({"home": with(entry, extra)})
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_command_line_never_shows_a_token_the_server_quotes_back() {
    let scripted = Scripted::start(
        Hostile::Echo(Echo::Text(StatusCode::BAD_REQUEST)),
        When::Call,
    )
    .await;
    for log in ["warn", "trace"] {
        let servers = cli_entry(&scripted, &json!({}));
        let (code, stdout, stderr, stored) = client(&["call", "hostile"], log, &servers).await;
        assert_eq!(code, Some(1), "{stdout}{stderr}");
        let outcome: Value = serde_json::from_str(&stdout).unwrap();
        // The outcome is what a model reads: the error without its hint.
        assert_eq!(
            outcome["error"],
            "MCP server unreachable during `tools/call hostile`: server `home`: unexpected answer: HTTP 400 Bad Request: token [redacted] is not valid"
        );
        for (what, text) in [
            ("stdout", &stdout),
            ("stderr", &stderr),
            ("a file", &stored),
        ] {
            assert!(
                !text.contains(TOKEN),
                "the token is in {what} at {log}:\n{text}"
            );
        }
    }
    // At initialize, where rmcp logs the failure itself (at error, shown by default).
    let scripted = Scripted::start(
        Hostile::Echo(Echo::Text(StatusCode::BAD_REQUEST)),
        When::Initialize,
    )
    .await;
    let servers = cli_entry(&scripted, &json!({}));
    let (code, stdout, stderr, stored) = client(&["tools"], "warn", &servers).await;
    // Its one server failed: `tools` says so with exit 1.
    assert_eq!(code, Some(1), "{stdout}{stderr}");
    assert!(stderr.contains("token [redacted] is not valid"), "{stderr}");
    for text in [&stdout, &stderr, &stored] {
        assert!(!text.contains(TOKEN), "{text}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_command_line_cuts_an_endless_sse_event_and_says_why() {
    let mut scripted = Scripted::start(Hostile::EndlessEvent, When::Call).await;
    let servers = cli_entry(&scripted, &json!({"maxLineBytes": 65536}));
    let (code, stdout, stderr, _) = client(&["call", "hostile"], "trace", &servers).await;
    assert_eq!(code, Some(1), "{stdout}{stderr}");
    let outcome: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(
        outcome["error"],
        "MCP server unreachable during `tools/call hostile`: server `home`: the server sent an SSE event over `maxLineBytes` (65536 bytes): the client stopped reading it"
    );
    assert!(scripted.body_dropped().await < 16 << 20);
    assert!(!format!("{stdout}{stderr}").contains(TOKEN));
}
