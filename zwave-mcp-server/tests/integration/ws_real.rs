//! The zwave-js-server connection against the real thing: zwave-js 15.29.0 behind
//! zwave-js-server 3.10.2 (from npm), on zwave-js's mock controller with the lab's 15-node
//! network. The first real Z-Wave driver in this suite: every difference from the recorded
//! sessions or the simulator is a defect of ours.

use std::time::Duration;

use serde_json::{Value, json};
use test_support::zwave_js::ZwaveJsServer;
use zwave_mcp_server::{
    network::zwave_js_server::{Link, Target, ZwaveJsServerClient, ZwaveJsServerError},
    network::{Backoff, NodeId},
};

const QUICK: Backoff = Backoff::exponential(Duration::from_millis(50), Duration::from_millis(500));

/// Waits until `check` holds of the cache (each change looked at), at most `limit`.
async fn cache_until(
    client: &ZwaveJsServerClient,
    limit: Duration,
    server: &ZwaveJsServer,
    check: impl Fn(&ZwaveJsServerClient) -> bool,
) {
    let mut changes = client.changes();
    let waited = tokio::time::timeout(limit, async {
        while !check(client) {
            if changes.changed().await.is_err() {
                return;
            }
        }
    })
    .await;
    assert!(
        waited.is_ok(),
        "not within {limit:?}; nodes (id, ready, status, values): {:?}\n{}",
        client.with_nodes(|nodes| nodes
            .values()
            .map(|node| (
                node.id.0,
                node.ready,
                node.status.clone(),
                node.values.len()
            ))
            .collect::<Vec<_>>()),
        server.logs()
    );
}

fn value(client: &ZwaveJsServerClient, node: u16, key: &str) -> Option<Value> {
    client.with_nodes(|nodes| {
        nodes
            .get(&NodeId(node))
            .and_then(|node| node.values.get(key))
            .and_then(|value| value.value.clone())
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_real_driver_is_listened_to_and_commanded() {
    // Started on this thread, which outlives them: they die with the thread that started
    // them (a blocking-pool thread would end, and take them along, while the test runs).
    let server = ZwaveJsServer::start();
    let client = ZwaveJsServerClient::connect(Target::new(&server.url, None).unwrap(), QUICK);
    let mut link = client.link();
    tokio::time::timeout(
        Duration::from_secs(60),
        link.wait_for(|link| matches!(link, Link::Listening { .. })),
    )
    .await
    .unwrap_or_else(|_| panic!("never listening:\n{}", server.logs()))
    .unwrap();
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
    assert!(value(&client, 3, "38-0-currentValue").is_some());

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
        value(client, 3, "38-0-currentValue") == Some(json!(40))
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
