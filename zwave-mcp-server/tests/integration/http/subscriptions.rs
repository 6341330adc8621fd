//! Subscriptions over Streamable HTTP: each 2025-11-25 session has its own (told on its GET
//! stream, never of another session's resources), and a 2026-07-28 `subscriptions/listen`
//! request is answered by a stream that is acknowledged first and then told of a change
//! another party made.

use std::time::Duration;

use serde_json::{Value, json};

use crate::harness::{GatewayHome, Mcp, serve_home};

/// The next JSON-RPC message on an SSE response that satisfies `wanted`, at most 20 s.
async fn next_message(
    response: &mut reqwest::Response,
    buffer: &mut String,
    wanted: impl Fn(&Value) -> bool,
) -> Value {
    let read = async {
        loop {
            while let Some(end) = buffer.find("\n\n") {
                let event: String = buffer.drain(..end + 2).collect();
                for line in event.lines() {
                    let Some(data) = line.strip_prefix("data:") else {
                        continue;
                    };
                    let Ok(message) = serde_json::from_str::<Value>(data.trim()) else {
                        continue;
                    };
                    if wanted(&message) {
                        return message;
                    }
                }
            }
            let chunk = response.chunk().await.unwrap().expect("the stream ended");
            buffer.push_str(std::str::from_utf8(&chunk).unwrap());
        }
    };
    tokio::time::timeout(Duration::from_secs(20), read)
        .await
        .expect("no such message within 20 s")
}

fn updated(message: &Value) -> bool {
    message["method"] == "notifications/resources/updated"
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_http_session_is_told_of_its_own_subscriptions_only() {
    let home = GatewayHome::renamed(&[]).await;
    let server = serve_home(&home, &[]).await;
    let mcp = Mcp::new(&server.url, None);
    let (a, b) = (mcp.open(json!({})).await, mcp.open(json!({})).await);
    for (session, uri) in [(&a, "zwave://devices/2"), (&b, "zwave://devices/3")] {
        let body = json!({"jsonrpc": "2.0", "id": 1, "method": "resources/subscribe", "params": {"uri": uri}});
        let reply = mcp.send(mcp.post(Some(session), &body)).await;
        assert_eq!(reply.messages()[0]["result"], json!({}), "{reply:?}");
    }
    let mut stream = mcp
        .request(reqwest::Method::GET, Some(&a))
        .header("mcp-protocol-version", "2025-11-25")
        .send()
        .await
        .unwrap();
    assert_eq!(stream.status().as_u16(), 200, "{stream:?}");

    // Session b's device changes first: session a is never told of it.
    home.sim.press(3, "38-0-currentValue", json!(40)).await;
    home.sim.press(2, "37-0-currentValue", json!(true)).await;
    let mut buffer = String::new();
    let update = next_message(&mut stream, &mut buffer, updated).await;
    assert_eq!(update["params"]["uri"], "zwave://devices/2", "{update}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stateless_listen_stream_is_acknowledged_then_told_of_a_change() {
    let home = GatewayHome::renamed(&[]).await;
    let server = serve_home(&home, &[]).await;
    let mcp = Mcp::new(&server.url, None);
    let read = mcp
        .send(
            mcp.stateless(1, "resources/read", json!({"uri": "zwave://devices/2"}))
                .header("mcp-name", "zwave://devices/2"),
        )
        .await;
    assert_eq!(read.status, 200, "{read:?}");
    let mut stream = mcp
        .stateless(
            2,
            "subscriptions/listen",
            json!({"notifications": {"resourceSubscriptions": ["zwave://devices/2"]}}),
        )
        .send()
        .await
        .unwrap();
    assert_eq!(stream.status().as_u16(), 200, "{stream:?}");
    let mut buffer = String::new();
    let ack = next_message(&mut stream, &mut buffer, |m| m.get("method").is_some()).await;
    assert_eq!(
        ack["method"], "notifications/subscriptions/acknowledged",
        "{ack}"
    );
    assert_eq!(
        ack["params"]["notifications"]["resourceSubscriptions"],
        json!(["zwave://devices/2"])
    );

    home.sim.press(2, "37-0-currentValue", json!(true)).await;
    let update = next_message(&mut stream, &mut buffer, updated).await;
    assert_eq!(update["params"]["uri"], "zwave://devices/2");
    assert_eq!(
        update["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"],
        2
    );
    let read = mcp
        .send(
            mcp.stateless(3, "resources/read", json!({"uri": "zwave://devices/2"}))
                .header("mcp-name", "zwave://devices/2"),
        )
        .await;
    let json: Value = serde_json::from_str(
        read.messages()[0]["result"]["contents"][0]["text"]
            .as_str()
            .unwrap(),
    )
    .unwrap();
    assert_eq!(json["on"], true, "{read:?}");
}

/// Found by the hostile review: every stateless request is a session of its own, so the bound
/// of listen streams per session never applied, and 512 unread streams held every connection
/// the listener keeps. The process keeps at most `MAX_LISTENS_IN_ALL` (64) and answers tool
/// calls beside them.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn listen_streams_are_bounded_over_the_whole_server_and_tool_calls_still_answered() {
    let home = GatewayHome::renamed(&[]).await;
    let server = serve_home(&home, &[]).await;
    let mcp = Mcp::new(&server.url, None);
    let listen = json!({"notifications": {"resourceSubscriptions": ["zwave://home"]}});
    let mut open = Vec::new();
    for id in 0..64 {
        let mut stream = mcp
            .stateless(id, "subscriptions/listen", listen.clone())
            .send()
            .await
            .unwrap();
        assert_eq!(stream.status().as_u16(), 200, "listen {id}: {stream:?}");
        let mut buffer = String::new();
        let ack = next_message(&mut stream, &mut buffer, |m| m.get("method").is_some()).await;
        assert_eq!(ack["method"], "notifications/subscriptions/acknowledged");
        open.push(stream);
    }
    let mut refused = mcp
        .stateless(64, "subscriptions/listen", listen)
        .send()
        .await
        .unwrap();
    let mut buffer = String::new();
    let error = next_message(&mut refused, &mut buffer, |m| m.get("error").is_some()).await;
    assert_eq!(
        error["error"]["message"],
        "64 subscriptions/listen streams are open on this server, the most it keeps: try again when one has ended",
        "{error}"
    );
    let listed = mcp
        .send(mcp.stateless(
            65,
            "tools/call",
            json!({"name": "list_zwave_devices", "arguments": {}}),
        ))
        .await;
    assert_eq!(listed.status, 200, "{listed:?}");
    assert!(
        listed.messages()[0]["result"]["content"][0]["text"]
            .as_str()
            .is_some_and(|text| text.contains("Switch One")),
        "{listed:?}"
    );
    drop(open);
}
