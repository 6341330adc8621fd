//! The token is in no log line: with every level on (`--log-level trace`), neither stderr nor
//! the log file holds the token, a wrong token sent, or any 8 characters of either, however
//! they were sent (bearer header, `Basic`, the URL) and whatever was done with them.

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
    assert_eq!(ended.status, 202);

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
