//! mcp-client → servers over Streamable HTTP: FastMCP (the Python SDK 1.x line,
//! `streamable-http`; server-everything's HTTP mode is in mcp-client's own tests). A call, a
//! question answered, the server killed and started again under a live session (the call that
//! met the new server is not run, the next
//! one is, once); and an answer's stream cut in the middle and resumed from its last event
//! (against our own server: see the test for why not server-everything).

use std::{
    process::Command,
    sync::{
        Arc, Mutex,
        atomic::{AtomicBool, Ordering},
    },
    time::Duration,
};

use mcp_client::{
    ClientError, ServerConfig, ServerConnection,
    connection::{ElicitAnswer, Elicitor, RetryPolicy},
    transport::HttpEndpoint,
};
use serde_json::json;
use test_support::{
    daemon::Daemon,
    fixture_path,
    mosquitto::ScratchDir,
    peers::{PYTHON_FASTMCP, python_venv},
    workspace_bin,
};
use tokio::{
    io::{AsyncReadExt as _, AsyncWriteExt as _},
    net::{TcpListener, TcpStream},
};

use crate::support::args;

/// A port nobody listens on now.
fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|listener| listener.local_addr())
        .map(|addr| addr.port())
        .unwrap()
}

/// The FastMCP fixture serving Streamable HTTP on `port`.
fn fastmcp(port: u16) -> Daemon {
    let mut command = Command::new(python_venv("mcp1", PYTHON_FASTMCP));
    command
        .arg(fixture_path("peers/fastmcp_server.py"))
        .args(["http", &port.to_string()]);
    Daemon::start(
        &command,
        ScratchDir::new(),
        port,
        "FastMCP over HTTP",
        Duration::from_secs(60),
    )
}

fn connection(url: &str, elicitor: Option<Elicitor>) -> ServerConnection {
    let mut config = ServerConfig::http(HttpEndpoint::new("peer", url));
    config.init_timeout = Duration::from_secs(30);
    config.call_timeout = Duration::from_secs(30);
    config.retry = RetryPolicy {
        attempts: 1,
        base_delay: Duration::ZERO,
    };
    ServerConnection::new(config).with_elicitor(elicitor)
}

fn text(result: &rmcp::model::CallToolResult) -> String {
    result.content[0].as_text().unwrap().text.clone()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fastmcp_over_http_answers_asks_and_survives_a_restart_without_a_repeated_call() {
    let port = free_port();
    let server = fastmcp(port);
    let url = format!("http://127.0.0.1:{port}/mcp");
    let asked = Arc::new(Mutex::new(Vec::new()));
    let seen = Arc::clone(&asked);
    let elicitor: Elicitor = Arc::new(move |question| {
        seen.lock().unwrap().push(question.message.clone());
        Box::pin(async { ElicitAnswer::Accept(json!({"colour": "green"})) })
    });
    let peer = connection(&url, Some(elicitor));
    // FastMCP 1.30 speaks up to 2025-11-25: server/discover is refused, initialize follows.
    let info = peer.connect().await.unwrap();
    assert_eq!(info.protocol_version, "2025-11-25");
    assert!(info.server.starts_with("fastmcp-peer "), "{}", info.server);
    let sum = peer.call_tool("add", args(json!({"a": 2, "b": 40}))).await;
    assert_eq!(text(&sum.unwrap()), "42");
    let liked = peer.call_tool("favourite", args(json!({}))).await.unwrap();
    assert_eq!(text(&liked), "you like green");
    assert_eq!(*asked.lock().unwrap(), ["Which colour do you like?"]);
    assert_eq!(
        text(&peer.call_tool("count", args(json!({}))).await.unwrap()),
        "1"
    );

    // Killed and started again on its port: the new process knows nothing of the session.
    drop(server);
    let _server = fastmcp(port);
    let err = peer.call_tool("count", args(json!({}))).await.unwrap_err();
    assert!(matches!(err, ClientError::SessionExpired { .. }), "{err}");
    // The next call starts a new session and runs, once: the new process counts 1, so the
    // call the old session carried never ran there.
    assert_eq!(
        text(&peer.call_tool("count", args(json!({}))).await.unwrap()),
        "1"
    );
    peer.shutdown().await;
}

/// zwave-mcp-server's demo home over HTTP, answering a switch once the device confirmed it
/// (about a second: long enough to cut the answer's stream before it); its port.
fn zwave_http() -> (Daemon, u16) {
    let mut command = Command::new(workspace_bin("zwave-mcp-server"));
    command.args(["--demo", "--http", "127.0.0.1:0", "--confirm-timeout", "3s"]);
    let daemon = Daemon::start_until_logged(
        &command,
        ScratchDir::new(),
        "serving MCP over Streamable HTTP",
        "zwave-mcp-server over HTTP",
        Duration::from_secs(60),
    );
    let port = daemon
        .log()
        .split("url=http://127.0.0.1:")
        .nth(1)
        .and_then(|rest| rest.split('/').next()?.parse().ok())
        .unwrap_or_else(|| panic!("no url= in its log:\n{}", daemon.log()));
    (daemon, port)
}

/// A loopback proxy to `upstream` that cuts the first answer to a `tools/call` as soon as its
/// first SSE event has passed (both sockets closed); `cut` says whether it did.
async fn cutting_proxy(upstream: u16, cut: Arc<AtomicBool>) -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    tokio::spawn(async move {
        while let Ok((client, _)) = listener.accept().await {
            let cut = Arc::clone(&cut);
            tokio::spawn(relay(client, upstream, cut));
        }
    });
    port
}

