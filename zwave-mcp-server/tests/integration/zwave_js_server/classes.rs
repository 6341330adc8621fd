//! Device classes beyond switches against the real zwave-js 15.29.0 behind the real
//! zwave-js-server 3.10.2, on zwave-js's mock controller with the lab's network (node 5 a door lock, 6 a thermostat, 7 a
//! window-covering blind, 8 a colour bulb, 9 a siren, 15 a motor blind): each write through
//! the binary, as a model makes it, confirmed by the device's own report (a blind stopped on
//! its way, a siren silenced while it sounds, a stuck lock contradicted); then the state read
//! back from the driver by another client, not from the binary's cache.

use std::time::Duration;

use serde_json::{Value, json};
use test_support::zwave_js::ZwaveJsServer;
use zwave_mcp_server::network::zwave_js_server::ZwaveJsServerClient;

use crate::harness::{Conversation, cache_until, cached_value, command, other_client};

/// The value `property` (`key`) of command class `cc` of `node`, as the driver has it.
async fn driver_value(
    client: &ZwaveJsServerClient,
    node: u16,
    cc: u16,
    property: &str,
    key: Option<i64>,
) -> Value {
    let mut value_id = json!({"commandClass": cc, "property": property});
    if let Some(key) = key {
        value_id["propertyKey"] = json!(key);
    }
    let result = client
        .request(
            "node.get_value",
            json!({"nodeId": node, "valueId": value_id}),
            Duration::from_secs(10),
        )
        .await
        .unwrap();
    result.get("value").cloned().unwrap_or(result)
}

