//! `get_zwave_health` against the real zwave-js 15.29.0 behind the real zwave-js-server
//! 3.10.2, on zwave-js's mock controller: the statistics the driver keeps appear and move
//! after a command; a ping of a live node; a node the mock makes stop acknowledging frames
//! does not answer a ping and the driver marks it dead; once it acknowledges again, a ping
//! finds it alive again.

use std::time::{Duration, Instant};

use serde_json::{Value, json};
use test_support::zwave_js::ZwaveJsServer;

use crate::harness::{Conversation, command, other_client};

/// Calls `get_zwave_health` with `args` until `check` holds of its structured content (the
/// driver sends statistics at most every ~250 ms), at most 20 s; returns that answer.
fn health_until(
    session: &mut Conversation,
    server: &ZwaveJsServer,
    args: &Value,
    check: impl Fn(&Value) -> bool,
) -> (String, Value) {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let (error, text, health) = session.call("get_zwave_health", args.clone());
        if !error && check(&health) {
            return (text, health);
        }
        assert!(
            Instant::now() < deadline,
            "never as expected: {text}\n{health}\n{}",
            server.logs()
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_real_driver_counts_pings_a_node_and_marks_it_dead_and_alive_again() {
    // Started on this thread, which outlives them (see test_support::daemon).
    let server = ZwaveJsServer::start();
    // Every node interviewed: their statistics are the driver's from then on.
    let _other = other_client(&server).await;
    let mut session = Conversation::over(&mut command(&[
        "--zwave-js-url",
        &server.url,
        "--api-timeout",
        "10s",
    ]));

    // The network: 14 devices, their statistics as the driver counts them.
    let (text, network) = health_until(&mut session, &server, &json!({}), |health| {
        health["devices"]
            .as_array()
            .is_some_and(|devices| devices.len() == 14)
    });
    assert!(
        text.starts_with("Z-Wave network health (14 devices): "),
        "{text}"
    );
    let switch = network["devices"]
        .as_array()
        .unwrap()
        .iter()
        .find(|device| device["nodeId"] == 2)
        .cloned()
        .unwrap();
    assert_eq!(switch["status"], "Alive", "{switch}");
    let sent = switch["commandsSent"].as_u64().unwrap();
    assert!(sent > 0, "the interview talked to it: {switch}");
    assert!(switch["roundTripMs"].as_f64().unwrap() > 0.0, "{switch}");

    // A command moves them.
    let (error, text, _) = session.call(
        "control_zwave_device",
        json!({"deviceName": "Node 2", "action": "on"}),
    );
    assert!(!error, "{text}");
    let node = json!({"deviceName": "Node 2"});
    health_until(&mut session, &server, &node, |health| {
        health["devices"][0]["commandsSent"].as_u64() > Some(sent)
    });

    // A ping of a live node: answered, with how long it took.
    let ping = json!({"deviceName": "Node 2", "ping": true});
    let (error, text, health) = session.call("get_zwave_health", ping.clone());
    assert!(!error, "{text}");
    assert!(
        text.starts_with("\"Node 2\" (node 2) answered the ping in "),
        "{text}"
    );
    assert_eq!(health["ping"]["answered"], true);
    assert!(health["ping"]["tookMs"].as_f64().unwrap() > 0.0);

    // The node stops acknowledging frames: the ping goes unanswered, and the driver marks it
    // dead.
    server.tell_mock("/ack", r#"{"node": 2, "on": false}"#);
    let (error, text, health) = session.call("get_zwave_health", ping.clone());
    assert!(!error, "{text}");
    assert!(
        text.starts_with("\"Node 2\" (node 2) did not answer the ping (Z-Wave JS gave up after "),
        "{text}\n{}",
        server.logs()
    );
    assert!(
        text.contains("): it is dead.\n\"Node 2\" (node 2) has been dead since "),
        "{text}"
    );
    assert_eq!(
        (
            &health["ping"]["answered"],
            &health["devices"][0]["condition"]
        ),
        (&json!(false), &json!("dead"))
    );

    // It acknowledges again: the next ping finds it alive again.
    server.tell_mock("/ack", r#"{"node": 2, "on": true}"#);
    let (error, text, health) = session.call("get_zwave_health", ping);
    assert!(!error, "{text}");
    assert!(
        text.contains(": it is alive again (Z-Wave JS had it dead).\n\"Node 2\" (node 2) is "),
        "{text}\n{}",
        server.logs()
    );
    assert_eq!(health["ping"]["aliveAgain"], true);
    assert_eq!(health["devices"][0]["status"], "Alive");
    session.finish();
    drop(server);
}
