//! A person's yes on MCP 2026-07-28, end to end on the real driver: mcp-client (whose host
//! answers questions) → zwave-mcp-server over stdio → the real zwave-js-server and zwave-js on
//! the mock controller (node 5 a door lock). The unlock is answered with the question
//! (`InputRequiredResult`), the client asks its person and calls again, and the lock's own
//! report confirms it; a "no" sends nothing. Another server process, with a connection of its
//! own to the driver, reads the lock's state back.

use std::{
    sync::{Arc, Mutex},
    time::Duration,
};

use mcp_client::{
    ServerCommand, ServerConfig, ServerConnection,
    connection::{ElicitAnswer, Elicitor},
};
use serde_json::{Map, Value, json};
use test_support::{workspace_bin, zwave_js::ZwaveJsServer};

/// The binary on the real driver; `elicitor` answers its questions (none: it cannot ask).
async fn connected(url: &str, name: &str, elicitor: Option<Elicitor>) -> ServerConnection {
    let mut config = ServerConfig::new(ServerCommand::new(
        name,
        workspace_bin("zwave-mcp-server").to_string_lossy(),
        [
            "--zwave-js-url",
            url,
            "--allow-sensitive",
            "lock",
            "--confirm-timeout",
            "10s",
            "--api-timeout",
            "5s",
        ],
    ));
    config.init_timeout = Duration::from_secs(30);
    config.call_timeout = Duration::from_secs(30);
    let connection = ServerConnection::new(config).with_elicitor(elicitor);
    let info = connection.connect().await.unwrap();
    assert_eq!(info.protocol_version, "2026-07-28");
    connection
}

/// An elicitor answering `answer`, counting the questions.
fn answering(answer: ElicitAnswer, asked: &Arc<Mutex<Vec<String>>>) -> Elicitor {
    let asked = Arc::clone(asked);
    Arc::new(move |question| {
        asked.lock().unwrap().push(question.message.clone());
        let answer = answer.clone();
        Box::pin(async move { answer })
    })
}

fn args(value: Value) -> Map<String, Value> {
    value.as_object().cloned().unwrap()
}

async fn call(connection: &ServerConnection, tool: &str, arguments: Value) -> (bool, Value) {
    let result = connection.call_tool(tool, args(arguments)).await.unwrap();
    let value = serde_json::to_value(&result).unwrap();
    (result.is_error == Some(true), value)
}

/// The lock's state as a fresh server process reads it from the driver.
async fn lock_state(url: &str) -> String {
    let reader = connected(url, "reader", None).await;
    let (_, status) = call(
        &reader,
        "get_device_status",
        json!({"deviceName": "Node 5"}),
    )
    .await;
    reader.shutdown().await;
    status["content"][0]["text"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

/// Locks the door once the driver has interviewed the lock (up to two minutes): before that
/// the server rightly refuses to write to it, sending nothing. A poll of the condition, not a
/// guess at a time.
async fn lock_when_interviewed(connection: &ServerConnection) {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(120);
    loop {
        let (error, answer) = call(
            connection,
            "control_zwave_device",
            json!({"deviceName": "Node 5", "action": "lock"}),
        )
        .await;
        if !error {
            return;
        }
        assert!(
            answer.to_string().contains("still being interviewed")
                && tokio::time::Instant::now() < deadline,
            "{answer}"
        );
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unlock_is_confirmed_by_the_real_lock_after_the_question_round_trip_and_a_no_sends_nothing()
 {
    let driver = ZwaveJsServer::start();
    let yes = Arc::default();
    let agent = connected(
        &driver.url,
        "zwave",
        Some(answering(
            ElicitAnswer::Accept(json!({"confirm": true})),
            &yes,
        )),
    )
    .await;
    lock_when_interviewed(&agent).await;
    assert!(yes.lock().unwrap().is_empty(), "locking asks nobody");

    let (error, unlocked) = call(
        &agent,
        "control_zwave_device",
        json!({"deviceName": "Node 5", "action": "unlock"}),
    )
    .await;
    assert!(!error, "{unlocked}");
    assert_eq!(
        unlocked["structuredContent"]["outcome"], "confirmed",
        "{unlocked}"
    );
    assert_eq!(yes.lock().unwrap().len(), 1, "one question, one yes");
    let state = lock_state(&driver.url).await;
    assert!(
        state.contains("a lock, online (node status Alive): unlocked,"),
        "{state}"
    );

    // Locked again, then a person who says no: nothing reaches the lock.
    call(
        &agent,
        "control_zwave_device",
        json!({"deviceName": "Node 5", "action": "lock"}),
    )
    .await;
    agent.shutdown().await;
    let no = Arc::default();
    let agent = connected(
        &driver.url,
        "zwave",
        Some(answering(ElicitAnswer::Decline, &no)),
    )
    .await;
    let (error, refused) = call(
        &agent,
        "control_zwave_device",
        json!({"deviceName": "Node 5", "action": "unlock"}),
    )
    .await;
    assert!(error, "{refused}");
    assert!(
        refused
            .to_string()
            .contains("the user declined: nothing was sent"),
        "{refused}"
    );
    assert_eq!(no.lock().unwrap().len(), 1);
    let state = lock_state(&driver.url).await;
    assert!(
        state.contains("a lock, online (node status Alive): locked,"),
        "{state}"
    );
    agent.shutdown().await;
}