/// Relays one connection; a `tools/call` answer is cut after its first event, once.
async fn relay(client: TcpStream, upstream: u16, cut: Arc<AtomicBool>) {
    let Ok(server) = TcpStream::connect(("127.0.0.1", upstream)).await else {
        return;
    };
    let (mut client_in, mut client_out) = client.into_split();
    let (mut server_in, mut server_out) = server.into_split();
    let calling = Arc::new(AtomicBool::new(false));
    let sending = Arc::clone(&calling);
    let requests = tokio::spawn(async move {
        let mut buffer = vec![0; 64 * 1024];
        while let Ok(n @ 1..) = client_in.read(&mut buffer).await {
            let chunk = &buffer[..n];
            if String::from_utf8_lossy(chunk).contains("\"method\":\"tools/call\"") {
                sending.store(true, Ordering::Release);
            }
            if server_out.write_all(chunk).await.is_err() {
                break;
            }
        }
    });
    let mut buffer = vec![0; 64 * 1024];
    let mut answer = Vec::new();
    while let Ok(n @ 1..) = server_in.read(&mut buffer).await {
        let chunk = &buffer[..n];
        if calling.load(Ordering::Acquire) && !cut.load(Ordering::Acquire) {
            answer.extend_from_slice(chunk);
            let text = String::from_utf8_lossy(&answer);
            // The headers, then one whole event: pass exactly that much and hang up.
            if let Some((_, body)) = text.split_once("\r\n\r\n")
                && let Some(end) = body.find("\n\n")
            {
                let keep = text.len() - body.len() + end + 2;
                let _ = client_out.write_all(&answer[..keep]).await;
                cut.store(true, Ordering::Release);
                requests.abort();
                return;
            }
            continue;
        }
        if client_out.write_all(chunk).await.is_err() {
            break;
        }
    }
    requests.abort();
}

// Resuming is the 2025-11-25 session's: a stream of a session can be asked for again from
// its last event (`Last-Event-ID`). server-everything 2026.8.31 cannot be the peer here: its
// SDK drops what a request sends once that request's connection is gone, so a cut answer
// never comes (seen with curl: the GET with `Last-Event-ID` stays silent).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_answer_cut_mid_stream_is_resumed_from_its_last_event_and_the_call_runs_once() {
    let (server, port) = zwave_http();
    let cut = Arc::new(AtomicBool::new(false));
    let proxy = cutting_proxy(port, Arc::clone(&cut)).await;
    let mut config = ServerConfig::http(HttpEndpoint::new(
        "peer",
        format!("http://127.0.0.1:{proxy}/mcp"),
    ));
    config.protocol_version = Some(rmcp::model::ProtocolVersion::V_2025_11_25);
    config.call_timeout = Duration::from_secs(30);
    let peer = ServerConnection::new(config);
    peer.connect().await.unwrap();
    let result = peer
        .call_tool(
            "control_zwave_device",
            args(json!({"deviceName": "Switch One", "action": "on"})),
        )
        .await
        .unwrap();
    assert!(cut.load(Ordering::Acquire), "the proxy never cut an answer");
    assert!(
        text(&result).starts_with("Switch One switched on; the device confirmed it"),
        "{result:?}"
    );
    // Written once: the answer came from the stream resumed, not from a call sent again.
    assert_eq!(
        server.log().matches("value written").count(),
        1,
        "{}",
        server.log()
    );
    peer.shutdown().await;
}
