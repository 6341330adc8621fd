//! The way to the home goes down and comes back, over each backend: reads answer from the
//! cache and say first since when their states are old; a command is refused, says nothing
//! was done, and is never carried out later; once back, the banner goes.

use std::time::Duration;

use serde_json::json;

use super::Conversation;
use crate::backends::per_backend;

/// How the status of the demo's switch starts (names are quoted as the gateway's data).
const SWITCH: &str = r#""Switch One" (node 2, Kitchen) is a switch"#;

/// Calls `get_device_status` until `done` holds of its text, at most 30 s (each call a round
/// trip: nothing is ordered by sleeping).
fn status_until(session: &mut Conversation, done: impl Fn(&str) -> bool) -> String {
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    loop {
        let (_, text, _) = session.call("get_device_status", json!({"deviceName": "Switch One"}));
        if done(&text) {
            return text;
        }
        assert!(std::time::Instant::now() < deadline, "never: {text}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

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
        Backend::ZwaveJs => ("zwave-js-server is unreachable since ", "nothing was sent"),
    };
    let stale = status_until(&mut session, |text| text.starts_with(headline));
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
    let fresh = status_until(&mut session, |text| !text.contains(" since "));
    assert!(fresh.starts_with(SWITCH), "{fresh}");
    // The refused command was never carried out.
    assert_eq!(home.writes(), []);
    session.finish();
}
}
