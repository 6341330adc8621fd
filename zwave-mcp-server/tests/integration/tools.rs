//! Every tool's success path and every error path, over MCP, against the simulated home.

use std::time::Duration;

use serde_json::json;
use zwave_mcp_server::sim::SimOptions;

use crate::harness::Home;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn list_shows_devices_but_not_the_controller_or_virtual_nodes() {
    let home = Home::start().await;
    let list = home.ok("list_zwave_devices", json!({})).await;
    let names: Vec<&str> = list["devices"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "Switch One",
            "Living Room Light",
            "Office Temperature",
            "Hallway Motion",
            "Node 6"
        ]
    );
    assert_eq!(list["hiddenInactive"], 1);
    let (is_error, text) = home.text("list_zwave_devices", json!({})).await;
    assert!(!is_error);
    assert_eq!(
        text,
        "5 Z-Wave devices:\n\
         - Switch One (node 2, Kitchen): switch, off, 12.34 kWh, 0 W\n\
         - Living Room Light (node 3, Living Room): dimmer, off\n\
         - Office Temperature (node 4, Office): sensor, 21.5 °C, 45 %, battery 87%\n\
         - Hallway Motion (node 5, Hallway): sensor, 120 Lux, motion sensor status: idle, battery 64%\n\
         - Node 6 (node 6): switch, on\n\
         1 offline device not shown (includeInactive: true lists them)."
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn list_includes_inactive_devices_and_filters_by_name_or_location() {
    let home = Home::start().await;
    let all = home
        .ok("list_zwave_devices", json!({"includeInactive": true}))
        .await;
    let garage = &all["devices"][5];
    assert_eq!(garage["name"], "Garage Light");
    assert_eq!(garage["online"], false);
    assert_eq!(garage["status"], "Dead");
    assert_eq!(garage["state"], "offline (Dead)");
    assert_eq!(garage["kind"], "switch");

    let kitchen = home
        .ok("list_zwave_devices", json!({"filter": "KITCHEN"}))
        .await;
    assert_eq!(kitchen["devices"].as_array().unwrap().len(), 1);
    assert_eq!(kitchen["devices"][0]["nodeId"], 2);
    let lights = home
        .ok(
            "list_zwave_devices",
            json!({"filter": "light", "includeInactive": true}),
        )
        .await;
    assert_eq!(lights["devices"].as_array().unwrap().len(), 2);

    let (is_error, text) = home
        .text("list_zwave_devices", json!({"filter": "attic"}))
        .await;
    assert!(!is_error);
    assert_eq!(text, "No Z-Wave device matches \"attic\".");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn switch_on_and_off_are_written_and_confirmed() {
    let home = Home::start().await;
    let outcome = home
        .ok(
            "control_zwave_device",
            json!({"deviceName": "Switch One", "action": "on"}),
        )
        .await;
    assert_eq!(outcome["written"], true);
    assert_eq!(outcome["status"], 254);
    assert_eq!(outcome["confirmed"], true);
    assert_eq!(outcome["state"], "on, 12.34 kWh, 42.5 W");
    assert_eq!(home.sim.value(2, "37-0-currentValue"), Some(json!(true)));

    let (is_error, text) = home
        .text(
            "control_zwave_device",
            json!({"deviceName": "switch one", "action": "off"}),
        )
        .await;
    assert!(!is_error);
    assert_eq!(
        text,
        "Switch One switched off; the device confirmed it (now off, 12.34 kWh, 0 W)."
    );
    assert_eq!(home.sim.value(2, "37-0-targetValue"), Some(json!(false)));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dimmer_levels_are_clamped_and_on_restores_the_last_level() {
    let home = Home::start().await;
    let light = json!({"deviceName": "Living Room Light", "action": "dim", "level": 40});
    let (_, text) = home.text("control_zwave_device", light).await;
    assert_eq!(
        text,
        "Living Room Light dimmed to 40%; the device confirmed it (now on at 40%)."
    );
    assert_eq!(home.sim.value(3, "38-0-currentValue"), Some(json!(40)));

    let full = home
        .ok(
            "control_zwave_device",
            json!({"deviceName": "Living Room Light", "action": "dim", "level": 100}),
        )
        .await;
    assert_eq!(full["written"], 99, "100% is Z-Wave level 99");
    assert_eq!(full["state"], "on at 100%");

    home.ok(
        "control_zwave_device",
        json!({"deviceName": "Living Room Light", "action": "dim", "level": 30}),
    )
    .await;
    let off = home
        .ok(
            "control_zwave_device",
            json!({"deviceName": "Living Room Light", "action": "off"}),
        )
        .await;
    assert_eq!(off["written"], 0);
    assert_eq!(off["state"], "off");
    let on = home
        .ok(
            "control_zwave_device",
            json!({"deviceName": "Living Room Light", "action": "on"}),
        )
        .await;
    assert_eq!(
        on["written"], 255,
        "on asks the device to restore its last level"
    );
    assert_eq!(on["confirmed"], true);
    assert_eq!(home.sim.value(3, "38-0-currentValue"), Some(json!(30)));

    let dim_zero = home
        .ok(
            "control_zwave_device",
            json!({"deviceName": "Living Room Light", "action": "dim", "level": 0}),
        )
        .await;
    assert_eq!(dim_zero["state"], "off");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn control_refuses_what_cannot_be_done_with_a_clear_message() {
    let home = Home::start().await;
    let cases = [
        (
            json!({"deviceName": "Office Temperature", "action": "on"}),
            "\"Office Temperature\" (node 4, Office) is a sensor and cannot be switched: only switches and dimmers accept \"on\", \"off\" and \"dim\"",
        ),
        (
            json!({"deviceName": "Living Room Light", "action": "dim"}),
            "action \"dim\" needs a level from 0 to 100 for \"Living Room Light\" (node 3, Living Room)",
        ),
        (
            json!({"deviceName": "Living Room Light", "action": "dim", "level": 150}),
            "level 150 is out of range for \"Living Room Light\" (node 3, Living Room): use 0 to 100 (0 is off, 100 is full brightness)",
        ),
        (
            json!({"deviceName": "Living Room Light", "action": "dim", "level": -5}),
            "level -5 is out of range for \"Living Room Light\" (node 3, Living Room): use 0 to 100 (0 is off, 100 is full brightness)",
        ),
        (
            json!({"deviceName": "Switch One", "action": "dim", "level": 50}),
            "\"Switch One\" (node 2, Kitchen) is an on/off switch and cannot be dimmed: use action \"on\" or \"off\"",
        ),
        (
            json!({"deviceName": "Garage Light", "action": "on"}),
            "\"Garage Light\" (node 7, Garage) is offline (status Dead) and cannot be controlled until it is reachable again",
        ),
        (
            json!({"deviceName": "light", "action": "on"}),
            "\"light\" matches 2 devices: \"Living Room Light\" (node 3, Living Room), \"Garage Light\" (node 7, Garage); say which one by its full name",
        ),
        (
            json!({"deviceName": "Kitchen Lamp", "action": "on"}),
            "no Z-Wave device matches \"Kitchen Lamp\" (closest: \"Switch One\", \"Garage Light\", \"Node 6\"); list_zwave_devices shows every device",
        ),
        (
            json!({"deviceName": "", "action": "on"}),
            "deviceName is empty: give a device name as shown by list_zwave_devices",
        ),
    ];
    for (args, expected) in cases {
        assert_eq!(home.err("control_zwave_device", args).await, expected);
    }
    // Nothing was written by any refused call.
    assert_eq!(home.sim.value(3, "38-0-targetValue"), Some(json!(0)));
    assert_eq!(home.sim.value(2, "37-0-targetValue"), Some(json!(false)));
}

/// rmcp reports arguments that do not deserialize as an `isError` result (MCP 2025-11-25:
/// input validation errors are tool errors the model can correct), naming the valid values.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn malformed_arguments_are_refused_with_the_valid_values() {
    let home = Home::start().await;
    assert_eq!(
        home.err(
            "control_zwave_device",
            json!({"deviceName": "Switch One", "action": "toggle"})
        )
        .await,
        "failed to deserialize parameters: unknown variant `toggle`, expected one of `on`, `off`, `dim`"
    );
    let text = home
        .err("control_zwave_device", json!({"action": "on"}))
        .await;
    assert_eq!(
        text,
        "failed to deserialize parameters: missing field `deviceName`"
    );
    assert_eq!(home.sim.value(2, "37-0-targetValue"), Some(json!(false)));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failed_write_names_the_status() {
    let home = Home::start().await;
    home.sim.set_write_status(Some(2));
    assert_eq!(
        home.err(
            "control_zwave_device",
            json!({"deviceName": "Switch One", "action": "on"})
        )
        .await,
        "could not switch \"Switch One\": writing true to 2-37-0-targetValue failed with status 2 (Fail)"
    );
    home.sim.set_write_status(Some(5));
    let text = home
        .err(
            "control_zwave_device",
            json!({"deviceName": "Node 6", "action": "off"}),
        )
        .await;
    assert_eq!(
        text,
        "could not switch \"Node 6\": writing false to 6-37-0-targetValue failed with status 5 (InvalidValue)"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unconfirmed_write_is_reported_as_such() {
    let home = Home::start_with(
        SimOptions::default(),
        Duration::from_secs(2),
        Duration::from_millis(300),
    )
    .await;
    home.sim.set_confirm_writes(false);
    let result = home
        .call(
            "control_zwave_device",
            json!({"deviceName": "Switch One", "action": "on"}),
        )
        .await;
    assert_eq!(result.is_error, Some(false));
    assert_eq!(
        result.structured_content.as_ref().unwrap()["confirmed"],
        false
    );
    assert_eq!(
        crate::harness::text_of(&result),
        "Switch One switched on: Z-Wave JS UI accepted the command (status 254), but the device has not confirmed its new state within 300ms (last known: off, 12.34 kWh, 0 W)."
    );
}

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
            state.nodes[&zwave_mcp_server::gateway::NodeId(5)].values["113-0-Home Security-Motion sensor status"].value
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
        lines[2].starts_with("- Motion sensor status: Motion detection (8) (updated "),
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
    let home = Home::start().await;
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
        "could not switch \"Switch One\": zwave-js-ui did not answer `writeValue` within 400ms: is gateway `zwave-js-ui` running with its MQTT gateway enabled, and do --topic-prefix `zwave` and --gateway-name match its settings? (see --api-timeout)"
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
            state.nodes[&zwave_mcp_server::gateway::NodeId(6)].status
                == Some(zwave_mcp_server::gateway::NodeStatus::Dead)
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
            state.nodes[&zwave_mcp_server::gateway::NodeId(6)].status
                == Some(zwave_mcp_server::gateway::NodeStatus::Alive)
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
async fn control_refuses_partial_names_and_switches_nothing() {
    let home = Home::start().await;
    // "it" is inside "Kitchen" and "Switch One": enough to read, never to switch.
    let refused = home
        .err(
            "control_zwave_device",
            json!({"deviceName": "it", "action": "on"}),
        )
        .await;
    assert_eq!(
        refused,
        "\"it\" is only part of a device name (\"Switch One\" (node 2, Kitchen)); to switch a device, give its full name, \"location name\" or `Node <id>`"
    );
    let bare = home
        .err(
            "control_zwave_device",
            json!({"deviceName": "2", "action": "on"}),
        )
        .await;
    assert!(
        bare.starts_with("\"2\" is only part of a device name"),
        "{bare}"
    );
    let status = home
        .ok("get_device_status", json!({"deviceName": "it"}))
        .await;
    assert_eq!(status["device"], "Switch One");
    assert_eq!(status["on"], false);
    // Whole words are beyond doubt.
    let done = home
        .ok(
            "control_zwave_device",
            json!({"deviceName": "kitchen switch", "action": "on"}),
        )
        .await;
    assert_eq!(done["device"], "Switch One");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_huge_device_name_is_refused_at_once() {
    let home = Home::start().await;
    let message = home
        .err(
            "control_zwave_device",
            json!({"deviceName": "x".repeat(5_000_000), "action": "on"}),
        )
        .await;
    assert_eq!(
        message,
        "deviceName is 5000000 characters long; device names are at most 256: give a device name as shown by list_zwave_devices"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_value_cached_before_the_write_never_confirms_it() {
    let home = Home::start().await;
    // Node 6 is on already; its device stops answering, so no report follows the write.
    home.sim.set_confirm_writes(false);
    let outcome = home
        .ok(
            "control_zwave_device",
            json!({"deviceName": "Node 6", "action": "on"}),
        )
        .await;
    assert_eq!(outcome["confirmed"], false, "{outcome}");
    assert_eq!(outcome["already"], true);
    let (_, text) = home
        .text(
            "control_zwave_device",
            json!({"deviceName": "Node 6", "action": "on"}),
        )
        .await;
    assert!(
        text.starts_with("Node 6 switched on: Z-Wave JS UI accepted the command (status 254), but the device has not confirmed its new state within"),
        "{text}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_switch_already_on_says_so_when_the_device_confirms() {
    let home = Home::start().await;
    let (is_error, text) = home
        .text(
            "control_zwave_device",
            json!({"deviceName": "Node 6", "action": "on"}),
        )
        .await;
    assert!(!is_error);
    assert_eq!(
        text,
        "Node 6 was already on; the device confirmed it (now on)."
    );
    let outcome = home
        .ok(
            "control_zwave_device",
            json!({"deviceName": "Node 6", "action": "off"}),
        )
        .await;
    assert_eq!(outcome["already"], false);
    assert_eq!(outcome["confirmed"], true);
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
    assert_eq!(text.lines().nth(1), Some("5 Z-Wave devices:"));
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
