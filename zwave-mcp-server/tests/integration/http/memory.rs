//! What a client sends costs the server a bounded amount, measured as the binary's own peak
//! RSS (`VmHWM`): a body past 1 MiB is refused before it is read whole, a message is walked
//! before rmcp builds any tree of it (at most 10,000 values), and what a session or a listen
//! stream keeps of its client is refused past a few KiB. Found by the third hostile review:
//! one 4 MiB `[0,0,…]` in a tool call's arguments took the server from 12 to 412 MB; ten
//! sessions opened with one in `capabilities.experimental` held 726 MB.

use serde_json::{Value, json};
use test_support::child::peak_rss_kib;

use crate::harness::{HttpServer, Mcp, TOKEN, TokenFile, serve_demo};

const MIB: u64 = 1024;

/// The VmRSS of `pid`, in KiB: what it holds now.
fn rss_kib(pid: u32) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .unwrap()
        .lines()
        .find_map(|line| line.strip_prefix("VmRSS:"))
        .and_then(|rest| rest.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap()
}

/// A server with a token, warmed by one call.
async fn warm_server() -> (HttpServer, TokenFile) {
    let token = TokenFile::new(TOKEN);
    let server = serve_demo(&["--http-token-file", &token.path()]).await;
    let mcp = Mcp::new(&server.url, Some(TOKEN));
    let session = mcp.open(json!({})).await;
    let reply = mcp.call(&session, 1, "list_zwave_devices", json!({})).await;
    assert_eq!(reply.status, 200, "{reply:?}");
    (server, token)
}

/// A stateless `tools/call` whose arguments hold `x`.
fn call_with(mcp: &Mcp, id: u64, x: Value) -> reqwest::RequestBuilder {
    mcp.stateless(
        id,
        "tools/call",
        json!({"name": "get_device_status", "arguments": {"deviceName": "Switch One", "x": x}}),
    )
}

/// The largest `x` a body takes: 9,900 strings of 100 bytes (~1 MiB of JSON, under the
/// 10,000 values a message may hold).
fn largest_accepted() -> Value {
    Value::from(vec!["y".repeat(100); 9_900])
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_request_past_the_bounds_is_refused_unbuilt_and_the_largest_accepted_costs_little() {
    let (server, _token) = warm_server().await;
    let mcp = Mcp::new(&server.url, Some(TOKEN));
    let before = peak_rss_kib(server.pid());
    // The review's request: 4 MiB of zeros in the arguments. Refused on its length (the
    // server may answer and close before the client has written it all).
    let zeros = Value::from(vec![0; 2 * 1024 * 1024]);
    match call_with(&mcp, 2, zeros).send().await {
        Ok(reply) => assert_eq!(reply.status().as_u16(), 413, "{reply:?}"),
        Err(error) => assert!(error.is_request(), "{error:?}"),
    }
    // 0.5 MiB of zeros fits the body but not the values a message may hold: refused, named.
    let reply = mcp
        .send(call_with(&mcp, 3, Value::from(vec![0; 250_000])))
        .await;
    assert_eq!(reply.status, 400, "{reply:?}");
    assert_eq!(
        reply.messages()[0],
        json!({"jsonrpc":"2.0","id":3,"error":{"code":-32600,"message":"Invalid request: the message holds more than 10000 JSON values; nothing this server takes does: nothing was done"}})
    );
    // The largest accepted, and one long string: answered (the tool refuses the unknown
    // argument or reads the device; either way rmcp built the whole message).
    for (id, x) in [
        (4, largest_accepted()),
        (5, Value::from("z".repeat(1_000_000))),
    ] {
        let reply = mcp.send(call_with(&mcp, id, x)).await;
        assert_eq!(reply.status, 200, "{reply:?}");
    }
    let grown = peak_rss_kib(server.pid()) - before;
    eprintln!("one request at the bounds: peak RSS +{grown} KiB");
    assert!(grown <= 32 * MIB, "peak RSS grew by {grown} KiB");
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn twelve_of_the_largest_requests_at_once_cost_under_128_mib() {
    let (server, _token) = warm_server().await;
    let before = peak_rss_kib(server.pid());
    let calls = (0..12).map(|id| {
        let url = server.url.clone();
        tokio::spawn(async move {
            let mcp = Mcp::new(&url, Some(TOKEN));
            mcp.send(call_with(&mcp, id, largest_accepted()))
                .await
                .status
        })
    });
    for call in calls.collect::<Vec<_>>() {
        assert_eq!(call.await.unwrap(), 200);
    }
    let grown = peak_rss_kib(server.pid()) - before;
    eprintln!("12 requests at the bounds at once: peak RSS +{grown} KiB");
    assert!(grown <= 128 * MIB, "peak RSS grew by {grown} KiB");
    server.stop().await;
}

/// An `initialize` whose capabilities and client info are each the most a session keeps
/// (8 KiB of compact JSON).
fn largest_initialize() -> Value {
    json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {"experimental": {"p": {"q": "c".repeat(8192 - 31)}}},
        "clientInfo": {"name": "n".repeat(8192 - 25), "version": "1"}}})
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn what_sessions_and_listen_streams_keep_of_their_clients_is_bounded() {
    let (server, _token) = warm_server().await;
    let mcp = Mcp::new(&server.url, Some(TOKEN));
    // A byte more than a session keeps is refused, naming the part and its bound.
    let mut over = largest_initialize();
    over["params"]["capabilities"]["experimental"]["p"]["q"] = Value::from("c".repeat(8192 - 30));
    let reply = mcp.send(mcp.post(None, &over)).await;
    assert_eq!(reply.status, 400, "{reply:?}");
    assert_eq!(
        reply.messages()[0]["error"],
        json!({"code": -32602, "message": "Invalid params: `params.capabilities` takes at least 8193 bytes as JSON; this server keeps at most 8192 bytes of it: nothing was done"})
    );
    let (peak, held) = (peak_rss_kib(server.pid()), rss_kib(server.pid()));
    // 99 more sessions (the warm one is the 100th, the most kept), each the largest accepted.
    for _ in 0..99 {
        let reply = mcp.send(mcp.post(None, &largest_initialize())).await;
        assert_eq!(reply.status, 200, "{reply:?}");
    }
    let per_session = (rss_kib(server.pid()).saturating_sub(held)) / 99;
    // 64 listen streams, each with the largest `_meta` kept (16 KiB, the client's info and
    // capabilities of 2026-07-28 inside it), held open.
    let mut streams = Vec::new();
    for id in 0..64 {
        let mut body = listen_body(id);
        let size = serde_json::to_string(&body["params"]["_meta"])
            .unwrap()
            .len();
        body["params"]["_meta"]["pad"] = Value::from("m".repeat(16 * 1024 - size - 9));
        let stream = mcp
            .post(None, &body)
            .header("mcp-protocol-version", "2026-07-28")
            .header("mcp-method", "subscriptions/listen")
            .send()
            .await
            .unwrap();
        assert_eq!(stream.status().as_u16(), 200, "listen {id}: {stream:?}");
        streams.push(stream);
    }
    let grown = peak_rss_kib(server.pid()) - peak;
    eprintln!(
        "100 sessions at their largest and 64 listen streams: peak RSS +{grown} KiB; one session holds ~{per_session} KiB"
    );
    assert!(grown <= 64 * MIB, "peak RSS grew by {grown} KiB");
    drop(streams);
    server.stop().await;
}

