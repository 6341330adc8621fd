//! `control_zwave_device`: writes confirmed by the device, levels clamped, every refusal
//! (what cannot be done, malformed arguments, partial or huge names, failed and unconfirmed
//! writes) with its message, and no stale value taken as a confirmation.

use std::time::Duration;

use serde_json::json;
use zwave_mcp_server::sim::SimOptions;

use crate::harness::Home;

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
    let home = Home::basic().await;
    let cases = [
        (
            json!({"deviceName": "Office Temperature", "action": "on"}),
            "\"Office Temperature\" (node 4, Office) is a sensor and takes no actions: it can only be read (get_device_sensor_data, get_device_status)",
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
            "\"Switch One\" (node 2, Kitchen) is a switch and cannot take action \"dim\": use \"on\" or \"off\"",
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
        "failed to deserialize parameters: unknown variant `toggle`, expected one of `on`, `off`, `dim`, `lock`, `unlock`, `open`, `close`, `stop`, `set_position`, `set_temperature`, `set_mode`, `sound`, `silence`, `set_color`"
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

/// No refusal quotes a megabyte argument back: what serde would quote in full (an unknown
/// action, a string for a level) is refused before it is read, and names are quoted cut.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_megabyte_argument_is_never_echoed() {
    let home = Home::start().await;
    let huge = "x".repeat(1_000_000);
    let huge = huge.as_str();
    let calls = [
        (
            "control_zwave_device",
            json!({"deviceName": "Reading Lamp", "action": "set_color", "color": huge}),
        ),
        (
            "control_zwave_device",
            json!({"deviceName": "Hallway Siren", "action": "sound", "tone": huge}),
        ),
        (
            "control_zwave_device",
            json!({"deviceName": "Thermostat", "action": "set_mode", "mode": huge}),
        ),
        (
            "control_zwave_device",
            json!({"deviceName": "Switch One", "action": huge}),
        ),
        (
            "control_zwave_device",
            json!({"deviceName": "Switch One", "action": {huge: null}}),
        ),
        (
            "control_zwave_device",
            json!({"deviceName": "Living Room Light", "action": "dim", "level": huge}),
        ),
        ("list_zwave_devices", json!({"filter": huge})),
    ];
    for (tool, args) in calls {
        let text = home.err(tool, args).await;
        assert!(text.chars().count() < 1_000, "{tool}: {text:.300}");
    }
    assert_eq!(
        home.err(
            "control_zwave_device",
            json!({"deviceName": "Reading Lamp", "action": "set_color", "color": huge})
        )
        .await,
        "argument \"color\" holds a text 1000000 characters long; arguments are at most 256 characters: nothing was done"
    );
    assert!(
        home.sim
            .received()
            .iter()
            .all(|request| request.api != "writeValue")
    );
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
    let text = crate::harness::text_of(&result);
    assert!(
        text.starts_with("Switch One: the command to switch on was sent and acknowledged at ")
            && text.contains(" (status 254); the device has not reported its new state yet (waited 300ms; such a device usually reports within about 1 s). The last state it reported itself: off, 12.34 kWh, 0 W at ")
            && text.ends_with(". get_device_status tells what became of it."),
        "{text}"
    );
    assert_eq!(
        result.structured_content.as_ref().unwrap()["outcome"],
        "acknowledged"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn control_refuses_partial_names_and_switches_nothing() {
    let home = Home::basic().await;
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
    // Node 6 is on already; its device stops answering: no report follows the write, and a
    // Get of its state gets no answer either.
    home.sim.set_confirm_writes(false);
    home.sim.set_refusal(
        "pollValue",
        Some("the node did not acknowledge the command (ZW0204)"),
    );
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
        text.starts_with("Node 6: the command to switch on was sent and acknowledged at "),
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
