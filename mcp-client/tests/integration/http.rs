//! Remote servers over MCP Streamable HTTP, through the same connections and pool as stdio
//! ones: our `zwave-mcp-server --demo --http` with a bearer token from `headers` (`${VAR}`),
//! that server restarted under a live session, server-everything's `streamableHttp` mode, and
//! every failure a user can meet said with what to check.

use std::{path::Path, process::Command, time::Duration};

use mcp_client::{
    ClientError, ServerConfig, ServerConnection, ServerPool,
    connection::{RetryPolicy, config},
};
use serde_json::json;
use test_support::{daemon::Daemon, mosquitto::ScratchDir};

use crate::harness::{TOKEN, ZwaveHttp, args};

/// The one server of `entry` (an `mcpServers` entry), with `ZWAVE_MCP_TOKEN` = `token`.
pub(crate) fn server(entry: &serde_json::Value, token: &str) -> ServerConfig {
    named("home", entry, token)
}

/// [`server`], named `name`.
fn named(name: &str, entry: &serde_json::Value, token: &str) -> ServerConfig {
    let text = json!({"mcpServers": {name: entry}}).to_string();
    let lookup = |name: &str| (name == "ZWAVE_MCP_TOKEN").then(|| token.to_owned());
    let mut servers = config::parse(Path::new("servers.json"), &text, &lookup).unwrap();
    let mut server = servers.remove(0);
    server.init_timeout = Duration::from_secs(20);
    server.call_timeout = Duration::from_secs(20);
    server.retry = RetryPolicy {
        attempts: 1,
        base_delay: Duration::ZERO,
    };
    server
}

/// An entry as Claude Code writes one: `type`, `url`, and the token from the environment.
pub(crate) fn entry(url: &str) -> serde_json::Value {
    json!({"type": "http", "url": url,
           "headers": {"Authorization": "Bearer ${ZWAVE_MCP_TOKEN}"}})
}

