//! What the server logs of HTTP clients: never the token (with every level on, neither stderr
//! nor the log file holds the token, a wrong token sent, or any 8 characters of either,
//! however they were sent), and refused requests as one line per 10 s with their count, not a
//! line each that an anonymous flood would turn into a full disk.

use serde_json::json;

use crate::harness::{Mcp, TOKEN, TokenFile, serve_demo};

/// Every 8-character window of `secret`.
fn windows(secret: &str) -> Vec<&str> {
    (0..=secret.len() - 8)
        .map(|at| &secret[at..at + 8])
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_log_line_at_any_level_holds_a_token_right_or_wrong() {
    let token = TokenFile::new(TOKEN);
    let logs = token.dir().join("logs");
    let server = serve_demo(&[
        "--http-token-file",
        &token.path(),
        "--log-level",
        "trace",
        "--log-dir",
        logs.to_str().unwrap(),
    ])
    .await;
    let wrong = "Wr0ngT0kenWr0ngT0kenWr0ngT0ken99";
    let near = format!("{}0", &TOKEN[..TOKEN.len() - 1]);

    // The owner's session: a read, a write, and its end.
    let owner = Mcp::new(&server.url, Some(TOKEN));
    let session = owner.open(json!({"elicitation": {}})).await;
    for (id, tool, args) in [
        (2, "get_device_status", json!({"deviceName": "Switch One"})),
        (
            3,
            "control_zwave_device",
            json!({"deviceName": "Switch One", "action": "on"}),
        ),
    ] {
        assert_eq!(owner.call(&session, id, tool, args).await.status, 200);
    }
    // The right header with the token in the URL too: the request reaches rmcp and the tools.
    let url_too = Mcp::new(&format!("{}?token={TOKEN}", server.url), Some(TOKEN));
    let reply = url_too
        .call(&session, 4, "list_zwave_devices", json!({}))
        .await;
    assert_eq!(reply.status, 200, "{reply:?}");
    let ended = owner
        .send(owner.request(reqwest::Method::DELETE, Some(&session)))
        .await;
    assert_eq!(ended.status, 204);

    // Intruders.
    let url = &server.url;
    for intruder in [
        Mcp::new(url, Some(wrong)),
        Mcp::new(url, Some(&near)),
        Mcp::authorized(url, Some(&format!("Basic {TOKEN}"))),
        Mcp::authorized(url, Some(&format!("Basic {wrong}"))),
        Mcp::authorized(&format!("{url}?token={TOKEN}"), None),
        Mcp::authorized(&format!("{url}?access_token={wrong}"), None),
    ] {
        assert_eq!(intruder.initialize(json!({})).await.status, 401);
    }

    let output = server.stop().await;
    let stderr = String::from_utf8(output.stderr).unwrap();
    assert!(
        stderr.contains(" TRACE ") && stderr.contains(" DEBUG "),
        "trace and debug lines are written: {stderr}"
    );
    assert!(
        !stderr.contains("log lines were dropped"),
        "every line was written, none skipped: {stderr}"
    );
    let mut file = String::new();
    for entry in std::fs::read_dir(&logs).unwrap() {
        file.push_str(&std::fs::read_to_string(entry.unwrap().path()).unwrap());
    }
    assert!(file.contains(" TRACE "), "the log file has every level too");
    for secret in [TOKEN, wrong, near.as_str()] {
        for window in windows(secret) {
            for (name, text) in [("stderr", &stderr), ("the log file", &file)] {
                let line = text.lines().find(|line| line.contains(window));
                assert!(
                    line.is_none(),
                    "{name} holds {window:?} of a token: {line:?}"
                );
            }
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_flood_of_refused_requests_is_a_line_per_10_s_not_a_line_each() {
    // Without the token anyone who reaches the port can send thousands of requests a second:
    // a line each would fill the owner's disk under --log-dir.
    let token = TokenFile::new(TOKEN);
    let server = serve_demo(&[
        "--http-token-file",
        &token.path(),
        "--http-max-sessions",
        "1",
    ])
    .await;
    // No key at all (wrong keys from one address are held back with 429 after ten, and
    // counted in the same line).
    let intruder = Mcp::authorized(&server.url, None);
    for _ in 0..300 {
        assert_eq!(intruder.initialize(json!({})).await.status, 401);
    }
    let owner = Mcp::new(&server.url, Some(TOKEN));
    owner.open(json!({})).await;
    for _ in 0..300 {
        assert_eq!(owner.initialize(json!({})).await.status, 503);
    }
    let stderr = String::from_utf8(server.stop().await.stderr).unwrap();
    for (refusal, kind) in [
        ("without this server's bearer token", "401"),
        ("new MCP sessions refused", "503"),
    ] {
        let lines: Vec<&str> = stderr
            .lines()
            .filter(|line| line.contains(refusal))
            .collect();
        // One at the first refusal; one more if the 300 took over 10 s.
        assert!(
            (1..=2).contains(&lines.len()),
            "{kind}: {} lines for 300 refusals:\n{stderr}",
            lines.len()
        );
        assert!(lines[0].contains("refused=1"), "{kind}: {}", lines[0]);
    }
}
