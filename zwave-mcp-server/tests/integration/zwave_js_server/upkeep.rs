//! `maintain_zwave_device` against the real zwave-js 15.29.0 behind the real zwave-js-server
//! 3.10.2, on zwave-js's mock controller (which answers GetRoutingInfo here: the stock one
//! does not, and zwave-js then refuses every health check, `captures/upkeep/FACTS.md`): a
//! re-interview with its stages as progress; one of a node that stopped acknowledging, which
//! the driver gives up; a lifeline health check with each round's progress and its rating; a
//! cancelled one aborted; and a route rebuild, which the mock fails, said as the controller
//! said it. The mock nodes have no Powerlevel command class: the power-level part of a round
//! is not exercised.

use serde_json::json;
use test_support::zwave_js::ZwaveJsServer;

use crate::harness::{Conversation, command, other_client};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_real_driver_reinterviews_checks_aborts_and_fails_a_route_rebuild() {
    // Started on this thread, which outlives them (see test_support::daemon).
    let server = ZwaveJsServer::start();
    // Every node interviewed before the first call.
    let _other = other_client(&server).await;
    let mut session = Conversation::over(&mut command(&[
        "--zwave-js-url",
        &server.url,
        "--api-timeout",
        "10s",
        "--allow-maintenance",
        "--upkeep-timeout",
        "60s",
    ]));
    let maintain =
        |device: &str, operation: &str| json!({"deviceName": device, "operation": operation});

    // A re-interview: the driver's five stages as progress, then its end.
    let id = session.send_with_progress(
        "maintain_zwave_device",
        maintain("Node 3", "reinterview"),
        "real-r",
    );
    let (error, text, result) = session.answer(id);
    assert!(!error, "{text}\n{}", server.logs());
    assert!(
        text.starts_with("\"Node 3\" (node 3) was re-interviewed in "),
        "{text}"
    );
    assert_eq!(
        result["stages"],
        json!([
            "ProtocolInfo",
            "NodeInfo",
            "CommandClasses",
            "OverwriteConfig",
            "Complete"
        ])
    );
    let progress = session.progress("real-r");
    let messages: Vec<&str> = progress
        .iter()
        .filter_map(|p| p["message"].as_str())
        .collect();
    assert_eq!(
        messages.first(),
        Some(&"asked Z-Wave JS for a re-interview of \"Node 3\" (node 3)"),
        "{messages:?}"
    );
    assert_eq!(
        messages.last(),
        Some(&"interview of \"Node 3\" (node 3): Complete done"),
        "{messages:?}"
    );
    let (error, status, _) = session.call("get_device_status", json!({"deviceName": "Node 3"}));
    assert!(
        !error && status.contains("online (node status Alive)"),
        "{status}"
    );

    // A lifeline health check: five rounds of pings, each round's progress, the rating.
    let id = session.send_with_progress(
        "maintain_zwave_device",
        maintain("Node 2", "check_health"),
        "real-h",
    );
    let (error, text, result) = session.answer(id);
    assert!(!error, "{text}\n{}", server.logs());
    assert!(
        text.starts_with(
            "The lifeline health check of \"Node 2\" (node 2) rated its link to the controller "
        ),
        "{text}"
    );
    assert_eq!(
        result["rounds"].as_array().map(Vec::len),
        Some(5),
        "{result}"
    );
    // The rating follows the slowest ping (over 100 ms: 5, over 50 ms: 9; the lab measured
    // 79-160 ms on the mock), so only its range is known in advance; nothing is lost.
    let rating = result["rating"].as_u64().unwrap();
    assert!(
        text.contains(&format!(
            "rated its link to the controller {rating} of 10, "
        )),
        "{text}"
    );
    assert!((1..=10).contains(&rating), "{text}");
    assert!(text.contains(" no ping lost, 14 neighbours."), "{text}");
    let rounds: Vec<String> = session
        .progress("real-h")
        .iter()
        .filter(|p| p["total"].as_f64() == Some(5.0))
        .map(|p| p["message"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(rounds.len(), 5, "{rounds:?}");
    assert!(
        rounds[4].starts_with("health check of \"Node 2\" (node 2): round 5 of 5 rated "),
        "{rounds:?}"
    );

    // A health check of a node that stopped acknowledging, cancelled: the driver is asked to
    // abort it, and the next call on the node tells what it found by then.
    server.tell_mock("/ack", r#"{"node": 12, "on": false}"#);
    let id = session.send_with_progress(
        "maintain_zwave_device",
        maintain("Node 12", "check_health"),
        "real-c",
    );
    session.wait_for(|m| {
        m["method"] == "notifications/progress" && m["params"]["progressToken"] == "real-c"
    });
    session.send_message(&crate::harness::cancel(id));
    server.tell_mock("/ack", r#"{"node": 12, "on": true}"#);
    let (error, text, _) = session.call_until(
        "maintain_zwave_device",
        &maintain("Node 12", "rebuild_routes"),
        std::time::Duration::from_secs(60),
        |_, text| !text.contains("running since"),
    );
    assert!(!error, "{text}");
    assert!(
        text.contains("\nEarlier: A lifeline health check asked at ")
            && (text.contains("was aborted before its first round ended")
                || text.contains("done before it was aborted")),
        "{text}\n{}",
        server.logs()
    );

    // A route rebuild: the mock's controller answers that it failed.
    let (error, text, result) = session.call(
        "maintain_zwave_device",
        maintain("Node 2", "rebuild_routes"),
    );
    assert!(!error, "{text}");
    assert!(text.starts_with("The controller could not rebuild the routes of \"Node 2\" (node 2) (it answered that the rebuild failed, after "), "{text}");
    assert_eq!(result["outcome"], "failed");

    // A node that stopped acknowledging: the driver marks it dead and gives the interview up.
    server.tell_mock("/ack", r#"{"node": 11, "on": false}"#);
    let (error, text, _) =
        session.call("maintain_zwave_device", maintain("Node 11", "reinterview"));
    assert_eq!(
        (error, text.as_str()),
        (
            true,
            "A re-interview of \"Node 11\" (node 11) failed: Z-Wave JS said the re-interview failed: The node is dead"
        ),
        "{}",
        server.logs()
    );
    server.tell_mock("/ack", r#"{"node": 11, "on": true}"#);
    session.finish();
    drop(server);
}
