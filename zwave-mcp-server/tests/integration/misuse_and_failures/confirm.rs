//! "Confirmed" only when the device said so, through the binary, against the simulator
//! playing the real driver's sequence for an unsupervised Set: the optimistic
//! echo before the reply, the device's verification report after it (or the old state, for a
//! stuck device), a supervised success with nothing after it. Each over both backends (the
//! simulated servers send these in their own orders: Z-Wave JS UI the echo before the reply,
//! zwave-js-server after an unsupervised write's result).

use serde_json::{Value, json};

use crate::harness::{Conversation, answer, messages, per_backend};

fn structured(output: &std::process::Output, id: u64) -> Value {
    messages(output)
        .into_iter()
        .find(|message| message["id"] == json!(id))
        .map(|message| message["result"]["structuredContent"].clone())
        .unwrap_or_default()
}

per_backend! {
async fn the_optimistic_echo_never_confirms_and_never_becomes_the_state(backend) {
    let home = TestHome::start(backend).await;
    // The device acknowledges and never reports: all there is, is zwave-js's echo.
    home.set_confirm_writes(false);
    let mut session = Conversation::over(&mut home.command(&["--confirm-timeout", "1s"]));
    let (error, text, outcome) = session.call(
        "control_zwave_device",
        json!({"deviceName": "Switch One", "action": "on"}),
    );
    assert!(!error, "{text}");
    // Z-Wave JS UI stamps every value with when it was reported; zwave-js-server does not,
    // and no time is made up for it.
    let last = match home.backend() {
        Backend::Mqtt => "The last state it reported itself: off, 12.34 kWh, 0 W at ",
        Backend::ZwaveJsServer => "The last state it reported itself: off, 12.34 kWh, 0 W. ",
    };
    assert!(
        text.starts_with("Switch One: the command to switch on was sent and acknowledged at ")
            && text.contains("the device has not reported its new state yet (waited 1s;")
            && text.contains(last),
        "{text}"
    );
    assert_eq!(outcome["outcome"], "acknowledged");
    assert!(!text.contains("confirmed"), "{text}");
    let (_, status, structured) =
        session.call("get_device_status", json!({"deviceName": "Switch One"}));
    assert!(
        status.contains(": off, 12.34 kWh, 0 W."),
        "the echo is not the state: {status}"
    );
    assert!(
        status.contains(" The command to switch on was acknowledged at ")
            && status.ends_with("; the device has not reported its new state since."),
        "{status}"
    );
    assert_eq!(structured["on"], false);
    session.finish();
}

async fn a_stuck_device_is_reported_as_unchanged_by_the_command_and_the_next_read(backend) {
    let home = TestHome::start(backend).await;
    home.set_stuck(2, true);
    home.set_stuck(3, true);
    let mut session = Conversation::over(&mut home.command(&["--confirm-timeout", "5s"]));
    let (error, text, outcome) = session.call(
        "control_zwave_device",
        json!({"deviceName": "Switch One", "action": "on"}),
    );
    assert!(
        error,
        "a device that did not do it is an error for the model: {text}"
    );
    assert!(
        text.starts_with("Switch One did not change: the command to switch on was acknowledged at ")
            && text.ends_with(", but the device then reported it is still off, 12.34 kWh, 0 W. It may be stuck or without power: check it before trying again."),
        "{text}"
    );
    assert_eq!(outcome["outcome"], "contradicted");
    assert_eq!(outcome["confirmed"], false);
    let (error, text, _) = session.call(
        "control_zwave_device",
        json!({"deviceName": "Living Room Light", "action": "dim", "level": 40}),
    );
    assert!(
        error
            && text.starts_with(
                "Living Room Light did not change: the command to dim to 40% was acknowledged at "
            )
            && text.contains("the device then reported it is still off."),
        "{text}"
    );
    let (_, status, structured) =
        session.call("get_device_status", json!({"deviceName": "Switch One"}));
    assert!(
        status.contains("Switch One did not change: it still reports off, 12.34 kWh, 0 W; the command to switch on was acknowledged at "),
        "{status}"
    );
    assert!(structured["lastCommand"].as_str().is_some(), "{structured}");
    let (_, list, structured) = session.call("list_zwave_devices", json!({}));
    assert!(
        list.contains("\n  Node 3: Living Room Light did not change: it still reports off; the command to dim to 40% was acknowledged at "),
        "{list}"
    );
    assert_eq!(structured["commands"].as_array().map(Vec::len), Some(2));
    session.finish();
}

async fn the_devices_own_report_confirms_and_a_supervised_success_confirms_at_once(backend) {
    let home = TestHome::start(backend).await;
    home.set_supervised(6, true);
    let output = home
        .run(
            &["--confirm-timeout", "5s"],
            &[
                (
                    "control_zwave_device",
                    json!({"deviceName": "Switch One", "action": "on"}),
                ),
                // 255: the dimmer restores its last level, and reports it.
                (
                    "control_zwave_device",
                    json!({"deviceName": "Living Room Light", "action": "on"}),
                ),
                (
                    "control_zwave_device",
                    json!({"deviceName": "Node 6", "action": "off"}),
                ),
                ("get_device_status", json!({"deviceName": "Switch One"})),
            ],
        )
        .await;
    assert_eq!(
        answer(&output, 2),
        (
            false,
            "Switch One switched on; the device confirmed it (now on, 12.34 kWh, 42.5 W)."
                .to_owned()
        )
    );
    assert_eq!(
        answer(&output, 3),
        (
            false,
            "Living Room Light switched on; the device confirmed it (now on at 100%).".to_owned()
        )
    );
    assert_eq!(
        answer(&output, 4),
        (
            false,
            "Node 6 switched off; the device confirmed it (now off).".to_owned()
        )
    );
    assert_eq!(structured(&output, 4)["status"], 255);
    assert_eq!(structured(&output, 4)["outcome"], "confirmed");
    let (_, status) = answer(&output, 5);
    assert!(
        !status.contains("command"),
        "a confirmed command needs no note: {status}"
    );
}

async fn of_two_overlapping_commands_the_first_says_the_second_superseded_it(backend) {
    let home = TestHome::start(backend).await;
    // The first command waits for a report the device sends ~150 ms later; the second is
    // sent once the first reached the gateway, so it replaces the first's verification.
    let mut session = Conversation::over(&mut home.command(&["--confirm-timeout", "3s"]));
    let first = session.send(
        "control_zwave_device",
        json!({"deviceName": "Living Room Light", "action": "dim", "level": 30}),
    );
    assert!(
        home.writes_arrive(1, std::time::Duration::from_secs(10))
            .await
    );
    let second = session.send(
        "control_zwave_device",
        json!({"deviceName": "Living Room Light", "action": "dim", "level": 60}),
    );
    let (error, text, outcome) = session.answer(first);
    assert!(
        !error
            && text
                .starts_with("Living Room Light: the command to dim to 30% was acknowledged at ")
            && text.contains(
                ", but a later command to dim to 60% superseded it; the device now reports on at "
            ),
        "{text}"
    );
    assert_eq!(outcome["outcome"], "superseded");
    assert_eq!(outcome["supersededBy"], "dim to 60%");
    let (error, text, _) = session.answer(second);
    assert_eq!(
        (error, text.as_str()),
        (
            false,
            "Living Room Light dimmed to 60%; the device confirmed it (now on at 60%)."
        )
    );
    session.finish();
}

async fn a_command_superseded_by_another_server_says_so(backend) {
    let home = TestHome::start(backend).await;
    let mut first = Conversation::over(&mut home.command(&["--confirm-timeout", "3s"]));
    let mut second = Conversation::over(&mut home.command(&[]));
    let asked = first.send(
        "control_zwave_device",
        json!({"deviceName": "Living Room Light", "action": "dim", "level": 30}),
    );
    assert!(
        home.writes_arrive(1, std::time::Duration::from_secs(10))
            .await
    );
    let (error, _, _) = second.call(
        "control_zwave_device",
        json!({"deviceName": "Living Room Light", "action": "dim", "level": 60}),
    );
    assert!(!error);
    let (error, text, outcome) = first.answer(asked);
    assert!(
        !error
            && text.contains(", but a later command to dim to 60% (from another client) superseded it; the device now reports "),
        "{text}"
    );
    assert_eq!(outcome["outcome"], "superseded");
    first.finish();
    second.finish();
}
}

