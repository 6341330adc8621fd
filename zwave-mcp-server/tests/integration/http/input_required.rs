//! The person's yes on MCP 2026-07-28 over Streamable HTTP, through the binary: stateless
//! requests, each its own POST with no session, so the state the question was sealed into is
//! all that ties the retried call to it. Only an accept with `confirm: true` on a fresh,
//! unaltered state of that same call unlocks; the simulated gateway's record of writes says so.

use std::time::Duration;

use serde_json::{Value, json};

use crate::harness::{GatewayHome, Mcp, Reply, TOKEN, TokenFile, serve_home};

/// The demo home's nodes (its lock is node 8) behind a simulated gateway that records writes.
async fn demo_home() -> GatewayHome {
    GatewayHome::with_nodes(zwave_mcp_server::sim::home::demo_home(
        zwave_mcp_server::network::now_ms(),
    ))
    .await
}

fn unlock() -> Value {
    json!({"name": "control_zwave_device",
        "arguments": {"deviceName": "Front Door Lock", "action": "unlock"}})
}

fn yes() -> Value {
    json!({"action": "accept", "content": {"confirm": true}})
}

/// `params` retried with `answer` (under the question's key) and `state`, when given.
fn retried(mut params: Value, answer: Option<Value>, state: Option<&str>) -> Value {
    if let Some(answer) = answer {
        params["inputResponses"] = json!({ "confirmation": answer });
    }
    if let Some(state) = state {
        params["requestState"] = json!(state);
    }
    params
}

/// A stateless `tools/call` from a client that can ask its user; its one message.
async fn call(client: &Mcp, params: Value) -> Value {
    let reply: Reply = client
        .send(client.stateless_with(
            7,
            "tools/call",
            params,
            json!({"elicitation": {"form": {}}}),
        ))
        .await;
    assert_eq!(reply.status, 200, "{reply:?}");
    let mut messages = reply.messages();
    assert_eq!(
        messages.len(),
        1,
        "one answer, no request to the client: {messages:?}"
    );
    messages.pop().unwrap()
}

/// The state of a new question about `params`.
async fn asked(client: &Mcp, params: Value) -> String {
    let answer = call(client, params).await;
    assert_eq!(answer["result"]["resultType"], "input_required", "{answer}");
    answer["result"]["requestState"]
        .as_str()
        .unwrap()
        .to_owned()
}

/// Asserts that `answer` refuses the unlock with `why`.
fn assert_refused(answer: &Value, why: &str) {
    assert_eq!(answer["result"]["isError"], true, "{answer}");
    assert_eq!(
        answer["result"]["content"][0]["text"],
        format!(
            "Unlocking \"Front Door Lock\" (node 8, Entrance) needs a person's yes, and {why}: nothing was sent."
        ),
        "{answer}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn over_http_at_2026_07_28_only_a_fresh_yes_to_the_same_call_unlocks() {
    let home = demo_home().await;
    let token = TokenFile::new(TOKEN);
    let server = serve_home(
        &home,
        &[
            "--http-token-file",
            &token.path(),
            "--allow-sensitive",
            "lock",
            "--sensitive-device",
            "name:Switch One",
        ],
    )
    .await;
    let client = Mcp::new(&server.url, Some(TOKEN));

    let question = call(&client, unlock()).await;
    let result = &question["result"];
    assert_eq!(result["resultType"], "input_required", "{question}");
    assert_eq!(
        result["inputRequests"]["confirmation"]["params"]["message"],
        "Unlock \"Front Door Lock\" (node 8, Entrance)? An AI agent asks for it (it opens the home)."
    );
    assert_eq!(
        result["inputRequests"]["confirmation"]["params"]["requestedSchema"]["required"],
        json!(["confirm"])
    );
    assert!(home.writes().is_empty(), "asking writes nothing");

    for (answer, why) in [
        (json!({"action": "decline"}), "the user declined"),
        (
            json!({"action": "cancel"}),
            "the user dismissed the question",
        ),
        (
            json!({"action": "accept", "content": {"confirm": false}}),
            "the user answered no",
        ),
    ] {
        let state = asked(&client, unlock()).await;
        assert_refused(
            &call(&client, retried(unlock(), Some(answer), Some(&state))).await,
            why,
        );
    }
    let state = asked(&client, unlock()).await;
    assert_refused(
        &call(&client, retried(unlock(), None, Some(&state))).await,
        "the retried call carried no answer to the question",
    );
    let state = asked(&client, unlock()).await;
    let mut tampered = state.into_bytes();
    let middle = tampered.len() / 2;
    tampered[middle] = if tampered[middle] == b'A' { b'B' } else { b'A' };
    let tampered = String::from_utf8(tampered).unwrap();
    // Not the person's answer: the request is invalid (-32602), a JSON-RPC error.
    let rejected = call(&client, retried(unlock(), Some(yes()), Some(&tampered))).await;
    assert_eq!(rejected["error"]["code"], -32602, "{rejected}");
    assert_eq!(
        rejected["error"]["message"],
        "Unlocking \"Front Door Lock\" (node 8, Entrance) needs a person's yes, and the request state sent back does not verify (it was altered, or sealed by another server process: a replica, or this server before a restart; call again without it to be asked again): nothing was sent.",
        "{rejected}"
    );
    // The state of the question about another device, answered on a call that unlocks.
    let switch = json!({"name": "control_zwave_device",
        "arguments": {"deviceName": "Switch One", "action": "on"}});
    let other = asked(&client, switch).await;
    assert_refused(
        &call(&client, retried(unlock(), Some(yes()), Some(&other))).await,
        "the answer was given to another call (another device, action or arguments, or the device was renamed or moved since)",
    );
    assert!(home.writes().is_empty(), "{:?}", home.writes());

    let state = asked(&client, unlock()).await;
    let unlocked = call(&client, retried(unlock(), Some(yes()), Some(&state))).await;
    assert_eq!(unlocked["result"]["isError"], false, "{unlocked}");
    let written: Vec<String> = home.writes().into_iter().map(|(id, _)| id).collect();
    assert_eq!(written, ["8-98-0-targetMode"]);
    assert_refused(
        &call(&client, retried(unlock(), Some(yes()), Some(&state))).await,
        "that answer was used already: one yes allows one command (call again without it to be asked again)",
    );
    assert_eq!(home.writes().len(), 1, "a replayed yes writes nothing");
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn over_http_at_2026_07_28_a_yes_after_the_ask_timeout_sends_nothing() {
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
            "5ms",
        ],
    )
    .await;
    let client = Mcp::new(&server.url, Some(TOKEN));
    let state = asked(&client, unlock()).await;
    // Waits on the clock, bounded: the question's time runs out.
    let lapsed = std::time::Instant::now() + Duration::from_millis(7);
    while std::time::Instant::now() < lapsed {
        tokio::task::yield_now().await;
    }
    assert_refused(
        &call(&client, retried(unlock(), Some(yes()), Some(&state))).await,
        "nobody answered within 5ms",
    );
    assert!(home.writes().is_empty(), "{:?}", home.writes());
    server.stop().await;
}

