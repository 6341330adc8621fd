//! Sessions (the 2025-11-25 lifecycle): at most `--http-max-sessions` are alive; one more is
//! refused with 503 and `Retry-After`, one by one, all at once, or naming another revision in
//! its header, while the sessions open and stateless requests go on being served. Sessions idle for `--http-session-idle` end, and
//! their places are taken again.

use std::time::Duration;

use serde_json::json;

use crate::harness::{Mcp, Reply, TOKEN, TokenFile, said, serve_demo};

fn full(count: usize) -> String {
    format!(
        "{count} MCP sessions are open, the most this server keeps (--http-max-sessions): try again when one has ended or expired"
    )
}

/// Asserts `reply` is the refusal of a new session when `count` are open.
fn assert_full(reply: &Reply, count: usize, case: &str) {
    assert_eq!(reply.status, 503, "{case}: {reply:?}");
    assert_eq!(reply.header("retry-after"), "30", "{case}");
    assert_eq!(said(&reply.body), full(count), "{case}");
    assert_eq!(reply.header("mcp-session-id"), "", "{case}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sessions_beyond_the_cap_get_503_with_retry_after() {
    let token = TokenFile::new(TOKEN);
    let server = serve_demo(&[
        "--http-token-file",
        &token.path(),
        "--http-max-sessions",
        "20",
    ])
    .await;
    let client = Mcp::new(&server.url, Some(TOKEN));
    // One session used, nineteen opened and never used.
    let used = client.open(json!({})).await;
    let mut idle = Vec::new();
    for _ in 1..20 {
        let reply = client.initialize(json!({})).await;
        assert_eq!(reply.status, 200, "{reply:?}");
        idle.push(reply.header("mcp-session-id").to_owned());
    }
    assert_full(&client.initialize(json!({})).await, 20, "one more");
    // Another revision named in the header is still an initialize that opens a session: it
    // is refused as full too (it was failed with a 500 by the session manager).
    let other_revision = client
        .post(
            None,
            &json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
                "protocolVersion": "2026-07-28", "capabilities": {},
                "clientInfo": {"name": "hostile", "version": "1"}}}),
        )
        .header("mcp-protocol-version", "2026-07-28");
    assert_full(
        &client.send(other_revision).await,
        20,
        "initialize naming 2026-07-28",
    );

    // What is open goes on: the used session, and stateless requests, which hold no place.
    let status = client
        .call(
            &used,
            2,
            "get_device_status",
            json!({"deviceName": "Switch One"}),
        )
        .await;
    assert!(!status.tool_text().0, "{status:?}");
    let discovered = client
        .send(client.stateless(1, "server/discover", json!({})))
        .await;
    assert_eq!(discovered.status, 200, "{discovered:?}");

    // Places freed are taken again, all at once: as many succeed as were freed, the rest are
    // refused as full, not failed.
    for session in idle.drain(..5) {
        let ended = client
            .send(client.request(reqwest::Method::DELETE, Some(&session)))
            .await;
        assert_eq!(ended.status, 204, "{ended:?}");
    }
    let burst: Vec<Reply> =
        futures_util::future::join_all((0..15).map(|_| client.initialize(json!({})))).await;
    let mut statuses: Vec<u16> = burst.iter().map(|reply| reply.status).collect();
    statuses.sort_unstable();
    assert_eq!(
        statuses,
        [[200; 5].as_slice(), &[503; 10]].concat(),
        "{burst:?}"
    );
    for reply in burst.iter().filter(|reply| reply.status == 503) {
        assert_full(reply, 20, "burst");
    }
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn idle_sessions_expire_and_their_places_are_taken_again() {
    let token = TokenFile::new(TOKEN);
    let server = serve_demo(&[
        "--http-token-file",
        &token.path(),
        "--http-max-sessions",
        "3",
        "--http-session-idle",
        "1s",
    ])
    .await;
    let client = Mcp::new(&server.url, Some(TOKEN));
    let first = client.open(json!({})).await;
    for _ in 1..3 {
        assert_eq!(client.initialize(json!({})).await.status, 200);
    }
    assert_full(&client.initialize(json!({})).await, 3, "a fourth");
    // The idle ones end: a new one is let in, within a bound.
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    let reopened = loop {
        let reply = client.initialize(json!({})).await;
        if reply.status == 200 {
            break reply;
        }
        assert_full(&reply, 3, "while waiting");
        assert!(
            tokio::time::Instant::now() < deadline,
            "no session expired within 20 s of --http-session-idle 1s"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    assert_ne!(reopened.header("mcp-session-id"), first);
    // The expired session is gone: its id is answered 404, and it does nothing.
    let stale = client
        .call(
            &first,
            2,
            "get_device_status",
            json!({"deviceName": "Switch One"}),
        )
        .await;
    assert_eq!(
        (stale.status, stale.body.as_str()),
        (404, "Not Found: Session not found")
    );
    server.stop().await;
}