per_backend! {
/// zwave-js's optimistic value is in its cache, so in every reload of the whole state
/// (`getNodes`, `start_listening`), which an unknown name asks for: until the device reports,
/// its last report stays the state.
async fn a_reload_after_an_unconfirmed_write_keeps_the_devices_last_report(backend) {
    let home = TestHome::start(backend).await;
    // The switch ignores the command and sends no report: only a Get shows it is still off.
    home.set_stuck(2, true);
    home.set_confirm_writes(false);
    let mut session = Conversation::over(&mut home.command(&["--confirm-timeout", "1s"]));
    let (error, text, _) = session.call(
        "control_zwave_device",
        json!({"deviceName": "Switch One", "action": "on"}),
    );
    assert!(!error, "{text}");
    let (error, text, _) =
        session.call("get_device_status", json!({"deviceName": "Kitchen Toaster"}));
    assert!(
        error && text.starts_with("no Z-Wave device matches \"Kitchen Toaster\""),
        "{text}"
    );
    let (_, status, structured) =
        session.call("get_device_status", json!({"deviceName": "Switch One"}));
    if !status.contains(": off, 12.34 kWh, 0 W.") {
        let stderr = String::from_utf8_lossy(&session.finish().stderr).into_owned();
        panic!("the driver's optimistic value is not the state: {status}\n{stderr}");
    }
    // Kept from its last report, or (once the reload made the server ask) its answer.
    assert!(
        status.ends_with("; the device has not reported its new state since.")
            || status.contains("did not change: it still reports off"),
        "{status}"
    );
    assert_eq!(structured["on"], false);
    session.finish();
}

/// "Last heard from" is the device's last word: its report of a new level moves it.
async fn a_devices_report_moves_when_it_was_last_heard_from(backend) {
    let home = TestHome::start(backend).await;
    let mut session = Conversation::over(&mut home.command(&["--confirm-timeout", "5s"]));
    let (_, _, before) =
        session.call("get_device_status", json!({"deviceName": "Living Room Light"}));
    assert!(
        before["lastActiveAgeSeconds"].as_u64().unwrap() >= 45,
        "the demo's dimmer was last heard from 45 s before the start: {before}"
    );
    let (error, text, outcome) = session.call(
        "control_zwave_device",
        json!({"deviceName": "Living Room Light", "action": "dim", "level": 40}),
    );
    assert!(!error && outcome["outcome"] == "confirmed", "{text}");
    let (_, status, after) =
        session.call("get_device_status", json!({"deviceName": "Living Room Light"}));
    let age = after["lastActiveAgeSeconds"].as_u64().unwrap();
    assert!(age <= 5, "its report came {age} s ago by the status: {status}");
    assert!(
        status.contains(&format!(" Last heard from {age} s ago.")),
        "{status}"
    );
    session.finish();
}
}
