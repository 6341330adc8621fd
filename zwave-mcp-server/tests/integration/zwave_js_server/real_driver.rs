//! The zwave-js-server connection against the real thing: zwave-js 15.29.0 behind
//! zwave-js-server 3.10.2 (from npm), on zwave-js's mock controller with the lab's 15-node
//! network. The first real Z-Wave driver in this suite: every difference from the recorded
//! sessions or the simulator is a defect of ours.

use std::time::Duration;

use serde_json::json;
use test_support::zwave_js::ZwaveJsServer;
use zwave_mcp_server::network::zwave_js_server::{Link, ZwaveJsServerError};

use crate::harness::{cache_until, cached_value, listening};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_real_driver_is_listened_to_and_commanded() {
    // Started on this thread, which outlives them: they die with the thread that started
    // them (a blocking-pool thread would end, and take them along, while the test runs).
    let server = ZwaveJsServer::start();
    let client = listening(&server).await;
    assert_eq!(
        *client.link().borrow(),
        Link::Listening {
            server: "3.10.2".into(),
            driver: "15.29.0".into()
        }
    );
    assert_eq!(client.with_nodes(|nodes| nodes.len()), 15);
    // The port opens at driver ready; the nodes' interviews go on, each ending in a `ready`
    // event that carries the node's whole state.
    cache_until(&client, Duration::from_secs(120), &server, |client| {
        client.with_nodes(|nodes| nodes.values().all(|node| node.ready))
    })
    .await;
    assert!(cached_value(&client, 3, "38-0-currentValue").is_some());

    // Dim the dimmer: unsupervised, so status 254; the device's own report follows.
    let set = client
        .request(
            "node.set_value",
            json!({"nodeId": 3, "valueId": {"commandClass": 38, "endpoint": 0, "property": "targetValue"}, "value": 40}),
            Duration::from_secs(10),
        )
        .await
        .unwrap();
    assert_eq!(set, json!({"result": {"status": 254}}));
    cache_until(&client, Duration::from_secs(20), &server, |client| {
        cached_value(client, 3, "38-0-currentValue") == Some(json!(40))
    })
    .await;

    // Read a value from the device.
    let polled = client
        .request(
            "node.poll_value",
            json!({"nodeId": 2, "valueId": {"commandClass": 37, "endpoint": 0, "property": "currentValue"}}),
            Duration::from_secs(10),
        )
        .await
        .unwrap();
    assert_eq!(polled, json!({"value": false}));

    // A node that does not exist.
    let missing = client
        .request(
            "node.set_value",
            json!({"nodeId": 99, "valueId": {"commandClass": 37, "endpoint": 0, "property": "targetValue"}, "value": true}),
            Duration::from_secs(10),
        )
        .await
        .unwrap_err();
    assert!(
        matches!(&missing, ZwaveJsServerError::Failed { failure, .. } if failure.code == "node_not_found"),
        "{missing}"
    );
    drop(server);
}
