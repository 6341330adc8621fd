//! Marked devices and sirens, through the binary over both backends: marking a device sensitive
//! only ever adds a question (the owner's leave for a sensitive class is still needed, and
//! --sensitive-without-confirmation does not skip the question), and a new tone on a siren
//! that sounds one is as sensitive as silencing it. The simulated servers' record of writes
//! is the witness that nothing was sent.

use serde_json::{Value, json};

use crate::harness::{answer, per_backend};

/// The control tool's calls of `(device, action)`, with `extra` arguments.
fn control(device: &str, action: &str, extra: Value) -> (&'static str, Value) {
    let mut args = json!({"deviceName": device, "action": action});
    if let (Value::Object(args), Value::Object(extra)) = (&mut args, extra) {
        args.extend(extra);
    }
    ("control_zwave_device", args)
}

per_backend! {
async fn a_marked_lock_is_never_easier_to_open(backend) {
    let home = TestHome::start(backend).await;
    let calls = [
        control("Front Door Lock", "unlock", json!({})),
        control("Garage Door", "open", json!({})),
        control("Hallway Siren", "silence", json!({})),
    ];
    // Marked, the classes not allowed: refused as if unmarked, with or without asking.
    for args in [
        &["--sensitive-device", "node:8,node:11,node:13"][..],
        &["--sensitive-device", "node:8,node:11,node:13", "--sensitive-without-confirmation"],
    ] {
        let output = home.run(args, &calls).await;
        let (error, text) = answer(&output, 2);
        assert!(error, "{text}");
        assert_eq!(
            text,
            "Unlocking \"Front Door Lock\" (node 8, Entrance) is a sensitive action (it opens the home) and the owner of this server has not allowed it: nothing was sent. The owner can allow it with --allow-sensitive lock (or ZWAVE_MCP_ALLOW_SENSITIVE=lock); a person will then be asked to confirm each time."
        );
        let (error, text) = answer(&output, 3);
        assert!(error && text.contains("has not allowed it: nothing was sent. The owner can allow it with --allow-sensitive garage"), "{text}");
        let (error, text) = answer(&output, 4);
        assert!(error && text.contains("has not allowed it: nothing was sent. The owner can allow it with --allow-sensitive siren"), "{text}");
    }
    // Allowed and marked, with the owner's leave to act unasked: the mark still asks, and a
    // client that cannot ask gets nothing done.
    let output = home
        .run(
            &[
                "--allow-sensitive", "lock,garage,siren",
                "--sensitive-without-confirmation",
                "--sensitive-device", "node:8",
            ],
            &calls[..1],
        )
        .await;
    let (error, text) = answer(&output, 2);
    assert!(error, "{text}");
    assert_eq!(
        text,
        "Unlocking \"Front Door Lock\" (node 8, Entrance) needs a person's yes, and this client cannot ask its user (it did not declare MCP elicitation). Use a client that can: the owner marked this device sensitive, so a person is asked even under --sensitive-without-confirmation: nothing was sent."
    );
    assert_eq!(home.writes(), Vec::<(String, Value)>::new(), "nothing was written");
}

async fn a_mark_that_matches_no_device_is_logged(backend) {
    let home = TestHome::start(backend).await;
    let output = home
        .run(
            &["--sensitive-device", "name:Front Dor Lock"],
            &[("list_zwave_devices", json!({}))],
        )
        .await;
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("--sensitive-device rule \"name:front dor lock\" matches no device: check it against list_zwave_devices, or name the device by node:<id>"),
        "{stderr}"
    );
}

async fn a_new_tone_over_a_sounding_one_is_as_sensitive_as_silence(backend) {
    // The siren sounds its burglar alarm (3) when the server starts.
    let home = TestHome::with_nodes(backend, siren_sounding(json!(3))).await;
    let output = home
        .run(
            &["--allow-sensitive", "lock", "--confirm-timeout", "0s"],
            &[
                control("Hallway Siren", "sound", json!({"tone": "Doorbell"})),
                control("Hallway Siren", "sound", json!({})),
                control("Hallway Siren", "sound", json!({"tone": "Burglar alarm"})),
            ],
        )
        .await;
    let (error, text) = answer(&output, 2);
    assert!(error, "{text}");
    assert_eq!(
        text,
        "Changing the tone of \"Hallway Siren\" (node 13, Hallway) is a sensitive action (a tone is sounding, and a new one ends it: it may be an alarm) and the owner of this server has not allowed it: nothing was sent. The owner can allow it with --allow-sensitive siren (or ZWAVE_MCP_ALLOW_SENSITIVE=siren); a person will then be asked to confirm each time."
    );
    // Its default tone is another tone than the alarm: refused too.
    let (error, text) = answer(&output, 3);
    assert!(error && text.starts_with("Changing the tone of"), "{text}");
    // The tone that sounds already: it ends nothing.
    let (error, text) = answer(&output, 4);
    assert!(!error, "{text}");
    assert_eq!(home.writes(), vec![("13-121-0-toneId".to_owned(), json!(3))]);

    // A siren whose state is not known may be sounding an alarm: the same rule.
    let home = TestHome::with_nodes(backend, siren_sounding(Value::Null)).await;
    let output = home
        .run(
            &["--confirm-timeout", "0s"],
            &[control("Hallway Siren", "sound", json!({"tone": "Doorbell"}))],
        )
        .await;
    let (error, text) = answer(&output, 2);
    assert!(error && text.starts_with("Changing the tone of"), "{text}");
    assert_eq!(home.writes(), Vec::<(String, Value)>::new());
}
}

/// The demo home with its siren (node 13) reporting tone `tone` (`null`: never reported).
fn siren_sounding(tone: Value) -> Vec<Value> {
    let mut nodes = zwave_mcp_server::sim::home::demo_home(zwave_mcp_server::network::now_ms());
    let siren = nodes
        .iter_mut()
        .find(|node| node["id"] == json!(13))
        .expect("the demo home has its siren");
    let values: Box<dyn Iterator<Item = &mut Value>> = match &mut siren["values"] {
        Value::Array(values) => Box::new(values.iter_mut()),
        Value::Object(values) => Box::new(values.values_mut()),
        other => panic!("values: {other}"),
    };
    let tone = values
        .into_iter()
        .find(|value| value["commandClass"] == json!(121) && value["property"] == json!("toneId"))
        .map(|value| value["value"] = tone);
    assert!(tone.is_some(), "the siren has its toneId");
    nodes
}