/// The text of a tool result.
fn text_of(result: &rmcp::model::CallToolResult) -> String {
    result
        .content
        .iter()
        .filter_map(|content| content.as_text().map(|text| text.text.clone()))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The failure of a connection that was expected to fail, as a person reads it.
pub(crate) async fn connect_error(config: ServerConfig) -> String {
    let connection = ServerConnection::new(config);
    let err = connection.connect().await.unwrap_err();
    assert!(
        matches!(err, ClientError::ConnectFailed { attempts: 1, .. }),
        "{err}"
    );
    connection.shutdown().await;
    err.to_string()
}

#[tokio::test]
async fn an_http_server_in_the_pool_lists_its_tools_and_answers_a_call() {
    let zwave = ZwaveHttp::start("127.0.0.1:0");
    let pool = ServerPool::new(vec![server(&entry(&zwave.url), TOKEN)]);
    let report = pool.connect_all().await;
    assert!(report.failed.is_empty(), "{}", report.summary());
    let home = pool.get("home").unwrap();
    let info = home.session().await.unwrap();
    assert_eq!(info.pid, None);
    assert!(info.server.starts_with("zwave-mcp-server"), "{info:?}");
    let tools: Vec<String> = home
        .tools()
        .await
        .unwrap()
        .iter()
        .map(|tool| tool.name.to_string())
        .collect();
    assert!(tools.iter().any(|t| t == "get_device_status"), "{tools:?}");
    let result = home
        .call_tool(
            "get_device_status",
            args(json!({"deviceName": "Switch One"})),
        )
        .await
        .unwrap();
    assert_ne!(result.is_error, Some(true), "{result:?}");
    assert!(text_of(&result).contains("Switch One"), "{result:?}");
    assert!(home.process().await.is_none());
    pool.shutdown().await;
    // Shutting down ended the session on the server too (DELETE), and nothing is started.
    let err = home
        .call_tool(
            "get_device_status",
            args(json!({"deviceName": "Switch One"})),
        )
        .await
        .unwrap_err();
    assert!(matches!(err, ClientError::ShutDown { .. }), "{err}");
}

#[tokio::test]
async fn a_wrong_token_is_a_401_that_points_at_the_token_and_is_not_retried() {
    let zwave = ZwaveHttp::start("127.0.0.1:0");
    let mut config = server(&entry(&zwave.url), "not-the-token-at-all");
    config.retry.attempts = 3;
    let err = connect_error(config).await;
    assert_eq!(
        err,
        "MCP connection failed after 1 attempt: server `home`: initialize failed: the server refused our credentials (HTTP 401)\n  check: check the token in the entry's `headers` (\"Authorization\": \"Bearer ${TOKEN}\"): is the variable set, to this server's token?"
    );
    assert!(!err.contains("not-the-token-at-all"));
}

// Multi-threaded, as hosts run: the HTTP client's connections see the server go while this
// thread waits for its process.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_restarted_on_its_port_is_not_sent_the_call_again_and_the_next_runs_on_a_new_session()
 {
    let zwave = ZwaveHttp::start("127.0.0.1:0");
    let addr = zwave.addr();
    // Sessions are 2025-11-25's (from 2026-07-28 every request stands alone).
    let mut entry = entry(&zwave.url);
    entry["protocolVersion"] = json!("2025-11-25");
    let connection = ServerConnection::new(named("restarted", &entry, TOKEN));
    connection.connect().await.unwrap();
    let before = connection.generation();
    let status = connection
        .call_tool(
            "get_device_status",
            args(json!({"deviceName": "Switch One"})),
        )
        .await
        .unwrap();
    assert_ne!(status.is_error, Some(true), "{status:?}");

    // Killed (and reaped) under the live session, then started again on the same port: the
    // new server knows nothing of the old session.
    drop(zwave);
    let zwave = ZwaveHttp::start(&addr);
    let switch_on = || args(json!({"deviceName": "Switch One", "action": "on"}));
    let err = connection
        .call_tool("control_zwave_device", switch_on())
        .await
        .unwrap_err();
    // The server answered 404 to the old session, without running the call; the call is not
    // sent again by the transport.
    assert_eq!(
        err.to_string(),
        "MCP server `restarted` no longer knows this session (HTTP 404: it restarted, or ended the session); `tools/call control_zwave_device` was not run, and the next request starts a new session"
    );
    assert_eq!(zwave.count("value written"), 0);
    // The caller's next call runs on a new session (its tools listed again), once.
    let result = connection
        .call_tool("control_zwave_device", switch_on())
        .await
        .unwrap();
    assert_ne!(result.is_error, Some(true), "{result:?}");
    assert!(connection.generation() > before);
    assert_eq!(zwave.count_at_least("value written", 1), 1);
    let status = connection
        .call_tool(
            "get_device_status",
            args(json!({"deviceName": "Switch One"})),
        )
        .await
        .unwrap();
    assert!(text_of(&status).contains("on"), "{status:?}");
    assert_eq!(zwave.count("value written"), 1);
    connection.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn at_2026_07_28_there_is_no_session_to_lose_a_restarted_server_runs_the_next_call_once() {
    let zwave = ZwaveHttp::start("127.0.0.1:0");
    let addr = zwave.addr();
    let connection = ServerConnection::new(named("stateless", &entry(&zwave.url), TOKEN));
    let info = connection.connect().await.unwrap();
    assert_eq!(info.protocol_version, "2026-07-28");
    let before = connection.generation();
    drop(zwave);
    let zwave = ZwaveHttp::start(&addr);
    let result = connection
        .call_tool(
            "control_zwave_device",
            args(json!({"deviceName": "Switch One", "action": "on"})),
        )
        .await
        .unwrap();
    assert_ne!(result.is_error, Some(true), "{result:?}");
    assert_eq!(zwave.count_at_least("value written", 1), 1);
    assert_eq!(connection.generation(), before, "no new session was needed");
    connection.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_gone_mid_session_is_unreachable_and_the_call_is_not_sent_again() {
    let zwave = ZwaveHttp::start("127.0.0.1:0");
    let connection = ServerConnection::new(server(&entry(&zwave.url), TOKEN));
    connection.connect().await.unwrap();
    let port = zwave.addr();
    drop(zwave);
    let err = connection
        .call_tool(
            "get_device_status",
            args(json!({"deviceName": "Switch One"})),
        )
        .await
        .unwrap_err();
    assert!(matches!(err, ClientError::Unreachable { .. }), "{err}");
    assert_eq!(
        err.to_string(),
        format!(
            "MCP server unreachable during `tools/call get_device_status`: server `home`: connection refused by {port}\n  check: is the server running, and listening at that address and port?"
        )
    );
    assert!(err.is_retryable());
    connection.shutdown().await;
}

#[tokio::test]
async fn connection_refused_asks_whether_the_server_is_running() {
    let port = free_port();
    let err = connect_error(server(
        &entry(&format!("http://127.0.0.1:{port}/mcp")),
        TOKEN,
    ))
    .await;
    assert_eq!(
        err,
        format!(
            "MCP connection failed after 1 attempt: server `home`: initialize failed: connection refused by 127.0.0.1:{port}\n  check: is the server running, and listening at that address and port?"
        )
    );
}

#[tokio::test]
async fn https_to_a_plain_http_server_is_a_tls_failure_that_says_so() {
    let zwave = ZwaveHttp::start("127.0.0.1:0");
    let url = zwave.url.replace("http://", "https://");
    let err = connect_error(server(&entry(&url), TOKEN)).await;
    let at = zwave.addr();
    assert!(
        err.starts_with(&format!(
            "MCP connection failed after 1 attempt: server `home`: initialize failed: the TLS handshake with {at} failed: "
        )),
        "{err}"
    );
    assert!(
        err.ends_with("\n  check: does the server speak https at that port (a plain-HTTP server needs an http:// URL)? is its certificate valid for that name and issued by a CA this machine trusts?"),
        "{err}"
    );
}

/// A port nothing listens on (bound, then let go).
fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// A web server that is not an MCP server: `/forbidden` answers 403, `/page` an HTML page.
async fn not_mcp() -> String {
    use axum::{Router, http::StatusCode, response::Html, routing::post};
    let app = Router::new()
        .route(
            "/forbidden",
            post(|| async { (StatusCode::FORBIDDEN, "clients from here are not allowed") }),
        )
        .route(
            "/page",
            post(|| async { Html("<html><body>Welcome</body></html>") }),
        );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await });
    format!("http://{addr}")
}

#[tokio::test]
async fn a_403_and_an_answer_that_is_not_mcp_are_named() {
    let base = not_mcp().await;
    let forbidden = connect_error(server(&entry(&format!("{base}/forbidden")), TOKEN)).await;
    assert_eq!(
        forbidden,
        "MCP connection failed after 1 attempt: server `home`: initialize failed: the server forbids this client (HTTP 403): clients from here are not allowed\n  check: the token may lack the rights this needs, or the server may refuse the host name in `url`: its log says why"
    );
    let page = connect_error(server(&entry(&format!("{base}/page")), TOKEN)).await;
    assert_eq!(
        page,
        format!(
            "MCP connection failed after 1 attempt: server `home`: initialize failed: the answer is `text/html; charset=utf-8`, not MCP (application/json or text/event-stream)\n  check: is {base}/page the server's MCP Streamable HTTP endpoint? a web page or another API answers like this"
        )
    );
}

/// server-everything in its `streamableHttp` mode on a free port, and its base URL.
pub(crate) fn server_everything_http() -> (Daemon, String) {
    let (node, mut args) = test_support::peers::server_everything();
    args.pop();
    let port = free_port();
    let mut command = Command::new(node);
    command
        .args(&args)
        .arg("streamableHttp")
        .env("PORT", port.to_string());
    let daemon = Daemon::start(
        &command,
        ScratchDir::new(),
        port,
        "server-everything http",
        Duration::from_secs(60),
    );
    (daemon, format!("http://127.0.0.1:{port}"))
}

#[tokio::test]
async fn server_everything_over_streamable_http_lists_and_echoes_and_a_wrong_path_is_named() {
    let (_daemon, base) = server_everything_http();
    let everything = ServerConnection::new(server(
        &json!({"type": "streamableHttp", "url": format!("{base}/mcp")}),
        TOKEN,
    ));
    everything.connect().await.unwrap();
    let tools = everything.tools().await.unwrap();
    assert!(tools.iter().any(|tool| tool.name == "echo"), "{tools:?}");
    let echoed = everything
        .call_tool("echo", args(json!({"message": "over http"})))
        .await
        .unwrap();
    assert!(text_of(&echoed).contains("over http"), "{echoed:?}");
    everything.shutdown().await;

    let err = connect_error(server(&json!({"url": format!("{base}/nope")}), TOKEN)).await;
    assert_eq!(
        err,
        format!(
            "MCP connection failed after 1 attempt: server `home`: initialize failed: nothing is served at {base}/nope (HTTP 404)\n  check: wrong URL path? check `url` against the path the server serves MCP at (often /mcp)"
        )
    );
}

/// `mcp-client ARGS` with `ZWAVE_MCP_TOKEN` = `token` (unset when `None`): its exit code,
/// stdout and stderr.
pub(crate) fn client(args: &[&str], token: Option<&str>) -> (Option<i32>, String, String) {
    let mut command = Command::new(env!("CARGO_BIN_EXE_mcp-client"));
    command
        .args(args)
        .env("MCP_CLIENT_LOG", "off")
        .env_remove("ZWAVE_MCP_TOKEN");
    if let Some(token) = token {
        command.env("ZWAVE_MCP_TOKEN", token);
    }
    let output = test_support::child::output(&mut command, Duration::from_secs(60));
    (
        output.status.code(),
        String::from_utf8(output.stdout).unwrap(),
        String::from_utf8(output.stderr).unwrap(),
    )
}

#[test]
fn the_command_line_lists_and_calls_an_http_servers_tools() {
    let zwave = ZwaveHttp::start("127.0.0.1:0");
    let file = crate::harness::scratch_file("http-servers.json");
    std::fs::write(
        &file,
        json!({"mcpServers": {"home": entry(&zwave.url)}}).to_string(),
    )
    .unwrap();
    let file = file.to_str().unwrap();

    let (code, stdout, stderr) = client(&["servers", "--config", file], Some(TOKEN));
    assert_eq!(code, Some(0), "{stdout}{stderr}");
    assert!(
        stdout.starts_with("home: connected — zwave-mcp-server ")
            && stdout.contains(&format!(" at {}, answered in ", zwave.url)),
        "{stdout}"
    );

    let (code, stdout, stderr) = client(&["tools", "--config", file], Some(TOKEN));
    assert_eq!(code, Some(0), "{stdout}{stderr}");
    assert!(
        stdout
            .lines()
            .any(|line| line.starts_with("get_device_status  [mcp:home]")),
        "{stdout}"
    );

    let (code, stdout, stderr) = client(
        &[
            "call",
            "get_device_status",
            "--args",
            r#"{"device_name": "Switch One"}"#,
            "--config",
            file,
        ],
        Some(TOKEN),
    );
    assert_eq!(code, Some(0), "{stdout}{stderr}");
    let outcome: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(outcome["success"], true, "{outcome}");
    assert!(outcome.to_string().contains("Switch One"), "{outcome}");

    // Without the variable, the file is refused before anything is sent, naming the key.
    let (code, stdout, stderr) = client(&["servers", "--config", file], None);
    assert_eq!(code, Some(2), "{stdout}{stderr}");
    assert_eq!(
        stderr,
        format!(
            "mcp-client: {file:?}: server `home`: `headers.Authorization` refers to ${{ZWAVE_MCP_TOKEN}}, which is not set (set it, or write ${{ZWAVE_MCP_TOKEN:-default}})\n"
        )
    );
    assert_eq!(zwave.count("serving MCP"), 1);
}

#[test]
fn doctor_examines_a_remote_server_and_says_what_to_fix() {
    let zwave = ZwaveHttp::start("127.0.0.1:0");
    let header = "Authorization: Bearer ${ZWAVE_MCP_TOKEN}";
    let doctor = ["doctor", "--url", &zwave.url, "--header", header];
    let (code, stdout, stderr) = client(&doctor, Some(TOKEN));
    assert_eq!(code, Some(0), "{stdout}{stderr}");
    let lines: Vec<&str> = stdout.lines().collect();
    assert!(
        lines[0].starts_with("ok   start: server/discover answered in ")
            && lines[0].ends_with(" ms (zwave-mcp-server 0.1.0, protocol 2026-07-28)"),
        "{stdout}"
    );
    assert_eq!(
        lines[1],
        "ok   revisions: 2026-07-28 (server/discover) and, for older clients, 2025-11-25 (initialize)"
    );
    assert!(
        lines.contains(&"ok   capabilities: tools announced"),
        "{stdout}"
    );
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with("ok   ping: answered in ")),
        "{stdout}"
    );
    assert_eq!(lines.last(), Some(&"0 problems, 0 warnings"), "{stdout}");
    assert!(!stdout.contains(TOKEN) && !stderr.contains(TOKEN));

    // Without the variable, nothing is sent; with a wrong token, the 401 says what to check;
    // a header without its colon is refused without being quoted (it may be the token).
    let (code, stdout, _) = client(&doctor, None);
    assert_eq!(code, Some(1));
    assert_eq!(
        stdout,
        "FAIL start: --header `Authorization` refers to ${ZWAVE_MCP_TOKEN}, which is not set (set it, or write ${ZWAVE_MCP_TOKEN:-default})\n"
    );
    let (code, stdout, _) = client(&doctor, Some("a-wrong-token-of-some-length"));
    assert_eq!(code, Some(1));
    assert!(
        stdout.starts_with("FAIL start: MCP connection failed after 1 attempt: server `server`: initialize failed: the server refused our credentials (HTTP 401)\n  check: check the token"),
        "{stdout}"
    );
    let (code, stdout, _) = client(
        &[
            "doctor",
            "--url",
            &zwave.url,
            "--header",
            "Authorization Bearer s3cret-token",
        ],
        None,
    );
    assert_eq!(code, Some(1));
    assert_eq!(
        stdout,
        "FAIL start: a --header has no `:`: write it `Name: value`\n"
    );
}

