//! The binary with `--zwave-js-url` against the real zwave-js 15.29.0 behind the real
//! zwave-js-server 3.10.2 (from npm), on zwave-js's mock controller: what a Home Assistant
//! Z-Wave JS add-on home looks like to it. Through the tools, as a model sees them: the server
//! not up yet at start, listing, dimming and switching confirmed by the devices' own reports,
//! a stuck device not confirmed, a sensor read with a refresh, a name that is not there, a
//! rename made by another client, and the server restarted (stale banner, then recovery).

use std::time::Duration;

use serde_json::json;
use test_support::zwave_js::ZwaveJsServer;
use zwave_mcp_server::network::zwave_js_server::ZwaveJsServerClient;

use crate::harness::{Conversation, command, messages, other_client};

const COMMAND: Duration = Duration::from_secs(10);

async fn name(client: &ZwaveJsServerClient, node: u16, name: &str, location: &str) {
    for (command, field, text) in [
        ("node.set_name", "name", name),
        ("node.set_location", "location", location),
    ] {
        client
            .request(
                command,
                json!({"nodeId": node, field: text, "updateCC": false}),
                COMMAND,
            )
            .await
            .unwrap_or_else(|err| panic!("{command} {node}: {err}"));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_tools_work_a_zwave_js_server_home_end_to_end() {
    // Started on this thread, which outlives them (see test_support::daemon).
    let mut server = ZwaveJsServer::without_server();
    let mut session = Conversation::over(&mut command(&[
        "--zwave-js-url",
        &server.url,
        "--confirm-timeout",
        "10s",
        "--api-timeout",
        "5s",
    ]));

    // Nothing listens yet: the tools say where they looked and that nothing was sent.
    let (error, text, _) = session.call("list_zwave_devices", json!({}));
    assert!(error, "{text}");
    assert!(
        text.contains(&format!("cannot reach zwave-js-server at {}: ", server.url))
            && text.contains("nothing was sent")
            && text.contains("check --zwave-js-url"),
        "{text}"
    );

    server.start_server();
    let other = other_client(&server).await;
    name(&other, 2, "Kitchen Plug", "Kitchen").await;
    name(&other, 3, "Hall Dimmer", "Hall").await;
    name(&other, 4, "Multisensor", "Living Room").await;
    // Last, and in one command, so that whichever state shows it shows every name before it.
    other
        .request(
            "node.set_name",
            json!({"nodeId": 11, "name": "Porch Switch", "updateCC": false}),
            COMMAND,
        )
        .await
        .unwrap();

    // Named by another client after this server read the state: zwave-js-server says nothing
    // of it, so the server may have read the state again in the middle of the renaming (an
    // event it could not place). A name not found reads it again: the last one named is
    // found, and with it every name set before.
    let (error, text, _) = session.call_until(
        "get_device_status",
        &json!({"deviceName": "Porch Switch"}),
        Duration::from_secs(30),
        |error, _| !error,
    );
    assert!(!error, "{text}");
    let (error, text, _) = session.call("get_device_status", json!({"deviceName": "Hall Dimmer"}));
    assert!(
        !error && text.starts_with(r#""Hall Dimmer" (node 3, Hall) is a dimmer, online"#),
        "{text}"
    );
    let (error, list, structured) = session.call("list_zwave_devices", json!({}));
    assert!(!error, "{list}");
    for device in ["Kitchen Plug", "Hall Dimmer", "Multisensor"] {
        assert!(list.contains(device), "{device} not in {list}");
    }
    // Every class of the mock network, as the real driver describes it.
    let kinds: Vec<(u64, String)> = structured["devices"]
        .as_array()
        .unwrap()
        .iter()
        .map(|device| {
            (
                device["nodeId"].as_u64().unwrap(),
                format!(
                    "{}: {}",
                    device["kind"].as_str().unwrap(),
                    device["state"].as_str().unwrap()
                ),
            )
        })
        .filter(|(node, _)| (5..=10).contains(node) || *node == 15)
        .collect();
    assert_eq!(
        kinds,
        [
            (5, "lock: unlocked, door open, bolt locked".to_owned()),
            (6, "thermostat: off, 19.5 °C now, idle".to_owned()),
            (7, "cover: closed".to_owned()),
            (8, "color_light: off".to_owned()),
            (9, "siren: tone not reported yet".to_owned()),
            (
                10,
                "sensor: water alarm sensor status: idle, battery 87%".to_owned()
            ),
            (15, "cover: closed".to_owned()),
        ],
        "{list}"
    );

    // Dim and switch: the devices' own reports confirm them.
    let (error, text, outcome) = session.call(
        "control_zwave_device",
        json!({"deviceName": "Hall Dimmer", "action": "dim", "level": 40}),
    );
    assert!(!error, "{text}");
    assert_eq!(outcome["outcome"], "confirmed", "{text}");
    let (error, text, outcome) = session.call(
        "control_zwave_device",
        json!({"deviceName": "Kitchen Plug", "action": "on"}),
    );
    assert!(!error, "{text}");
    assert_eq!(outcome["outcome"], "confirmed", "{text}");

    // A device that acknowledges and ignores the command is never reported as done.
    server.tell_mock("/stuck", r#"{"node": 2, "on": true}"#);
    let (_, text, outcome) = session.call(
        "control_zwave_device",
        json!({"deviceName": "Kitchen Plug", "action": "off"}),
    );
    assert_ne!(outcome["outcome"], "confirmed", "{text}");
    assert_eq!(outcome["confirmed"], false, "{text}");
    server.tell_mock("/stuck", r#"{"node": 2, "on": false}"#);

    // A sensor read with a refresh asks the device.
    let (error, text, data) = session.call(
        "get_device_sensor_data",
        json!({"deviceName": "Multisensor", "refresh": true}),
    );
    assert!(!error, "{text}");
    assert_eq!(data["refreshed"], true, "{text}");
    assert!(
        text.contains("°C") || text.contains("°F"),
        "no temperature: {text}"
    );

    // A name that is not there: nothing is written, the known names are offered.
    let (error, text, _) = session.call(
        "control_zwave_device",
        json!({"deviceName": "Garage Door", "action": "on"}),
    );
    assert!(error && text.contains("Garage Door"), "{text}");

    // The server goes away: reads say since when their states are old, writes are refused.
    server.stop_server();
    let (error, text, structured) = session.call_until(
        "get_device_status",
        &json!({"deviceName": "Hall Dimmer"}),
        Duration::from_secs(20),
        |_, text| text.starts_with("zwave-js-server is unreachable since "),
    );
    assert!(!error, "{text}");
    assert_eq!(
        structured["stale"]["reason"], "zwave-js-server unreachable",
        "{structured}"
    );
    let (error, text, _) = session.call(
        "control_zwave_device",
        json!({"deviceName": "Hall Dimmer", "action": "off"}),
    );
    assert!(
        error && text.contains("cannot reach zwave-js-server") && text.contains("nothing was sent"),
        "{text}"
    );

    // Back: the state is read again, the banner goes.
    server.start_server();
    let (_, text, structured) = session.call_until(
        "get_device_status",
        &json!({"deviceName": "Hall Dimmer"}),
        Duration::from_secs(60),
        |error, text| !error && !text.contains("unreachable"),
    );
    assert!(structured["stale"].is_null(), "{text}");

    // Another client renames the dimmer; this server still knows the old name. A command by
    // that name is checked against the node's name first: nothing is sent. (The other
    // client reconnects on its own after the restart: its request waits until it is back.)
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    while let Err(err) = other
        .request(
            "node.set_name",
            json!({"nodeId": 3, "name": "Desk Lamp", "updateCC": false}),
            COMMAND,
        )
        .await
    {
        assert!(
            std::time::Instant::now() < deadline,
            "the other client never got its rename through: {err}"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let (error, text, _) = session.call(
        "control_zwave_device",
        json!({"deviceName": "Hall Dimmer", "action": "on"}),
    );
    assert!(
        error && text.contains("nothing was sent: node 3 is now \"Desk Lamp\" (Hall) in Z-Wave JS, not \"Hall Dimmer\" (Hall)"),
        "{text}"
    );
    drop(other);

    let output = session.finish();
    // Every stdout byte was protocol.
    assert!(!messages(&output).is_empty());
}
