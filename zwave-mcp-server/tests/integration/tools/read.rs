//! `get_device_sensor_data` and `get_device_status`: every reading with its unit and state,
//! availability and battery, and refreshes refused for dead devices.

use serde_json::json;

use crate::harness::Home;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sensor_data_lists_every_reading_with_unit_and_state() {
    let home = Home::start().await;
    let data = home
        .ok(
            "get_device_sensor_data",
            json!({"deviceName": "Office Temperature"}),
        )
        .await;
    let readings = data["readings"].as_array().unwrap();
    let summary: Vec<(String, String, String)> = readings
        .iter()
        .map(|r| {
            (
                r["label"].to_string(),
                r["value"].to_string(),
                r["unit"].to_string(),
            )
        })
        .collect();
    assert_eq!(
        summary,
        [
            ("\"Air temperature\"".into(), "21.5".into(), "\"°C\"".into()),
            ("\"Humidity\"".into(), "45".into(), "\"%\"".into()),
            ("\"Battery level\"".into(), "87".into(), "\"%\"".into()),
        ]
    );
    assert!(readings.iter().all(|r| r["ageSeconds"].is_u64()));

    home.sim
        .press(5, "113-0-Home Security-Motion sensor status", json!(8))
        .await;
    assert!(
        home.wait_until(|state| {
            state.nodes[&zwave_mcp_server::network::NodeId(5)].values["113-0-Home Security-Motion sensor status"].value
                == Some(json!(8))
        })
        .await
    );
    let (_, text) = home
        .text(
            "get_device_sensor_data",
            json!({"deviceName": "hallway motion"}),
        )
        .await;
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(
        lines[0],
        "Readings of \"Hallway Motion\" (node 5, Hallway):"
    );
    assert!(
        lines[1].starts_with("- Illuminance: 120 Lux (updated "),
        "{text}"
    );
    assert!(
        lines[2].starts_with("- Motion sensor status: Motion detection (updated "),
        "{text}"
    );
    assert!(
        lines[3].starts_with("- Battery level: 64 % (updated "),
        "{text}"
    );

    let meter = home
        .ok(
            "get_device_sensor_data",
            json!({"deviceName": "Switch One", "refresh": true}),
        )
        .await;
    assert_eq!(meter["refreshed"], true);
    assert_eq!(meter["refreshErrors"], json!([]));
    let labels: Vec<&str> = meter["readings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["label"].as_str().unwrap())
        .collect();
    assert_eq!(
        labels,
        [
            "Current value",
            "Electric Consumption [kWh]",
            "Electric Consumption [W]"
        ]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn refreshing_a_dead_device_is_refused_but_its_last_values_are_readable() {
    let home = Home::start().await;
    assert_eq!(
        home.err(
            "get_device_sensor_data",
            json!({"deviceName": "Garage Light", "refresh": true})
        )
        .await,
        "\"Garage Light\" (node 7, Garage) is offline (status Dead): its values cannot be refreshed; call again without refresh for the last known readings"
    );
    let (is_error, text) = home
        .text(
            "get_device_sensor_data",
            json!({"deviceName": "Garage Light"}),
        )
        .await;
    assert!(!is_error);
    assert!(
        text.ends_with("The device is offline (status Dead): these are its last known values."),
        "{text}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn status_reports_state_availability_and_battery() {
    let home = Home::basic().await;
    home.ok(
        "control_zwave_device",
        json!({"deviceName": "Living Room Light", "action": "dim", "level": 55}),
    )
    .await;
    let light = home
        .ok(
            "get_device_status",
            json!({"deviceName": "Living Room Light"}),
        )
        .await;
    assert_eq!(light["on"], true);
    assert_eq!(light["level"], 55);
    assert_eq!(light["online"], true);
    assert_eq!(light["nodeStatus"], "Alive");
    assert_eq!(light["kind"], "dimmer");

    let sensor = home
        .ok(
            "get_device_status",
            json!({"deviceName": "Office Temperature"}),
        )
        .await;
    assert_eq!(sensor["battery"], 87);
    assert!(sensor.get("on").is_none());

    let (is_error, text) = home
        .text("get_device_status", json!({"deviceName": "Garage Light"}))
        .await;
    assert!(!is_error);
    assert!(
        text.starts_with("\"Garage Light\" (node 7, Garage) is a switch, offline (node status Dead): offline (Dead). Last heard from 3 days ago."),
        "{text}"
    );
    assert_eq!(
        home.err("get_device_status", json!({"deviceName": "Garage Door"}))
            .await,
        "no Z-Wave device matches \"Garage Door\" (closest: \"Garage Light\", \"Node 6\", \"Switch One\"); list_zwave_devices shows every device"
    );
}
