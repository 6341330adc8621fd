//! How the tools say things, table-driven so that a change of wording is deliberate: one
//! vocabulary across tools, kinds and states in words, the last known status labelled as
//! such, a refresh that cannot happen said once with its cause.

use serde_json::{Value, json};

use crate::harness::Home;

/// `(tool, arguments, a piece of text the answer must hold)`.
type Expectations<'a> = &'a [(&'a str, Value, &'a str)];

async fn expect(home: &Home, table: Expectations<'_>) {
    for (tool, args, wanted) in table {
        let (_, text) = home.text(tool, args.clone()).await;
        assert!(
            text.contains(wanted),
            "{tool} {args}: {text:?} lacks {wanted:?}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn states_kinds_and_readings_read_the_same_in_every_tool() {
    let home = Home::start().await;
    expect(
        &home,
        &[
            ("list_zwave_devices", json!({}), "- Hallway Motion (node 5, Hallway): sensor, 120 Lux, motion sensor status: idle, battery 64%"),
            ("get_device_sensor_data", json!({"deviceName": "Hallway Motion"}), "- Motion sensor status: idle (updated "),
            ("get_device_sensor_data", json!({"deviceName": "Switch One"}), "- Current value: off (updated "),
            ("get_device_status", json!({"deviceName": "Switch One"}), "\"Switch One\" (node 2, Kitchen) is a switch, online (node status Alive): off, 12.34 kWh, 0 W."),
            ("get_device_status", json!({"deviceName": "Office Temperature"}), "is a sensor, online (node status Alive): 21.5 °C, 45 %, battery 87%."),
            ("get_device_status", json!({"deviceName": "Garage Light"}), "is a switch, offline (node status Dead): offline (Dead)."),
        ],
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_node_being_interviewed_says_so_in_words() {
    let home = Home::start().await;
    home.sim.stop_zwave_js_ui().await;
    home.sim.announce_online().await;
    home.sim.driver_up_with_unready_nodes().await;
    home.network.reload_nodes().await.unwrap();
    expect(
        &home,
        &[(
            "get_device_status",
            json!({"deviceName": "Node 3"}),
            "\"Living Room Light\" (node 3, Living Room) is still being interviewed by Z-Wave JS (it restarted or the device was just added): what it is and its state are not known yet; online (node status Unknown).",
        )],
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_the_gateway_offline_the_status_is_the_last_known_and_a_refresh_is_refused_once() {
    let home = Home::start().await;
    let _ = home.ok("list_zwave_devices", json!({})).await;
    home.sim.announce_offline().await;
    assert!(
        home.wait_until(|state| state.gateway_online == Some(false))
            .await
    );
    expect(
        &home,
        &[
            ("get_device_status", json!({"deviceName": "Switch One"}), "is a switch, last known online (node status Alive): off, 12.34 kWh, 0 W."),
            ("get_device_sensor_data", json!({"deviceName": "Office Temperature", "refresh": true}), "\nCould not refresh the readings: the link to the devices is down (see above); these are the last known ones."),
        ],
    )
    .await;
    let (_, text) = home
        .text(
            "get_device_sensor_data",
            json!({"deviceName": "Office Temperature", "refresh": true}),
        )
        .await;
    assert_eq!(
        text.matches("Could not refresh").count(),
        1,
        "said once: {text}"
    );
    assert!(text.starts_with("Z-Wave JS UI is offline since "), "{text}");
}
