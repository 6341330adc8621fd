//! A subscription against the real zwave-js 15.29.0 behind zwave-js-server 3.10.2 (mock
//! controller): another WebSocket client switches a device, and the binary's subscriber gets
//! exactly one update, after which a read shows the new state.
//!
//! Exactly one without sleeping: a second device is then switched by the other client and its
//! update awaited; every round of the watcher looks at every subscription, so a second update
//! of the first device would have come before the second device's.

use std::time::Duration;

use serde_json::{Value, json};
use test_support::zwave_js::ZwaveJsServer;

use crate::harness::{Conversation, command, other_client};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_device_another_client_switches_yields_one_update() {
    // Started on this thread, which outlives them (see test_support::daemon).
    let server = ZwaveJsServer::start();
    let other = other_client(&server).await;
    let mut session = Conversation::over(&mut command(&["--zwave-js-url", &server.url]));
    for uri in ["zwave://devices/2", "zwave://devices/3"] {
        let subscribed = session.request("resources/subscribe", json!({ "uri": uri }));
        assert_eq!(subscribed["result"], json!({}), "{uri}: {subscribed}");
    }
    let read = |session: &mut Conversation| -> Value {
        let answer = session.request("resources/read", json!({"uri": "zwave://devices/2"}));
        serde_json::from_str(answer["result"]["contents"][0]["text"].as_str().unwrap()).unwrap()
    };
    assert_eq!(read(&mut session)["on"], false);

    let set = |node: u16, cc: u16, value: Value| json!({"nodeId": node, "valueId": {"commandClass": cc, "endpoint": 0, "property": "targetValue"}, "value": value});
    other
        .request(
            "node.set_value",
            set(2, 37, json!(true)),
            Duration::from_secs(10),
        )
        .await
        .unwrap();
    let update = session.next_notification("notifications/resources/updated");
    assert_eq!(update["params"]["uri"], "zwave://devices/2", "{update}");
    assert_eq!(read(&mut session)["on"], true);

    other
        .request(
            "node.set_value",
            set(3, 38, json!(40)),
            Duration::from_secs(10),
        )
        .await
        .unwrap();
    let mut updates = vec![update];
    loop {
        let next = session.next_notification("notifications/resources/updated");
        let last = next["params"]["uri"] == "zwave://devices/3";
        updates.push(next);
        if last {
            break;
        }
    }
    let _ = session.request("resources/list", json!({}));
    updates.extend(session.take_notifications("notifications/resources/updated"));
    let of_switch = updates
        .iter()
        .filter(|u| u["params"]["uri"] == "zwave://devices/2")
        .count();
    assert_eq!(of_switch, 1, "{updates:#?}\n{}", server.logs());
    drop(server);
}
