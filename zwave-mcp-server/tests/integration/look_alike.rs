//! A device named to read as another: invisible characters (a soft hyphen, a zero-width
//! space, tag characters, variation selectors) in a name or location are escaped wherever the
//! name reaches a client, and a name that equals another once they are dropped is ambiguous,
//! never a match of either. Found by the third hostile review: a garage door renamed
//! "Front Door Lock" + U+00AD and moved to "Entrance" was asked about as the real lock.

use serde_json::{Value, json};

use crate::harness::{Conversation, per_backend, renamed};

/// Every invisible character the review sent, and a few more of each class.
const INVISIBLE: [char; 10] = [
    '\u{ad}',
    '\u{34f}',
    '\u{180e}',
    '\u{200b}',
    '\u{2064}',
    '\u{fe0f}',
    '\u{fff9}',
    '\u{fffb}',
    '\u{e0001}',
    '\u{e0041}',
];

/// Whether `text` holds any character of [`INVISIBLE`] unescaped.
fn raw_invisible(text: &str) -> Option<char> {
    text.chars().find(|c| INVISIBLE.contains(c))
}

per_backend! {
async fn a_garage_door_named_as_the_lock_with_a_soft_hyphen_is_shown_escaped_and_never_matched(backend) {
    let nodes = zwave_mcp_server::sim::home::demo_home(zwave_mcp_server::network::now_ms());
    let home = TestHome::with_nodes(
        backend,
        renamed(nodes, &[(11, "Front Door Lock\u{ad}", "Entrance"), (7, "Garage\u{200b} Light\u{e0041}\u{e0042}", "Garage\u{fe0f}")]),
    )
    .await;
    let mut session = Conversation::over(&mut home.command(&["--allow-sensitive", "garage,lock"]));
    let (error, listed, _) = session.call("list_zwave_devices", json!({"includeInactive": true}));
    assert!(!error, "{listed}");
    assert!(listed.contains("- Front Door Lock\\u{ad} (node 11, Entrance): cover"), "{listed}");
    assert!(listed.contains("- Garage\\u{200b} Light\\u{e0041}\\u{e0042} (node 7, Garage\\u{fe0f})"), "{listed}");
    // The name the agent sees, and the name of the lock: both name two devices, so neither
    // opens anything.
    for name in ["Front Door Lock", "Front Door Lock\u{ad}", "Front Door Lock\\u{ad}", "front door\u{200b} lock"] {
        let (error, said, _) = session.call(
            "control_zwave_device",
            json!({"deviceName": name, "action": "open"}),
        );
        assert!(error, "{name:?}: {said}");
        assert!(
            said.contains("matches 2 devices: \"Front Door Lock\" (node 8, Entrance), \"Front Door Lock\\u{ad}\" (node 11, Entrance)"),
            "{name:?}: {said}"
        );
    }
    // The other names still find their device: invisible characters are dropped, not the
    // name.
    let (error, said, _) = session.call("get_device_status", json!({"deviceName": "Garage Light"}));
    assert!(!error, "{said}");
    // Wherever the names reach the client: tools, the home resource, prompts, completions.
    let home_read = session.request("resources/read", json!({"uri": "zwave://home"}));
    let overview = session.request("prompts/get", json!({"name": "home_overview"}));
    let completed = session.request("completion/complete", json!({
        "ref": {"type": "ref/prompt", "name": "device_help"},
        "argument": {"name": "deviceName", "value": "front"}}));
    let output = session.finish();
    let stdout = String::from_utf8(output.stdout).unwrap();
    assert_eq!(raw_invisible(&stdout), None, "{stdout}");
    for answer in [&home_read, &overview, &completed] {
        let text = answer.to_string();
        assert!(text.contains("Front Door Lock\\\\u{ad}"), "{text}");
    }
    assert_eq!(completed["result"]["completion"]["values"][0], Value::from("Front Door Lock"));
    assert!(home.writes().is_empty(), "{:?}", home.writes());
}
}