/// A write through the binary that the device must confirm.
fn confirmed(session: &mut Conversation, args: Value) -> String {
    let (error, text, outcome) = session.call("control_zwave_device", args.clone());
    assert!(!error, "{args}: {text}");
    assert_eq!(outcome["outcome"], "confirmed", "{args}: {text}");
    text
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn locks_thermostats_blinds_colour_lights_and_sirens_are_confirmed_by_the_real_driver() {
    let server = ZwaveJsServer::start();
    let other = other_client(&server).await;
    let mut session = Conversation::over(
        command(&["--zwave-js-url", &server.url])
            .args(["--confirm-timeout", "10s", "--api-timeout", "5s"])
            .args([
                "--allow-sensitive",
                "lock,siren",
                "--sensitive-without-confirmation",
            ]),
    );

    // The lock: its Operation Report (~5 s after the Set) confirms each.
    confirmed(
        &mut session,
        json!({"deviceName": "Node 5", "action": "lock"}),
    );
    assert_eq!(
        driver_value(&other, 5, 98, "currentMode", None).await,
        json!(255)
    );
    let text = confirmed(
        &mut session,
        json!({"deviceName": "Node 5", "action": "unlock"}),
    );
    assert!(
        text.starts_with("Node 5 unlocked; the device confirmed it"),
        "{text}"
    );
    assert_eq!(
        driver_value(&other, 5, 98, "currentMode", None).await,
        json!(0)
    );

    // The thermostat: mode, then the heating setpoint; one outside the device's range
    // (which the driver would take and the device undo) is never sent.
    confirmed(
        &mut session,
        json!({"deviceName": "Node 6", "action": "set_mode", "mode": "heat"}),
    );
    assert_eq!(driver_value(&other, 6, 64, "mode", None).await, json!(1));
    confirmed(
        &mut session,
        json!({"deviceName": "Node 6", "action": "set_temperature", "temperature": 21}),
    );
    assert_eq!(
        driver_value(&other, 6, 67, "setpoint", Some(1)).await,
        json!(21)
    );
    let (error, text, _) = session.call(
        "control_zwave_device",
        json!({"deviceName": "Node 6", "action": "set_temperature", "temperature": 40}),
    );
    assert!(error && text.starts_with("40 °C is outside what"), "{text}");
    assert_eq!(
        driver_value(&other, 6, 67, "setpoint", Some(1)).await,
        json!(21)
    );

    // The blind: no optimistic position; the end of its travel confirms it.
    let text = confirmed(
        &mut session,
        json!({"deviceName": "Node 7", "action": "open"}),
    );
    assert!(
        text.starts_with("Node 7 opened; the device confirmed it"),
        "{text}"
    );
    assert_eq!(
        driver_value(&other, 7, 106, "currentValue", Some(13)).await,
        json!(99)
    );
    // Stopped on its way down: the close is sent, and once the driver shows it under way
    // (its target is 0), the stop; the blind reports where it stopped, which confirms the stop
    // and supersedes the close.
    let close = session.send(
        "control_zwave_device",
        json!({"deviceName": "Node 7", "action": "close"}),
    );
    cache_until(&other, Duration::from_secs(30), &server, |client| {
        cached_value(client, 7, "106-0-targetValue-13") == Some(json!(0))
    })
    .await;
    let stop = session.send(
        "control_zwave_device",
        json!({"deviceName": "Node 7", "action": "stop"}),
    );
    let (error, text, outcome) = session.answer(stop);
    assert!(!error, "{text}");
    assert_eq!(outcome["outcome"], "confirmed", "{text}");
    assert!(
        text.starts_with("Node 7 stopped; the device confirmed it (now open "),
        "{text}"
    );
    let (_, text, outcome) = session.answer(close);
    assert_eq!(outcome["outcome"], "superseded", "{text}");
    let stopped = driver_value(&other, 7, 106, "currentValue", Some(13)).await;
    assert!(
        stopped.as_u64().is_some_and(|at| at > 0 && at < 99),
        "stopped at {stopped}"
    );
    let text = confirmed(
        &mut session,
        json!({"deviceName": "Node 7", "action": "set_position", "level": 50}),
    );
    assert!(
        text.starts_with("Node 7 moved to 50% open; the device confirmed it (now open 50%)"),
        "{text}"
    );
    assert_eq!(
        driver_value(&other, 7, 106, "currentValue", Some(13)).await,
        json!(50)
    );

    // The motor blind (a Multilevel Switch whose buttons are Open/Close): the same.
    let text = confirmed(
        &mut session,
        json!({"deviceName": "Node 15", "action": "open"}),
    );
    assert!(
        text.starts_with("Node 15 opened; the device confirmed it"),
        "{text}"
    );
    assert_eq!(
        driver_value(&other, 15, 38, "currentValue", None).await,
        json!(99)
    );

    // The colour bulb: no report after the Set; each channel read back confirms it.
    let text = confirmed(
        &mut session,
        json!({"deviceName": "Node 8", "action": "set_color", "color": "green"}),
    );
    assert!(
        text.starts_with("Node 8 set to green (#00ff00); the device confirmed it"),
        "{text}"
    );
    assert_eq!(
        driver_value(&other, 8, 51, "currentColor", Some(3)).await,
        json!(255)
    );
    assert_eq!(
        driver_value(&other, 8, 51, "currentColor", Some(2)).await,
        json!(0)
    );

    // The siren: its tone, reported by the Get after the Set; silenced while it sounds.
    confirmed(
        &mut session,
        json!({"deviceName": "Node 9", "action": "sound", "tone": "Burglar alarm"}),
    );
    // With the alarm sounding (30 s), a doorbell would end it: a server whose owner did not
    // allow the siren class refuses it, and the alarm sounds on.
    let mut strict = Conversation::over(command(&["--zwave-js-url", &server.url]).args([
        "--allow-sensitive",
        "lock",
        "--api-timeout",
        "5s",
    ]));
    let (error, text, _) = strict.call(
        "control_zwave_device",
        json!({"deviceName": "Node 9", "action": "sound", "tone": "Doorbell"}),
    );
    assert!(
        error
            && text.starts_with("Changing the tone of \"Node 9\"")
            && text.contains("nothing was sent"),
        "{text}"
    );
    strict.finish();
    assert_eq!(driver_value(&other, 9, 121, "toneId", None).await, json!(3));
    let text = confirmed(
        &mut session,
        json!({"deviceName": "Node 9", "action": "silence"}),
    );
    assert!(
        text.starts_with("Node 9 silenced; the device confirmed it (now silent"),
        "{text}"
    );
    assert_eq!(driver_value(&other, 9, 121, "toneId", None).await, json!(0));
    // A lock that acknowledges and ignores the command (the mock's /stuck): contradicted by
    // its own Operation Report, never confirmed.
    server.tell_mock("/stuck", r#"{"node": 5, "on": true}"#);
    let (error, text, outcome) = session.call(
        "control_zwave_device",
        json!({"deviceName": "Node 5", "action": "lock"}),
    );
    assert!(error, "{text}");
    assert_eq!(outcome["outcome"], "contradicted", "{text}");
    assert!(
        text.starts_with("Node 5 did not change: the command to lock was acknowledged at "),
        "{text}"
    );
    assert_eq!(
        driver_value(&other, 5, 98, "currentMode", None).await,
        json!(0)
    );
    // Another client writes the same target while our lock waits for its report; zwave-js echoes that write at once, and the echo is not the device's word.
    let asked = session.send(
        "control_zwave_device",
        json!({"deviceName": "Node 5", "action": "lock"}),
    );
    // The driver shows our lock's optimistic mode.
    cache_until(&other, Duration::from_secs(30), &server, |client| {
        cached_value(client, 5, "98-0-currentMode") == Some(json!(255))
    })
    .await;
    other
        .request(
            "node.set_value",
            json!({"nodeId": 5, "valueId": {"commandClass": 98, "property": "targetMode"}, "value": 255}),
            Duration::from_secs(10),
        )
        .await
        .unwrap();
    let (error, text, outcome) = session.answer(asked);
    assert!(error, "{text}");
    assert_eq!(outcome["outcome"], "contradicted", "{text}");
    assert!(
        text.starts_with("Node 5 did not change: the command to lock was acknowledged at "),
        "{text}"
    );
    session.finish();
}
