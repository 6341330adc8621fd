//! The writes of locks, thermostats, covers and sirens through the binary, over both
//! backends, against the simulated devices playing the real driver's sequences
//! (`fixtures/zwave-js-ui/classes/FACTS.md`): each confirmed only by the device's own report
//! of the new state, each refusal sending nothing (the simulated servers' record of writes).

use serde_json::json;

use crate::harness::{CALL_UNTIL_LIMIT, Conversation, per_backend};

/// The binary waits for the device's report, and may carry out what is sensitive unasked
/// (the asking itself is `sensitive.rs`'s).
const ARGS: [&str; 5] = [
    "--confirm-timeout",
    "5s",
    "--allow-sensitive",
    "lock,garage,siren",
    "--sensitive-without-confirmation",
];

per_backend! {
async fn a_lock_is_confirmed_by_its_operation_report(backend) {
    let home = TestHome::start(backend).await;
    let mut session = Conversation::over(&mut home.command(&ARGS));
    let (error, text, outcome) = session.call(
        "control_zwave_device",
        json!({"deviceName": "Front Door Lock", "action": "unlock"}),
    );
    assert!(!error, "{text}");
    assert_eq!(outcome["outcome"], "confirmed", "{text}");
    // The Operation Report gives the mode before the bolt (the real driver's order): the
    // answer is made at the mode, and the bolt may still be the one reported before.
    assert!(
        text.starts_with(
            "Front Door Lock unlocked; the device confirmed it (now unlocked, door closed, bolt "
        ),
        "{text}"
    );
    let (error, text, _) = session.call(
        "control_zwave_device",
        json!({"deviceName": "Front Door Lock", "action": "lock"}),
    );
    assert!(!error, "{text}");
    assert!(
        text.starts_with(
            "Front Door Lock locked; the device confirmed it (now locked, door closed, bolt "
        ),
        "{text}"
    );
    // The bolt jams: the lock says so (a notification), then that it is still locked.
    home.set_jammed(8, true);
    let (error, text, outcome) = session.call(
        "control_zwave_device",
        json!({"deviceName": "Front Door Lock", "action": "unlock"}),
    );
    assert!(error, "{text}");
    assert_eq!(outcome["outcome"], "contradicted", "{text}");
    assert!(
        text.starts_with("Front Door Lock did not change: the command to unlock was acknowledged at ")
            && text.contains("but the device then reported it is still jammed (locked), door closed, bolt locked."),
        "{text}"
    );
    home.set_jammed(8, false);
    let (error, text, _) = session.call(
        "control_zwave_device",
        json!({"deviceName": "Front Door Lock", "action": "on"}),
    );
    assert!(error);
    assert_eq!(
        text,
        "\"Front Door Lock\" (node 8, Entrance) is a lock and cannot take action \"on\": use \"lock\" or \"unlock\""
    );
    assert_eq!(
        home.writes(),
        [
            ("8-98-0-targetMode".to_owned(), json!(0)),
            ("8-98-0-targetMode".to_owned(), json!(255)),
            ("8-98-0-targetMode".to_owned(), json!(0)),
        ]
    );
    session.finish();
}

async fn a_setpoint_and_a_mode_are_confirmed_and_a_setpoint_out_of_range_is_never_sent(backend) {
    let home = TestHome::start(backend).await;
    let mut session = Conversation::over(&mut home.command(&ARGS));
    let (error, text, outcome) = session.call(
        "control_zwave_device",
        json!({"deviceName": "Thermostat", "action": "set_temperature", "temperature": 21.5}),
    );
    assert!(!error, "{text}");
    assert_eq!(outcome["outcome"], "confirmed", "{text}");
    assert_eq!(
        text,
        "Thermostat set to 21.5 °C (heating setpoint); the device confirmed it (now heat to 21.5 °C, 19.5 °C now, idle)."
    );
    let (error, text, _) = session.call(
        "control_zwave_device",
        json!({"deviceName": "Thermostat", "action": "set_temperature", "temperature": 40}),
    );
    assert!(error);
    assert_eq!(
        text,
        "40 °C is outside what \"Thermostat\" (node 9, Living Room) may be set to: use 5 to 30 °C (the device's range)"
    );
    let (error, text, _) = session.call(
        "control_zwave_device",
        json!({"deviceName": "Thermostat", "action": "set_mode", "mode": "cool"}),
    );
    assert!(!error, "{text}");
    assert_eq!(
        text,
        "Thermostat set to cool mode; the device confirmed it (now cool to 26 °C, 19.5 °C now, idle)."
    );
    assert_eq!(
        home.writes(),
        [
            ("9-67-0-setpoint-1".to_owned(), json!(21.5)),
            ("9-64-0-mode".to_owned(), json!(2)),
        ]
    );
    session.finish();
}

async fn a_blind_is_confirmed_when_its_travel_ends_and_a_garage_door_when_it_is_open(backend) {
    let home = TestHome::start(backend).await;
    let mut session = Conversation::over(&mut home.command(&ARGS));
    let (error, text, outcome) = session.call(
        "control_zwave_device",
        json!({"deviceName": "Bedroom Blind", "action": "set_position", "level": 60}),
    );
    assert!(!error, "{text}");
    assert_eq!(outcome["outcome"], "confirmed", "{text}");
    assert_eq!(
        text,
        "Bedroom Blind moved to 60% open; the device confirmed it (now open 60%)."
    );
    let (error, text, _) = session.call(
        "control_zwave_device",
        json!({"deviceName": "Bedroom Blind", "action": "stop"}),
    );
    assert!(!error, "{text}");
    assert_eq!(text, "Bedroom Blind stopped; the device confirmed it (now open 60%).");
    // Opening is reported first (254): not open yet, so not confirmed until it is.
    let (error, text, outcome) = session.call(
        "control_zwave_device",
        json!({"deviceName": "Garage Door", "action": "open"}),
    );
    assert!(!error, "{text}");
    assert_eq!(outcome["outcome"], "confirmed", "{text}");
    assert_eq!(text, "Garage Door opened; the device confirmed it (now open).");
    assert_eq!(
        home.writes(),
        [
            ("10-106-0-targetValue-13".to_owned(), json!(60)),
            ("10-106-0-levelChangeUp-13".to_owned(), json!(false)),
            ("11-102-0-targetState".to_owned(), json!(255)),
        ]
    );
    session.finish();
}

async fn a_siren_is_confirmed_by_its_tone_and_the_tone_ending_is_not_held_against_it(backend) {
    let home = TestHome::start(backend).await;
    let mut session = Conversation::over(&mut home.command(&ARGS));
    let (error, text, outcome) = session.call(
        "control_zwave_device",
        json!({"deviceName": "Hallway Siren", "action": "sound", "tone": "doorbell"}),
    );
    assert!(!error, "{text}");
    assert_eq!(outcome["outcome"], "confirmed", "{text}");
    assert!(text.starts_with("Hallway Siren sounding \"Doorbell\"; the device confirmed it"), "{text}");
    // The tone ends and the siren reports 0: the command stays confirmed.
    let status = session.call_until(
        "get_device_status",
        &json!({"deviceName": "Hallway Siren"}),
        CALL_UNTIL_LIMIT,
        |_, text| text.contains(": silent."),
    ).1;
    assert!(!status.contains("did not change"), "{status}");
    session.finish();
}

async fn a_colour_is_confirmed_when_the_device_reports_every_channel_it_was_given(backend) {
    let home = TestHome::start(backend).await;
    let mut session = Conversation::over(&mut home.command(&ARGS));
    let (error, text, outcome) = session.call(
        "control_zwave_device",
        json!({"deviceName": "Reading Lamp", "action": "on"}),
    );
    assert!(!error, "{text}");
    assert_eq!(outcome["outcome"], "confirmed", "{text}");
    let (error, text, outcome) = session.call(
        "control_zwave_device",
        json!({"deviceName": "Reading Lamp", "action": "set_color", "color": "warm white"}),
    );
    assert!(!error, "{text}");
    assert_eq!(outcome["outcome"], "confirmed", "{text}");
    assert_eq!(
        text,
        "Reading Lamp set to warm white; the device confirmed it (now on at 100%, warm white)."
    );
    // Green after warm white: its red channel (0) is as asked already, its green is not: not
    // "already green" (found on the real gateway, where the first channel alone was looked at).
    let (error, text, _) = session.call(
        "control_zwave_device",
        json!({"deviceName": "Reading Lamp", "action": "set_color", "color": "green"}),
    );
    assert!(!error, "{text}");
    assert_eq!(
        text,
        "Reading Lamp set to green (#00ff00); the device confirmed it (now on at 100%, colour #00ff00)."
    );
    let (_, text, _) = session.call(
        "control_zwave_device",
        json!({"deviceName": "Reading Lamp", "action": "set_color", "color": "green"}),
    );
    assert!(text.starts_with("Reading Lamp was already green (#00ff00); the device confirmed it"), "{text}");
    let (error, text, _) = session.call(
        "control_zwave_device",
        json!({"deviceName": "Reading Lamp", "action": "set_color", "color": "ultraviolet"}),
    );
    assert!(error && text.starts_with("\"Reading Lamp\" (node 12, Living Room) has no colour \"ultraviolet\""), "{text}");
    assert_eq!(
        home.writes().last().cloned(),
        Some((
            "12-51-0-targetColor".to_owned(),
            json!({"red": 0, "green": 255, "blue": 0, "warmWhite": 0, "coldWhite": 0})
        ))
    );
    session.finish();
}

async fn a_scene_buttons_last_event_is_read_with_when_it_came(backend) {
    let home = TestHome::start(backend).await;
    let mut session = Conversation::over(&mut home.command(&[]));
    let (error, text, _) = session.call(
        "get_device_sensor_data",
        json!({"deviceName": "Bedside Remote"}),
    );
    assert!(!error, "{text}");
    assert!(text.contains("- Scene 001: not pressed yet\n"), "{text}");
    home.notify(15, "91-0-scene-001", json!(3)).await;
    let text = session.call_until(
        "get_device_sensor_data",
        &json!({"deviceName": "Bedside Remote"}),
        CALL_UNTIL_LIMIT,
        |_, text| text.contains("- Scene 001: pressed 2 times (updated "),
    ).1;
    assert!(text.contains("- Scene 002: not pressed yet"), "{text}");
    let (_, list, _) = session.call("list_zwave_devices", json!({"filter": "remote"}));
    assert!(
        list.contains("- Bedside Remote (node 15, Bedroom): sensor, scene 001: pressed 2 times, battery 90%"),
        "{list}"
    );
    session.finish();
}
}
