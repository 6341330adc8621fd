//! What else a client may send, and what each gets: the token checked on every request of a
//! kept-alive connection (pipelined requests included), sessions ended by DELETE and only with
//! the token, a GET stream that holds nothing up, 2026-07-28's stateless requests, HTTP/1.0,
//! other paths and methods, and headers too large to read.

use std::time::Duration;

use serde_json::json;

use crate::harness::{
    Mcp, Raw, TOKEN, TokenFile, initialize, json_headers, raw_request, said, serve_demo,
};

/// A `get_device_status` of Switch One.
fn status() -> serde_json::Value {
    json!({"deviceName": "Switch One"})
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_pipelined_request_on_one_connection_is_checked_for_the_token() {
    let token = TokenFile::new(TOKEN);
    let server = serve_demo(&["--http-token-file", &token.path()]).await;
    let body = initialize(json!({})).to_string();
    let with = json_headers(TOKEN);
    let with: Vec<(&str, &str)> = with
        .iter()
        .map(|(name, value)| (*name, value.as_str()))
        .collect();
    let without: Vec<(&str, &str)> = with
        .iter()
        .copied()
        .filter(|(name, _)| *name != "Authorization")
        .collect();
    let mut pipelined = raw_request("POST", &with, &body);
    pipelined.extend(raw_request("POST", &without, &body));
    pipelined.extend(raw_request("POST", &with, &body));
    let mut connection = Raw::connect(server.addr).await;
    connection.send(&pipelined).await.unwrap();
    let mut statuses = Vec::new();
    for _ in 0..3 {
        statuses.push(connection.reply().await.status);
    }
    assert_eq!(
        statuses,
        [200, 401, 200],
        "the token is asked of every request"
    );
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn delete_ends_a_session_only_with_the_token() {
    let token = TokenFile::new(TOKEN);
    let server = serve_demo(&["--http-token-file", &token.path()]).await;
    let owner = Mcp::new(&server.url, Some(TOKEN));
    let session = owner.open(json!({})).await;
    let intruder = Mcp::new(&server.url, Some("0123456789abcdef0123456789abcdef"));
    let refused = intruder
        .send(intruder.request(reqwest::Method::DELETE, Some(&session)))
        .await;
    assert_eq!(refused.status, 401);
    let reply = owner.call(&session, 2, "get_device_status", status()).await;
    assert!(!reply.tool_text().0, "the session survived: {reply:?}");
    let ended = owner
        .send(owner.request(reqwest::Method::DELETE, Some(&session)))
        .await;
    assert_eq!(ended.status, 204, "{ended:?}");
    let gone = owner.call(&session, 3, "get_device_status", status()).await;
    assert_eq!(
        (gone.status, gone.body.as_str()),
        (404, "Not Found: Session not found")
    );
    // An id that was never given out ends nothing: 404, as MCP says (it was 204).
    let unknown = owner
        .send(owner.request(reqwest::Method::DELETE, Some("not-a-session")))
        .await;
    assert_eq!(unknown.status, 404, "{unknown:?}");
    // The session ended above is no longer there either.
    let again = owner
        .send(owner.request(reqwest::Method::DELETE, Some(&session)))
        .await;
    assert_eq!(again.status, 404, "{again:?}");
    server.stop().await;
}

/// Reads `stream` to its end, at most 20 s; whether it ended.
async fn ends(mut stream: reqwest::Response) -> bool {
    tokio::time::timeout(Duration::from_secs(20), async {
        while let Ok(Some(_)) = stream.chunk().await {}
    })
    .await
    .is_ok()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn get_streams_left_open_hold_nothing_up_and_end_with_their_session() {
    let token = TokenFile::new(TOKEN);
    let server = serve_demo(&[
        "--http-token-file",
        &token.path(),
        "--http-session-idle",
        "3s",
    ])
    .await;
    let owner = Mcp::new(&server.url, Some(TOKEN));
    let get = |session: &str| owner.request(reqwest::Method::GET, Some(session)).send();

    // Ended by DELETE.
    let deleted = owner.open(json!({})).await;
    let stream = get(&deleted).await.unwrap();
    assert_eq!(stream.status().as_u16(), 200);
    assert_eq!(stream.headers()["content-type"], "text/event-stream");
    let ended = owner
        .send(owner.request(reqwest::Method::DELETE, Some(&deleted)))
        .await;
    assert_eq!(ended.status, 204);
    assert!(
        ends(stream).await,
        "the GET stream outlived its session's DELETE"
    );

    // Left open, twice (the second is an idle "shadow" stream): calls go on meanwhile, in
    // this session and another, and both streams end when the session idles out.
    let idle = owner.open(json!({})).await;
    let first = get(&idle).await.unwrap();
    let second = get(&idle).await.unwrap();
    assert_eq!(
        (first.status().as_u16(), second.status().as_u16()),
        (200, 200)
    );
    let reply = owner.call(&idle, 2, "get_device_status", status()).await;
    assert!(!reply.tool_text().0, "{reply:?}");
    let other = owner.open(json!({})).await;
    let reply = owner.call(&other, 2, "get_device_status", status()).await;
    assert!(!reply.tool_text().0, "{reply:?}");
    assert!(ends(first).await, "a GET stream kept its session alive");
    assert!(
        ends(second).await,
        "a shadow GET stream kept its session alive"
    );
    let gone = owner.call(&idle, 3, "get_device_status", status()).await;
    assert_eq!(gone.status, 404, "{gone:?}");
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stateless_requests_need_the_token_and_are_served_with_it() {
    let token = TokenFile::new(TOKEN);
    let server = serve_demo(&["--http-token-file", &token.path()]).await;
    let owner = Mcp::new(&server.url, Some(TOKEN));
    let discovered = owner
        .send(owner.stateless(1, "server/discover", json!({})))
        .await;
    assert_eq!(discovered.status, 200, "{discovered:?}");
    assert_eq!(
        discovered.messages()[0]["result"]["_meta"]["io.modelcontextprotocol/serverInfo"]["name"],
        "zwave-mcp-server",
        "{discovered:?}"
    );
    assert_eq!(discovered.header("mcp-session-id"), "", "no session");
    let call = json!({"name": "get_device_status", "arguments": status()});
    let reply = owner
        .send(owner.stateless(2, "tools/call", call.clone()))
        .await;
    let (error, text) = reply.tool_text();
    assert!(!error, "{text}");
    for intruder in [
        Mcp::new(&server.url, None),
        Mcp::new(&server.url, Some("0123456789abcdef0123456789abcdef")),
    ] {
        for request in [
            intruder.stateless(1, "server/discover", json!({})),
            intruder.stateless(2, "tools/call", call.clone()),
        ] {
            let reply = intruder.send(request).await;
            assert_eq!(reply.status, 401, "{reply:?}");
        }
    }
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn odd_requests_get_plain_refusals_and_the_server_serves_on() {
    let token = TokenFile::new(TOKEN);
    let server = serve_demo(&["--http-token-file", &token.path()]).await;
    let with = json_headers(TOKEN);
    let with: Vec<(&str, &str)> = with
        .iter()
        .map(|(name, value)| (*name, value.as_str()))
        .collect();
    let body = initialize(json!({})).to_string();

    // Other paths: 404 before the token is looked at.
    for path in [
        "/",
        "/mcp/",
        "/MCP",
        "/mcp/../admin",
        "/.well-known/oauth-authorization-server",
    ] {
        let mut connection = Raw::connect(server.addr).await;
        let request = String::from_utf8(raw_request("POST", &with, &body))
            .unwrap()
            .replacen("/mcp", path, 1);
        connection.send(request.as_bytes()).await.unwrap();
        let reply = connection.reply().await;
        assert_eq!(
            (reply.status, said(&reply.body).as_str()),
            (404, "nothing is served here: MCP is at /mcp"),
            "{path}"
        );
    }
    // Other methods.
    for method in ["PUT", "PATCH", "OPTIONS"] {
        let mut connection = Raw::connect(server.addr).await;
        connection
            .send(&raw_request(method, &with, &body))
            .await
            .unwrap();
        let reply = connection.reply().await;
        assert_eq!(reply.status, 405, "{method}: {reply:?}");
    }
    // HTTP/1.0: served, the answer ending with the connection.
    let mut connection = Raw::connect(server.addr).await;
    let request = String::from_utf8(raw_request("POST", &with, &body))
        .unwrap()
        .replacen("HTTP/1.1", "HTTP/1.0", 1);
    connection.send(request.as_bytes()).await.unwrap();
    let reply = connection.reply().await;
    assert_eq!(reply.status, 200, "{reply:?}");
    assert!(reply.body.contains("\"serverInfo\""), "{reply:?}");
    // Headers larger than hyper reads, in one header or in many: refused, connection closed.
    let huge = "a".repeat(1024 * 1024);
    let many: Vec<(String, String)> = (0..200).map(|i| (format!("X-H{i}"), "x".into())).collect();
    let many: Vec<(&str, &str)> = many
        .iter()
        .map(|(name, value)| (name.as_str(), value.as_str()))
        .collect();
    for (case, headers) in [
        ("one huge header", vec![("X-Huge", huge.as_str())]),
        ("200 headers", many),
    ] {
        let mut all = with.clone();
        all.extend(headers);
        let mut connection = Raw::connect(server.addr).await;
        let _ = connection.send(&raw_request("POST", &all, &body)).await;
        let reply = connection.reply().await;
        assert_eq!(reply.status, 431, "{case}: {reply:?}");
        assert!(
            connection.closed_within(Duration::from_secs(20)).await,
            "{case}"
        );
    }
    // Smuggling: a length and chunks both, a second request hidden after the chunked end.
    // One answer, then the connection is closed: the hidden request is never served.
    let mut connection = Raw::connect(server.addr).await;
    let mut smuggled = String::from_utf8(raw_request("POST", &with, ""))
        .unwrap()
        .replacen(
            "Content-Length: 0",
            "Content-Length: 4\r\nTransfer-Encoding: chunked",
            1,
        );
    smuggled.push_str("0\r\n\r\n");
    smuggled.push_str(&String::from_utf8(raw_request("DELETE", &with, "")).unwrap());
    connection.send(smuggled.as_bytes()).await.unwrap();
    let reply = connection.reply().await;
    assert_eq!(reply.header("connection"), Some("close"), "{reply:?}");
    let rest = connection.rest_until_closed(Duration::from_secs(20)).await;
    assert_eq!(
        rest.as_deref(),
        Some(&b""[..]),
        "a second answer, or the connection kept"
    );
    // Still serving.
    let owner = Mcp::new(&server.url, Some(TOKEN));
    let session = owner.open(json!({})).await;
    let reply = owner.call(&session, 2, "get_device_status", status()).await;
    assert!(!reply.tool_text().0, "{reply:?}");
    server.stop().await;
}