/// An MCP server over HTTP whose `server/discover` answer names only a revision from the
/// future, and that answers `initialize` with `answered`; its URL and the methods it was
/// sent.
async fn from_the_future(
    answered: &'static str,
) -> (String, std::sync::Arc<std::sync::Mutex<Vec<String>>>) {
    let tools =
        json!([{"name": "echo", "description": "Echoes", "inputSchema": {"type": "object"}}]);
    let echoed = json!([{"type": "text", "text": "echoed"}]);
    answering_json(answered, tools, echoed).await
}

/// As [`from_the_future`], listing `tools` and answering each call with `content`, every
/// answer a plain `application/json` body.
async fn answering_json(
    answered: &'static str,
    tools: serde_json::Value,
    content: serde_json::Value,
) -> (String, std::sync::Arc<std::sync::Mutex<Vec<String>>>) {
    use axum::{Json, Router, http::StatusCode, response::IntoResponse, routing::post};
    let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let record = std::sync::Arc::clone(&seen);
    let app = Router::new().route(
        "/mcp",
        post(move |Json(message): Json<serde_json::Value>| {
            let record = std::sync::Arc::clone(&record);
            let (tools, content) = (tools.clone(), content.clone());
            async move {
                let method = message["method"].as_str().unwrap_or("?").to_owned();
                record.lock().unwrap().push(method.clone());
                let id = message["id"].clone();
                let result = match method.as_str() {
                    "server/discover" => json!({
                        "resultType": "complete", "supportedVersions": ["2099-01-01"],
                        "capabilities": {"tools": {}}, "ttlMs": 0, "cacheScope": "private",
                        "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "future", "version": "1"}}
                    }),
                    "initialize" => json!({
                        "protocolVersion": answered, "capabilities": {"tools": {}},
                        "serverInfo": {"name": "future", "version": "1"}
                    }),
                    "tools/list" => json!({"tools": tools}),
                    "tools/call" => json!({"content": content}),
                    _ => return StatusCode::ACCEPTED.into_response(),
                };
                Json(json!({"jsonrpc": "2.0", "id": id, "result": result})).into_response()
            }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await });
    (format!("http://{addr}/mcp"), seen)
}

/// Found by the third hostile review, on stdio; over HTTP too: a `server/discover` answer
/// naming only revisions this client does not know ended the attempt instead of falling back
/// to `initialize`.
#[tokio::test]
async fn over_http_a_discover_answer_of_unknown_revisions_falls_back_to_initialize() {
    let (url, seen) = from_the_future("2025-11-25").await;
    let future = ServerConnection::new(server(&json!({"type": "http", "url": url}), TOKEN));
    future.connect().await.unwrap();
    let tools = future.tools().await.unwrap();
    assert_eq!(tools[0].name, "echo");
    let answer = future
        .call_tool("echo", serde_json::Map::new())
        .await
        .unwrap();
    assert_eq!(text_of(&answer), "echoed");
    assert_eq!(
        seen.lock().unwrap().as_slice(),
        [
            "server/discover",
            "initialize",
            "notifications/initialized",
            "tools/list",
            "tools/call"
        ]
    );
    future.shutdown().await;
}

/// Found by the hostile review: a server answering `initialize` with a revision this client
/// does not speak was spoken to anyway.
#[tokio::test]
async fn over_http_an_initialize_answered_with_an_unknown_revision_is_left() {
    let (url, _seen) = from_the_future("2099-01-01").await;
    let err = connect_error(server(&json!({"type": "http", "url": url}), TOKEN)).await;
    assert_eq!(
        err,
        "MCP connection failed after 1 attempt: server `home`: initialize failed: the server answered with protocol revision \"2099-01-01\", which this client does not speak: disconnected"
    );
}

/// `{}` nested `levels` deep in `properties`: past what serde_json reads when over 127 (built
/// as a value, which serde_json writes at any depth).
fn nested(levels: usize) -> serde_json::Value {
    let mut value = json!({});
    for _ in 0..levels {
        value = json!({"properties": {"a": value}});
    }
    value
}

/// Found by the third hostile review, on stdio; over Streamable HTTP a plain JSON answer too
/// (rmcp parses it inside its client): one tool nested past serde_json's limit made the whole
/// `tools/list` unreadable. The list is asked for once more and read as on stdio; a call,
/// which may change something, is never sent twice.
#[tokio::test]
async fn over_http_a_plain_json_tool_nested_too_deep_is_left_out() {
    let tools = json!([
        {"name": "deep", "inputSchema": {"type": "object", "properties": {"x": nested(150)}}},
        {"name": "echo", "description": "Echoes", "inputSchema": {"type": "object"}}
    ]);
    let content = json!([{"type": "text", "text": nested(150)}]);
    let (url, seen) = answering_json("2025-11-25", tools, content).await;
    let home = ServerConnection::new(server(&json!({"type": "http", "url": url}), TOKEN));
    home.connect().await.unwrap();
    let tools = home.tools().await.unwrap();
    let names: Vec<_> = tools.iter().map(|tool| tool.name.to_string()).collect();
    assert_eq!(names, ["echo"]);
    let err = home
        .call_tool("echo", serde_json::Map::new())
        .await
        .unwrap_err()
        .to_string();
    assert!(err.contains("recursion limit exceeded"), "{err}");
    assert_eq!(
        seen.lock().unwrap().as_slice(),
        [
            "server/discover",
            "initialize",
            "notifications/initialized",
            "tools/list",
            "tools/list",
            "tools/call"
        ]
    );
    home.shutdown().await;
}

/// A `tools/list` that failed right after connecting left the server with no tools for the
/// whole session: it is asked again when the tools are next wanted.
#[tokio::test]
async fn a_first_tools_list_that_failed_is_asked_again() {
    use axum::{Json, Router, http::StatusCode, response::IntoResponse, routing::post};
    use std::sync::atomic::{AtomicUsize, Ordering};
    let lists = std::sync::Arc::new(AtomicUsize::new(0));
    let counted = std::sync::Arc::clone(&lists);
    let app = Router::new().route(
        "/mcp",
        post(move |Json(message): Json<serde_json::Value>| {
            let counted = std::sync::Arc::clone(&counted);
            async move {
                let id = message["id"].clone();
                let answer = match message["method"].as_str().unwrap_or("?") {
                    "initialize" => json!({"result": {
                        "protocolVersion": "2025-11-25", "capabilities": {"tools": {}},
                        "serverInfo": {"name": "warming", "version": "1"}
                    }}),
                    "tools/list" if counted.fetch_add(1, Ordering::SeqCst) == 0 => {
                        json!({"error": {"code": -32603, "message": "still warming up"}})
                    }
                    "tools/list" => json!({"result": {"tools": [
                        {"name": "echo", "inputSchema": {"type": "object"}}
                    ]}}),
                    "server/discover" => {
                        json!({"error": {"code": -32601, "message": "Method not found"}})
                    }
                    _ => return StatusCode::ACCEPTED.into_response(),
                };
                let mut answer = answer;
                answer["jsonrpc"] = json!("2.0");
                answer["id"] = id;
                Json(answer).into_response()
            }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await });
    let url = format!("http://{addr}/mcp");
    let warming = ServerConnection::new(server(&json!({"type": "http", "url": url}), TOKEN));
    warming.connect().await.unwrap();
    assert_eq!(lists.load(Ordering::SeqCst), 1);
    let tools = warming.tools().await.unwrap();
    assert_eq!(tools.len(), 1, "{tools:?}");
    assert_eq!(tools[0].name, "echo");
    assert_eq!(lists.load(Ordering::SeqCst), 2);
    warming.shutdown().await;
}

/// The list asked again (an answer nested too deep) carries the entry's token: a redirect to
/// another origin is not followed, and that origin receives nothing.
#[tokio::test]
async fn a_list_asked_again_follows_no_redirect_to_another_origin() {
    use axum::{
        Json, Router, http::StatusCode, response::IntoResponse, routing::any, routing::post,
    };
    use std::sync::atomic::{AtomicUsize, Ordering};
    let elsewhere = std::sync::Arc::new(AtomicUsize::new(0));
    let counted = std::sync::Arc::clone(&elsewhere);
    let other = Router::new().fallback(any(move || {
        counted.fetch_add(1, Ordering::SeqCst);
        async { StatusCode::OK }
    }));
    let other_listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let other_addr = other_listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(other_listener, other).await });
    let lists = std::sync::Arc::new(AtomicUsize::new(0));
    let seen = std::sync::Arc::clone(&lists);
    let app = Router::new().route(
        "/mcp",
        post(move |Json(message): Json<serde_json::Value>| {
            let seen = std::sync::Arc::clone(&seen);
            async move {
                let id = message["id"].clone();
                let result = match message["method"].as_str().unwrap_or("?") {
                    "initialize" => json!({
                        "protocolVersion": "2025-11-25", "capabilities": {"tools": {}},
                        "serverInfo": {"name": "moving", "version": "1"}
                    }),
                    "tools/list" if seen.fetch_add(1, Ordering::SeqCst) == 0 => json!({"tools": [
                        {"name": "deep", "inputSchema": {"type": "object", "properties": {"x": nested(150)}}}
                    ]}),
                    "tools/list" => {
                        return (
                            StatusCode::TEMPORARY_REDIRECT,
                            [("location", format!("http://{other_addr}/mcp"))],
                        )
                            .into_response();
                    }
                    "server/discover" => {
                        return Json(json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32601, "message": "Method not found"}})).into_response();
                    }
                    _ => return StatusCode::ACCEPTED.into_response(),
                };
                Json(json!({"jsonrpc": "2.0", "id": id, "result": result})).into_response()
            }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await });
    let url = format!("http://{addr}/mcp");
    let moving = ServerConnection::new(server(&json!({"type": "http", "url": url}), TOKEN));
    moving.connect().await.unwrap();
    // Asked twice (the second answered with the redirect), and nothing went elsewhere.
    assert_eq!(lists.load(Ordering::SeqCst), 2);
    assert_eq!(elsewhere.load(Ordering::SeqCst), 0);
    moving.shutdown().await;
}