/// A 2026-07-28 `subscriptions/listen` request as the harness sends one.
fn listen_body(id: u64) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "subscriptions/listen", "params": {
        "notifications": {"resourceSubscriptions": ["zwave://home"]},
        "_meta": {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {},
            "io.modelcontextprotocol/clientInfo": {"name": "hostile", "version": "1"}}}})
}

/// Found by the third hostile review, after the first fix: a body sent in one-byte chunks cost
/// some 40 MiB (each chunk was kept until the body was whole), and objects cost some 650
/// bytes each once built where their JSON takes 8: sessions whose capabilities were objects
/// held 95 MiB, and 64 calls of 5,000 objects at once 250 MiB.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn chunks_and_objects_cost_what_their_bytes_say() {
    let (server, _token) = warm_server().await;
    let before = peak_rss_kib(server.pid());
    // 1 MiB less a byte, a byte a chunk.
    let call = r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"list_zwave_devices","arguments":{"x":""#;
    let mut wire = format!(
        "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: application/json, text/event-stream\r\nContent-Type: application/json\r\nAuthorization: Bearer {TOKEN}\r\nMcp-Protocol-Version: 2025-11-25\r\nTransfer-Encoding: chunked\r\n\r\n"
    )
    .into_bytes();
    let text = std::iter::repeat_n(b'y', 1024 * 1024 - 200);
    for byte in call.bytes().chain(text).chain(*br#""}}}"#) {
        wire.extend_from_slice(b"1\r\n");
        wire.push(byte);
        wire.extend_from_slice(b"\r\n");
    }
    wire.extend_from_slice(b"0\r\n\r\n");
    let mut connection = crate::harness::Raw::connect(server.addr).await;
    connection.send(&wire).await.unwrap();
    let reply = connection.reply().await;
    // Read whole and handed to rmcp, which asks for a session: the body was all there.
    assert_eq!(
        (reply.status, reply.body.as_str()),
        (400, "Bad Request: Session ID is required"),
        "{reply:?}"
    );
    let grown = peak_rss_kib(server.pid()) - before;
    eprintln!("a body of one-byte chunks: peak RSS +{grown} KiB");
    assert!(grown <= 16 * MIB, "peak RSS grew by {grown} KiB");
    // Calls just under the objects a message may hold, 64 at once.
    let objects = Value::from(vec![json!({"b": 0}); 500]);
    let calls = (0..64).map(|id| {
        let (url, objects) = (server.url.clone(), objects.clone());
        tokio::spawn(async move {
            let mcp = Mcp::new(&url, Some(TOKEN));
            mcp.send(call_with(&mcp, id, objects)).await.status
        })
    });
    for call in calls.collect::<Vec<_>>() {
        assert_eq!(call.await.unwrap(), 200);
    }
    let grown = peak_rss_kib(server.pid()) - before;
    eprintln!("and 64 calls of 500 objects at once: peak RSS +{grown} KiB");
    assert!(grown <= 64 * MIB, "peak RSS grew by {grown} KiB");
    // 99 sessions whose capabilities hold the most objects kept.
    let mcp = Mcp::new(&server.url, Some(TOKEN));
    // What they hold, not a new peak: the calls above raised it already.
    let held = rss_kib(server.pid());
    let many = json!({"experimental": {"e": {"a": vec![json!({"b": 0}); 29]}}});
    for _ in 0..99 {
        let reply = mcp
            .send(mcp.post(None, &crate::harness::initialize(many.clone())))
            .await;
        assert_eq!(reply.status, 200, "{reply:?}");
    }
    let grown = rss_kib(server.pid()).saturating_sub(held);
    eprintln!("and 99 sessions of 32 objects' capabilities: RSS +{grown} KiB");
    assert!(grown <= 32 * MIB, "peak RSS grew by {grown} KiB");
    server.stop().await;
}
