//! Subscriptions through the binary: a device changed by another party (the simulated
//! server, not this client) yields exactly one update, and reading it then shows the change;
//! at 2025-11-25 (`resources/subscribe`) and at 2026-07-28 (`subscriptions/listen`).
//!
//! "Exactly one" is shown without sleeping: after the first device's update, a second device
//! changes and its update is awaited; the watcher looks at every subscription in each round,
//! so an extra update of the first would have come before or with the second's.

use serde_json::{Value, json};

use super::{meta, read};
use crate::harness::{Conversation, per_backend};

/// The switch of node 2 and the dimmer of node 3.
const SWITCH: &str = "37-0-currentValue";
const DIMMER: &str = "38-0-currentValue";

/// The updates of `uri` among `notifications`.
fn of<'a>(notifications: &'a [Value], uri: &str) -> Vec<&'a Value> {
    notifications
        .iter()
        .filter(|n| n["params"]["uri"] == uri)
        .collect()
}

per_backend! {
    /// 2025-11-25: subscribe; the device reports a new state on its own; one update.
    async fn a_device_changed_elsewhere_yields_one_update_showing_it(backend) {
        let home = TestHome::start(backend).await;
        let mut session = Conversation::over(&mut home.command(&[]));
        for uri in ["zwave://devices/2", "zwave://devices/3"] {
            let subscribed = session.request("resources/subscribe", json!({ "uri": uri }));
            assert_eq!(subscribed["result"], json!({}), "{subscribed}");
        }
        let (before, _) = read(&mut session, "zwave://devices/2");
        assert_eq!(before["on"], false);

        home.report(2, SWITCH, json!(true)).await;
        let update = session.next_notification("notifications/resources/updated");
        assert_eq!(update["params"]["uri"], "zwave://devices/2", "{update}");
        let (after, text) = read(&mut session, "zwave://devices/2");
        assert_eq!(after["on"], true, "{after}");
        assert!(text.contains(": on, "), "{text}");

        home.report(3, DIMMER, json!(40)).await;
        let mut updates = vec![update];
        loop {
            let next = session.next_notification("notifications/resources/updated");
            let last = next["params"]["uri"] == "zwave://devices/3";
            updates.push(next);
            if last {
                break;
            }
        }
        // Whatever came meanwhile, up to the answer of one more request.
        let _ = session.request("resources/list", json!({}));
        updates.extend(session.take_notifications("notifications/resources/updated"));
        assert_eq!(of(&updates, "zwave://devices/2").len(), 1, "{updates:#?}");
        let (dimmer, _) = read(&mut session, "zwave://devices/3");
        assert_eq!(dimmer["level"], 40, "{dimmer}");

        let unsubscribed = session.request("resources/unsubscribe", json!({"uri": "zwave://devices/2"}));
        assert_eq!(unsubscribed["result"], json!({}));
        home.report(2, SWITCH, json!(false)).await;
        home.report(3, DIMMER, json!(10)).await;
        let next = session.next_notification("notifications/resources/updated");
        assert_eq!(next["params"]["uri"], "zwave://devices/3", "after unsubscribing: {next}");
    }

    /// 2026-07-28: a listen stream is acknowledged with the resources of this server's shape
    /// (a hidden device's as an absent one's: neither tells anything), and its updates carry
    /// its subscription id.
    async fn a_listen_stream_is_told_of_a_change_made_elsewhere(backend) {
        let home = TestHome::start(backend).await;
        let mut session = Conversation::started(&mut home.command(&["--read-deny", "node:3"]));
        let discovered = session.request("server/discover", json!({"_meta": meta()}));
        assert_eq!(discovered["result"]["capabilities"]["resources"]["subscribe"], true, "{discovered}");
        // A client reads what it is about to watch: the node list is loaded by then.
        let read = session.request("resources/read", json!({"_meta": meta(), "uri": "zwave://devices/2"}));
        assert!(read["result"]["contents"].is_array(), "{read}");
        let listen = session.send_request("subscriptions/listen", json!({
            "_meta": meta(),
            "notifications": {
                "resourcesListChanged": true,
                "resourceSubscriptions": ["zwave://devices/2", "zwave://devices/3", "zwave://devices/200", "test://x"],
            },
        }));
        let ack = session.next_notification("notifications/subscriptions/acknowledged");
        assert_eq!(
            ack["params"]["notifications"]["resourceSubscriptions"],
            json!(["zwave://devices/2", "zwave://devices/3", "zwave://devices/200"]),
            "{ack}"
        );
        assert_eq!(ack["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"], listen);

        home.report(3, DIMMER, json!(40)).await;
        home.report(2, SWITCH, json!(true)).await;
        let update = session.next_notification("notifications/resources/updated");
        assert_eq!(update["params"]["uri"], "zwave://devices/2", "the hidden node 3 tells nothing: {update}");
        assert_eq!(update["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"], listen);
        let read = session.request("resources/read", json!({"_meta": meta(), "uri": "zwave://devices/2"}));
        let json: Value = serde_json::from_str(read["result"]["contents"][0]["text"].as_str().unwrap()).unwrap();
        assert_eq!(json["on"], true, "{read}");

        session.send_message(&json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": listen, "reason": "done", "_meta": meta()}}));
        let _ = session.request("server/discover", json!({"_meta": meta()}));
    }
}

/// A client given the list while the home could not be reached (the home alone) is told when
/// the devices are known; one given the full list is not told of its first load.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_list_given_before_the_home_was_reached_is_told_to_change() {
    let home = crate::harness::TestHome::start(crate::harness::Backend::ZwaveJsServer).await;
    home.go_down().await;
    let mut session = Conversation::over(&mut home.command(&["--api-timeout", "1s"]));
    let listed = session.request("resources/list", json!({}));
    assert_eq!(
        listed["result"]["resources"].as_array().unwrap().len(),
        1,
        "{listed}"
    );
    home.come_back().await;
    let changed = session.next_notification("notifications/resources/list_changed");
    assert_eq!(changed["method"], "notifications/resources/list_changed");
    let listed = session.request("resources/list", json!({}));
    assert!(
        listed["result"]["resources"].as_array().unwrap().len() > 1,
        "{listed}"
    );
}
