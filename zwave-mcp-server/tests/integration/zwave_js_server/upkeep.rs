//! `maintain_zwave_device` against the real zwave-js 15.29.0 behind the real zwave-js-server
//! 3.10.2, on zwave-js's mock controller: a re-interview with its stages as progress; one of a
//! node that stopped acknowledging, which the driver gives up; a lifeline health check, which
//! the mock controller cannot run (it lacks GetRoutingInfo, which zwave-js asks for before
//! the first ping: `captures/upkeep/FACTS.md`), refused in the driver's words with the device
//! free again at once; and a route rebuild, which the mock fails, said as the controller said
//! it. (A health check's rounds, rating and abort are therefore proven over the simulators
//! only, which follow zwave-js's code for them.)

use serde_json::json;
use test_support::zwave_js::ZwaveJsServer;

use crate::harness::{Conversation, command, other_client};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_real_driver_reinterviews_refuses_a_health_check_and_fails_a_route_rebuild() {
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

    // The mock controller cannot check a lifeline: the driver's words; nothing stays claimed.
    let (error, text, _) =
        session.call("maintain_zwave_device", maintain("Node 2", "check_health"));
    assert!(error, "{text}");
    assert!(
        text.starts_with("A lifeline health check of \"Node 2\" (node 2) failed: zwave-js-server refused `node.check_lifeline_health`: ")
            && text.contains("GetRoutingInfo function (ZW0105)"),
        "{text}"
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
