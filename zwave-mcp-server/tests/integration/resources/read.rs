//! `resources/list`, `resources/templates/list` and `resources/read`: the same facts as the
//! tools, and a hidden device nowhere, read word for word as an absent one.

use serde_json::json;

use super::read;
use crate::harness::{Conversation, per_backend};

per_backend! {
    /// The home lists and reads as list_zwave_devices does (offline ones too); each device is
    /// listed by its address.
    async fn the_home_reads_as_the_list_tool_says_it(backend) {
        let home = TestHome::start(backend).await;
        let mut session = Conversation::over(&mut home.command(&[]));
        let listed = session.request("resources/list", json!({}));
        let uris: Vec<&str> = listed["result"]["resources"]
            .as_array()
            .unwrap()
            .iter()
            .map(|resource| resource["uri"].as_str().unwrap())
            .collect();
        assert_eq!(uris[0], "zwave://home");
        assert!(uris.contains(&"zwave://devices/2"), "{uris:?}");
        let templates = session.request("resources/templates/list", json!({}));
        assert_eq!(
            templates["result"]["resourceTemplates"][0]["uriTemplate"],
            "zwave://devices/{nodeId}"
        );

        let (json, text) = read(&mut session, "zwave://home");
        let (_, tool_text, tool) =
            session.call("list_zwave_devices", json!({"includeInactive": true}));
        assert_eq!(json["devices"], tool["devices"]);
        assert_eq!(text, tool_text);
        assert_eq!(uris.len(), 1 + json["devices"].as_array().unwrap().len());
    }

    /// A device reads with its status, its readings and their age, when it last reported, and
    /// where its state comes from.
    async fn a_device_reads_with_its_readings_and_their_source(backend) {
        let home = TestHome::start(backend).await;
        let mut session = Conversation::over(&mut home.command(&[]));
        let (json, text) = read(&mut session, "zwave://devices/4");
        assert_eq!(json["device"], "Office Temperature");
        assert_eq!(json["kind"], "sensor");
        assert!(json["lastActiveMs"].is_i64(), "{json}");
        let readings = json["readings"].as_array().unwrap();
        assert!(readings.iter().any(|r| r["label"] == "Air temperature"), "{json}");
        assert!(
            readings.iter().all(|r| r["updatedAtMs"].is_null() || r["ageSeconds"].is_u64()),
            "a reading with its time has its age: {json}"
        );
        let source = json["source"].as_str().unwrap();
        assert!(source.contains("the device's own reports") && source.contains("cannot be told apart from a report"), "{source}");
        assert!(text.starts_with("\"Office Temperature\" (node 4, Office) is a sensor, online"), "{text}");
        assert!(text.contains("\nReadings:\n- Air temperature: 21.5 °C"), "{text}");
    }

    /// A hidden device is not listed, and reading it is refused exactly as reading a device
    /// that does not exist; an unknown address is refused naming what there is.
    async fn a_hidden_device_reads_exactly_as_an_absent_one(backend) {
        let home = TestHome::start(backend).await;
        let mut session = Conversation::over(&mut home.command(&["--read-deny", "node:2"]));
        let listed = session.request("resources/list", json!({}));
        assert!(!listed.to_string().contains("zwave://devices/2"), "{listed}");
        let (home_json, _) = read(&mut session, "zwave://home");
        assert!(!home_json["devices"].as_array().unwrap().iter().any(|d| d["nodeId"] == 2));

        let hidden = session.request("resources/read", json!({"uri": "zwave://devices/2"}));
        let absent = session.request("resources/read", json!({"uri": "zwave://devices/200"}));
        assert_eq!(hidden["error"]["code"], -32602, "{hidden}");
        assert_eq!(hidden["error"]["message"], absent["error"]["message"]);
        assert_eq!(hidden["error"]["data"]["uri"], "zwave://devices/2");
        assert_eq!(
            absent["error"]["message"],
            "resource not found: no such device (resources/list and resources/templates/list say what there is)"
        );
        let subscribed = session.request("resources/subscribe", json!({"uri": "zwave://devices/2"}));
        assert_eq!(subscribed["error"]["message"], absent["error"]["message"], "{subscribed}");

        let unknown = session.request("resources/read", json!({"uri": "file:///etc/passwd"}));
        assert_eq!(unknown["error"]["code"], -32602);
        assert_eq!(unknown["error"]["data"]["uri"], "file:///etc/passwd");
        assert_eq!(
            unknown["error"]["message"],
            "resource not found: this server's resources are zwave://home and zwave://devices/{nodeId} (a node id, 1-4000)"
        );
    }
}

per_backend! {
    /// A command the device has not reported: the state stays the device's last report, and
    /// what zwave-js shows at once is listed apart as its echo, with the command's note.
    async fn zwave_js_echo_is_shown_apart_from_the_devices_report(backend) {
        let home = TestHome::start(backend).await;
        home.set_confirm_writes(false);
        let mut session = Conversation::over(&mut home.command(&[]));
        let (error, text, _) = session.call(
            "control_zwave_device",
            json!({"deviceName": "Switch One", "action": "on"}),
        );
        assert!(!error, "{text}");
        let (json, text) = read(&mut session, "zwave://devices/2");
        assert_eq!(json["on"], false, "the device's own last report: {json}");
        assert_eq!(
            json["optimistic"],
            json!([{"label": "Current value", "zwaveJsShows": true, "deviceReported": false}]),
            "{json}"
        );
        assert!(
            json["lastCommand"].as_str().unwrap().contains("the device has not reported its new state since"),
            "{json}"
        );
        assert!(
            text.contains("Z-Wave JS shows Current value = true at once for a command (its optimistic echo); the device has not reported it since."),
            "{text}"
        );
    }
}

/// With the home out of reach and nothing known of it, the home (always listed) reads empty
/// saying why and where it looked; a device's read is refused saying so, never "no such
/// device".
#[test]
fn a_read_while_the_home_cannot_be_reached_says_why() {
    let url = crate::harness::closed_port_url();
    let mut session = Conversation::over(&mut crate::harness::command(&[
        "--mqtt-url",
        &url,
        "--api-timeout",
        "1s",
    ]));
    let listed = session.request("resources/list", json!({}));
    assert_eq!(
        listed["result"]["resources"].as_array().unwrap().len(),
        1,
        "{listed}"
    );
    let (home, text) = read(&mut session, "zwave://home");
    assert_eq!(home["devices"], json!([]), "{home}");
    assert!(
        text.starts_with("cannot read zwave://home now: ") && text.contains(&url),
        "{text}"
    );
    let refused = session.request("resources/read", json!({"uri": "zwave://devices/2"}));
    let message = refused["error"]["message"].as_str().unwrap_or_default();
    assert!(
        message.starts_with("cannot read zwave://devices/2 now: ") && message.contains(&url),
        "{refused}"
    );
    assert_eq!(refused["error"]["data"]["uri"], "zwave://devices/2");
    let prompt = session.request("prompts/get", json!({"name": "home_overview"}));
    assert!(
        prompt["error"]["message"]
            .as_str()
            .unwrap_or_default()
            .starts_with("cannot read zwave://home now: "),
        "{prompt}"
    );
}
