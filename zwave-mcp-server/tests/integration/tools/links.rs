//! The tools while a link is down: the driver, the gateway (silent or offline), node status
//! topics, and reads that say since when their states are stale.

use std::time::Duration;

use serde_json::json;
use zwave_mcp_server::sim::SimOptions;

use crate::harness::Home;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tools_report_a_driver_that_is_down() {
    let home = Home::start().await;
    home.ok("list_zwave_devices", json!({})).await;
    home.sim.set_driver_ready(false).await;
    assert_eq!(
        home.err(
            "control_zwave_device",
            json!({"deviceName": "Switch One", "action": "on"})
        )
        .await,
        "could not switch \"Switch One\": zwave-js-ui answered `writeValue` with \"Z-Wave client not connected\": its Z-Wave driver is down; check the Z-Wave controller in Z-Wave JS UI"
    );
    home.sim.set_driver_ready(true).await;
    home.ok(
        "control_zwave_device",
        json!({"deviceName": "Switch One", "action": "on"}),
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tools_report_a_silent_or_offline_gateway() {
    let home = Home::start_with(
        SimOptions::default(),
        Duration::from_millis(400),
        Duration::from_secs(1),
    )
    .await;
    home.ok("list_zwave_devices", json!({})).await;
    home.sim.set_silent(true);
    assert_eq!(
        home.err(
            "control_zwave_device",
            json!({"deviceName": "Switch One", "action": "on"})
        )
        .await,
        "no answer to the command for \"Switch One\": zwave-js-ui did not answer `writeValue` within 400ms (the command was sent and may still take effect: check the device's state before trying again): is gateway `zwave-js-ui` running with its MQTT gateway enabled, and do --topic-prefix `zwave` and --gateway-name match its settings? (see --api-timeout)"
    );
    home.sim.set_silent(false);
    home.sim.announce_offline().await;
    assert!(
        home.wait_until(|state| state.gateway_online == Some(false))
            .await
    );
    assert_eq!(
        home.err(
            "control_zwave_device",
            json!({"deviceName": "Switch One", "action": "on"})
        )
        .await,
        "could not switch \"Switch One\": zwave-js-ui gateway `zwave-js-ui` is offline (its mqtt status topic says so): start Z-Wave JS UI, or check --gateway-name"
    );
    home.sim.announce_online().await;
    assert!(
        home.wait_until(|state| state.gateway_online == Some(true))
            .await
    );
    home.ok(
        "control_zwave_device",
        json!({"deviceName": "Switch One", "action": "on"}),
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn node_status_topics_are_tracked() {
    let home = Home::start().await;
    home.ok("list_zwave_devices", json!({})).await;
    home.sim.set_node_status(6, "Dead").await;
    assert!(
        home.wait_until(|state| {
            state.nodes[&zwave_mcp_server::network::NodeId(6)].status
                == Some(zwave_mcp_server::network::NodeStatus::Dead)
        })
        .await
    );
    assert_eq!(
        home.err(
            "control_zwave_device",
            json!({"deviceName": "Node 6", "action": "off"})
        )
        .await,
        "\"Node 6\" (node 6) is offline (status Dead) and cannot be controlled until it is reachable again"
    );
    home.sim.set_node_status(6, "Alive").await;
    assert!(
        home.wait_until(|state| {
            state.nodes[&zwave_mcp_server::network::NodeId(6)].status
                == Some(zwave_mcp_server::network::NodeStatus::Alive)
        })
        .await
    );
    home.ok(
        "control_zwave_device",
        json!({"deviceName": "Node 6", "action": "off"}),
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reads_say_when_the_gateway_is_offline_and_since_when() {
    let home = Home::start().await;
    let fresh = home.ok("list_zwave_devices", json!({})).await;
    assert!(fresh.get("stale").is_none(), "{fresh}");
    home.sim.announce_offline().await;
    assert!(
        home.wait_until(|state| state.gateway_online == Some(false))
            .await
    );
    let (is_error, text) = home.text("list_zwave_devices", json!({})).await;
    assert!(!is_error);
    let first = text.lines().next().unwrap();
    assert!(
        first.starts_with("Z-Wave JS UI is offline since "),
        "{text}"
    );
    assert!(first.ends_with(" s ago); last known states:"), "{text}");
    assert_eq!(text.lines().nth(1), Some("13 Z-Wave devices:"));
    let list = home.ok("list_zwave_devices", json!({})).await;
    assert_eq!(list["stale"]["reason"], "gateway offline");
    assert!(list["stale"]["ageSeconds"].as_u64().unwrap() < 60);
    let status = home
        .ok("get_device_status", json!({"deviceName": "Switch One"}))
        .await;
    assert_eq!(status["stale"]["reason"], "gateway offline");
    let sensors = home
        .ok(
            "get_device_sensor_data",
            json!({"deviceName": "Office Temperature"}),
        )
        .await;
    assert_eq!(sensors["stale"]["reason"], "gateway offline");
    home.sim.announce_online().await;
    assert!(
        home.wait_until(|state| state.gateway_online == Some(true))
            .await
    );
    let back = home.ok("list_zwave_devices", json!({})).await;
    assert!(back.get("stale").is_none(), "{back}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reads_say_when_the_zwave_driver_is_down() {
    let home = Home::start().await;
    home.ok("list_zwave_devices", json!({})).await;
    home.sim.set_driver_ready(false).await;
    assert!(
        home.wait_until(|state| state.driver_ready == Some(false))
            .await
    );
    let (is_error, text) = home
        .text("get_device_status", json!({"deviceName": "Switch One"}))
        .await;
    assert!(!is_error, "{text}");
    assert!(
        text.starts_with("Z-Wave JS UI's Z-Wave driver is down since "),
        "{text}"
    );
    let status = home
        .ok("get_device_status", json!({"deviceName": "Switch One"}))
        .await;
    assert_eq!(status["stale"]["reason"], "driver down");
}
