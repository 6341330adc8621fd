//! Sensitive actions over HTTP. Without a token any local program is a client and could answer
//! its own question, so every sensitive action is refused, even allowed, even unasked, even
//! for a client that can ask its user, and nothing reaches the lock. With a token the person
//! is asked through MCP elicitation on the call's own SSE stream, and only a yes unlocks.

use std::time::Duration;

use serde_json::{Value, json};

use crate::harness::{GatewayHome, Mcp, TOKEN, TokenFile, serve_home};

const UNLOCK: &str = "control_zwave_device";

fn unlock() -> Value {
    json!({"deviceName": "Front Door Lock", "action": "unlock"})
}

/// The demo home's nodes (its lock is node 8) behind a simulated gateway that records writes.
async fn demo_home() -> GatewayHome {
    GatewayHome::with_nodes(zwave_mcp_server::sim::home::demo_home(
        zwave_mcp_server::network::now_ms(),
    ))
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_a_token_sensitive_actions_are_refused_and_nothing_is_sent() {
    let home = demo_home().await;
    for flags in [
        &["--allow-sensitive", "lock"][..],
        &[
            "--allow-sensitive",
            "lock",
            "--sensitive-without-confirmation",
        ],
    ] {
        let server = serve_home(&home, flags).await;
        let client = Mcp::new(&server.url, None);
        // A client that says it can ask its user is not asked: it may be the agent itself.
        let session = client.open(json!({"elicitation": {}})).await;
        let mut answer = client.call_streaming(&session, 2, UNLOCK, unlock()).await;
        let message = answer.next(Duration::from_secs(20)).await.unwrap();
        assert_eq!(message["id"], 2, "the answer, no question first: {message}");
        assert_eq!(message["result"]["isError"], true, "{flags:?}");
        assert_eq!(
            message["result"]["content"][0]["text"],
            "Unlocking \"Front Door Lock\" (node 8, Entrance) is a sensitive action (it opens the home), and this server is served over HTTP without a token: any program on its machine can be a client and answer its own question, so no sensitive action is carried out. Nothing was sent. The owner can set --http-token-file (or ZWAVE_MCP_HTTP_TOKEN) to allow them.",
            "{flags:?}"
        );
        assert!(home.writes().is_empty(), "{flags:?}: {:?}", home.writes());
        server.stop().await;
    }
    // A device the owner marked sensitive is refused the same way, whatever the action.
    let server = serve_home(&home, &["--sensitive-device", "name:Switch One"]).await;
    let client = Mcp::new(&server.url, None);
    let session = client.open(json!({"elicitation": {}})).await;
    let (error, text) = client
        .call(
            &session,
            2,
            UNLOCK,
            json!({"deviceName": "Switch One", "action": "on"}),
        )
        .await
        .tool_text();
    assert!(error);
    assert!(
        text.starts_with("Commanding \"Switch One\" (node 2, Kitchen) is a sensitive action (the owner marked this device sensitive), and this server is served over HTTP without a token"),
        "{text}"
    );
    // What is not sensitive is carried out.
    let (error, text) = client
        .call(
            &session,
            3,
            UNLOCK,
            json!({"deviceName": "Front Door Lock", "action": "lock"}),
        )
        .await
        .tool_text();
    assert!(!error, "{text}");
    let written: Vec<String> = home.writes().into_iter().map(|(id, _)| id).collect();
    assert_eq!(written, ["8-98-0-targetMode"], "only the lock's locking");
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_a_token_the_person_is_asked_over_http_and_only_yes_unlocks() {
    let home = demo_home().await;
    let token = TokenFile::new(TOKEN);
    let server = serve_home(
        &home,
        &[
            "--http-token-file",
            &token.path(),
            "--allow-sensitive",
            "lock",
            "--ask-timeout",
            "10s",
        ],
    )
    .await;
    let client = Mcp::new(&server.url, Some(TOKEN));

    // A client that cannot ask its user: refused.
    let session = client.open(json!({})).await;
    let (error, text) = client.call(&session, 2, UNLOCK, unlock()).await.tool_text();
    assert!(error);
    assert!(text.contains("this client cannot ask its user"), "{text}");

    // One that can: the question comes on the call's stream; the answer is POSTed.
    let session = client.open(json!({"elicitation": {}})).await;
    for (answer, unlocked) in [
        (json!({"action": "decline"}), false),
        (
            json!({"action": "accept", "content": {"confirm": false}}),
            false,
        ),
        (
            json!({"action": "accept", "content": {"confirm": true}}),
            true,
        ),
    ] {
        let mut stream = client.call_streaming(&session, 3, UNLOCK, unlock()).await;
        let question = stream.next(Duration::from_secs(20)).await.unwrap();
        assert_eq!(question["method"], "elicitation/create", "{question}");
        assert_eq!(
            question["params"]["message"],
            "Unlock \"Front Door Lock\" (node 8, Entrance)? An AI agent asks for it (it opens the home)."
        );
        let reply = json!({"jsonrpc": "2.0", "id": question["id"], "result": answer});
        let sent = client.send(client.post(Some(&session), &reply)).await;
        assert_eq!(sent.status, 202, "{sent:?}");
        let result = stream.next(Duration::from_secs(20)).await.unwrap();
        assert_eq!(result["id"], 3, "{result}");
        assert_eq!(result["result"]["isError"], !unlocked, "{answer}: {result}");
        let writes = home.writes();
        assert_eq!(writes.len(), usize::from(unlocked), "{answer}: {writes:?}");
    }
    assert_eq!(home.writes()[0].0, "8-98-0-targetMode");
    server.stop().await;
}

crate::harness::per_backend! {
/// Found by the third hostile review: with `--allow-maintenance`, any local process could
/// re-interview, health-check and rebuild the routes of the front door lock over HTTP without
/// a token, where every sensitive action is refused.
async fn without_a_token_upkeep_is_refused_and_nothing_is_sent(backend) {
    let home = TestHome::start(backend).await;
    let command = crate::harness::without_http_env(
        home.command(&["--http", "127.0.0.1:0", "--allow-maintenance"]),
    );
    let server = crate::harness::HttpServer::start(command).await;
    let client = Mcp::new(&server.url, None);
    let session = client.open(json!({"elicitation": {}})).await;
    for device in ["Front Door Lock", "Switch One"] {
        let reply = client
            .call(&session, 2, "maintain_zwave_device", json!({"deviceName": device, "operation": "check_health"}))
            .await;
        let (error, text) = reply.tool_text();
        assert!(error, "{text}");
        assert_eq!(text, "maintain_zwave_device is refused: this server is served over HTTP without a token, so any program on its machine can be a client, and upkeep keeps a device busy for minutes and changes its routes. Nothing was sent. The owner can set --http-token-file (or ZWAVE_MCP_HTTP_TOKEN) to allow it.");
    }
    assert!(
        !home.requests().iter().any(|request| request.contains("ealth")),
        "{:?}",
        home.requests()
    );
    server.stop().await;
}
}