/// A stateless `tools/call` from a client that names itself `name` and can ask its user;
/// its one message.
async fn call_as(client: &Mcp, name: &str, params: Value) -> Value {
    let mut params = params;
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {"elicitation": {"form": {}}},
        "io.modelcontextprotocol/clientInfo": {"name": name, "version": "1"}});
    let body = json!({"jsonrpc": "2.0", "id": 9, "method": "tools/call", "params": params});
    let reply = client
        .send(
            client
                .post(None, &body)
                .header("mcp-protocol-version", "2026-07-28")
                .header("mcp-method", "tools/call")
                .header("mcp-name", "control_zwave_device"),
        )
        .await;
    assert_eq!(reply.status, 200, "{reply:?}");
    reply.messages().pop().unwrap()
}

/// Found by the third hostile review: the record of spent answers (10,000 for the whole
/// process) was filled by one client's ask-then-decline pairs, and a person's yes was then
/// refused "too many answers came in the last while". Room is now taken by a question, per
/// client, and freed by any answer.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_flood_of_questions_from_one_client_leaves_another_clients_yes_answerable() {
    let home = demo_home().await;
    let token = TokenFile::new(TOKEN);
    let server = serve_home(
        &home,
        &[
            "--http-token-file",
            &token.path(),
            "--allow-sensitive",
            "lock",
        ],
    )
    .await;
    let client = Mcp::new(&server.url, Some(TOKEN));
    // Ask, then decline, many times over: no place stays taken.
    for _ in 0..300 {
        let state = call_as(&client, "flood", unlock()).await["result"]["requestState"]
            .as_str()
            .unwrap()
            .to_owned();
        let declined = retried(unlock(), Some(json!({"action": "decline"})), Some(&state));
        assert_refused(
            &call_as(&client, "flood", declined).await,
            "the user declined",
        );
    }
    // Ask and never answer: the client's share fills, and its next question is refused.
    for _ in 0..16 {
        let asked = call_as(&client, "flood", unlock()).await;
        assert_eq!(asked["result"]["resultType"], "input_required", "{asked}");
    }
    assert_refused(
        &call_as(&client, "flood", unlock()).await,
        "the client \"flood\" 1 has 16 questions open, the most one client may have: a new one is asked once one of those is answered or has lapsed (each within 60s)",
    );
    // Another client is asked, its person says yes: written once; the same yes again, never.
    let state = call_as(&client, "person", unlock()).await["result"]["requestState"]
        .as_str()
        .unwrap()
        .to_owned();
    let yes = retried(unlock(), Some(yes()), Some(&state));
    let done = call_as(&client, "person", yes.clone()).await;
    assert_eq!(done["result"]["isError"], false, "{done}");
    assert_eq!(home.writes().len(), 1, "{:?}", home.writes());
    assert_refused(
        &call_as(&client, "person", yes).await,
        "that answer was used already: one yes allows one command (call again without it to be asked again)",
    );
    assert_eq!(home.writes().len(), 1, "{:?}", home.writes());
    server.stop().await;
}
