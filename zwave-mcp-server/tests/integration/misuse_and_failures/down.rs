//! The way to the home goes down and comes back, over each backend: reads answer from the
//! cache and say first since when their states are old; a command is refused, says nothing
//! was done, and is never carried out later; once back, the banner goes. And a home whose
//! nodes are still being interviewed: each becomes usable as its interview ends.

use serde_json::json;

use crate::harness::{CALL_UNTIL_LIMIT, Conversation, per_backend};

/// How the status of the demo's switch starts (names are quoted as the gateway's data).
const SWITCH: &str = r#""Switch One" (node 2, Kitchen) is a switch"#;

per_backend! {
async fn reads_say_since_when_commands_are_refused_and_nothing_arrives_later(backend) {
    let home = TestHome::start(backend).await;
    let mut session = Conversation::over(&mut home.command(&[]));
    let (error, before, _) = session.call("get_device_status", json!({"deviceName": "Switch One"}));
    assert!(!error && before.starts_with(SWITCH), "{before}");

    home.go_down().await;
    let (headline, refusal) = match backend {
        Backend::Mqtt => (
            "Z-Wave JS UI is offline since ",
            "zwave-js-ui gateway `zwave-js-ui` is offline",
        ),
        Backend::ZwaveJsServer => ("zwave-js-server is unreachable since ", "nothing was sent"),
    };
    let stale = session.call_until("get_device_status", &json!({"deviceName": "Switch One"}), CALL_UNTIL_LIMIT, |_, text| text.starts_with(headline)).1;
    assert!(
        stale.contains(&format!("; last known states:\n{SWITCH}")),
        "{stale}"
    );
    let (error, text, _) = session.call(
        "control_zwave_device",
        json!({"deviceName": "Switch One", "action": "on"}),
    );
    assert!(error && text.contains(refusal), "{text}");

    home.come_back().await;
    let fresh = session.call_until("get_device_status", &json!({"deviceName": "Switch One"}), CALL_UNTIL_LIMIT, |_, text| !text.contains(" since ")).1;
    assert!(fresh.starts_with(SWITCH), "{fresh}");
    // The refused command was never carried out.
    assert_eq!(home.writes(), []);
    session.finish();
}

/// A lock unlocked while the link goes down reports meanwhile, and
/// the server misses it; the node list read when the link is back holds the driver's value,
/// which is no report. The device is asked then, and its answer is the state shown.
async fn a_report_missed_while_the_link_was_down_is_asked_for_when_it_is_back(backend) {
    let home = TestHome::start(backend).await;
    // The lock does it, and its report is lost.
    home.set_confirm_writes(false);
    let mut session = Conversation::over(&mut home.command(&[
        "--confirm-timeout", "0s",
        "--allow-sensitive", "lock",
        "--sensitive-without-confirmation",
    ]));
    let (error, text, outcome) = session.call(
        "control_zwave_device",
        json!({"deviceName": "Front Door Lock", "action": "unlock"}),
    );
    assert!(!error && outcome["outcome"] == "acknowledged", "{text}");
    let status = json!({"deviceName": "Front Door Lock"});
    let (_, text, _) = session.call("get_device_status", status.clone());
    assert!(text.contains("has not reported its new state since"), "{text}");
    home.go_down().await;
    let headline = match backend {
        Backend::Mqtt => "Z-Wave JS UI is offline since ",
        Backend::ZwaveJsServer => "zwave-js-server is unreachable since ",
    };
    session.call_until("get_device_status", &status, CALL_UNTIL_LIMIT, |_, text| text.starts_with(headline));
    home.come_back().await;
    let text = session.call_until("get_device_status", &status, CALL_UNTIL_LIMIT, |_, text| {
        !text.starts_with(headline) && !text.contains("has not reported")
    }).1;
    assert!(text.contains("unlocked"), "{text}");
    session.finish();
}

async fn devices_become_usable_as_their_interviews_end(backend) {
    let home = TestHome::start(backend).await;
    home.start_interviews().await;
    let mut session = Conversation::over(&mut home.command(&["--confirm-timeout", "5s"]));
    let dim = json!({"deviceName": "Living Room Light", "action": "dim", "level": 40});
    let (error, text, _) = session.call("control_zwave_device", dim.clone());
    assert!(error, "{text}");
    assert_eq!(
        text,
        "\"Living Room Light\" (node 3, Living Room) is still being interviewed by Z-Wave JS (it restarted or the device was just added), so what it is is not known yet: try again in a few seconds"
    );
    home.finish_interview(3).await;
    session.call_until("get_device_status", &json!({"deviceName": "Living Room Light"}), CALL_UNTIL_LIMIT, |_, text| {
        !text.contains("being interviewed")
    });
    let (error, text, outcome) = session.call("control_zwave_device", dim);
    assert!(!error, "{text}");
    assert_eq!(outcome["outcome"], "confirmed", "{text}");
    assert_eq!(home.writes(), [("3-38-0-targetValue".to_owned(), json!(40))]);
    session.finish();
}
}

/// zwave-js-server frozen (SIGSTOP: TCP open, nothing read, no ping answered): within its
/// 15 s of silence reads say it is unreachable since when, a command is refused with nothing
/// sent; once it runs again the banner goes and nothing was written.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_frozen_zwave_js_server_is_noticed_by_its_silence() {
    use crate::harness::{Backend, TestHome};
    let home = TestHome::start(Backend::ZwaveJsServer).await;
    let TestHome::ZwaveJsServer(server) = &home else {
        unreachable!()
    };
    let mut session = Conversation::over(&mut home.command(&[]));
    let status = json!({"deviceName": "Switch One"});
    let (error, before, _) = session.call("get_device_status", status.clone());
    assert!(!error && before.starts_with(SWITCH), "{before}");

    server.freeze();
    let stale = session
        .call_until("get_device_status", &status, CALL_UNTIL_LIMIT, |_, text| {
            text.starts_with("zwave-js-server is unreachable since ")
        })
        .1;
    assert!(
        stale.contains(&format!("; last known states:\n{SWITCH}")),
        "{stale}"
    );
    let (error, text, _) = session.call(
        "control_zwave_device",
        json!({"deviceName": "Switch One", "action": "on"}),
    );
    assert!(error && text.contains("nothing was sent"), "{text}");

    server.thaw();
    let fresh = session
        .call_until("get_device_status", &status, CALL_UNTIL_LIMIT, |_, text| {
            !text.contains(" since ")
        })
        .1;
    assert!(fresh.starts_with(SWITCH), "{fresh}");
    assert_eq!(home.writes(), []);
    let stderr = String::from_utf8_lossy(&session.finish().stderr).into_owned();
    assert!(
        stderr.contains(
            "zwave-js-server stopped answering: nothing from it, not even a pong, for 15s"
        ),
        "{stderr}"
    );
}
