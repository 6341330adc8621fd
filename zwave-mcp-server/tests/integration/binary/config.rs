//! Flags and configuration that can never work are refused at start: exit 2, the message on
//! stderr naming the value and what would be valid, nothing on stdout.

use serde_json::json;

use crate::harness::{by_id, protocol_messages, run, run_with_env, session_listing_tools};

#[test]
fn bad_flags_exit_2_with_the_message_on_stderr_and_nothing_on_stdout() {
    for args in [
        &["--no-such-flag"][..],
        &["--mqtt-url", "http://example:1883"],
        &["--api-timeout", "soon"],
        &["--demo", "--demo-nodes", "233"],
        &["--demo-nodes", "10"],
        &["simulate", "--nodes", "many"],
    ] {
        let output = run(args, &[]);
        assert_eq!(output.status.code(), Some(2), "{args:?}");
        assert!(
            output.stdout.is_empty(),
            "{args:?} wrote to stdout: {:?}",
            String::from_utf8_lossy(&output.stdout)
        );
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(
            stderr.contains("error:") || stderr.contains("invalid log filter"),
            "{args:?}: {stderr}"
        );
    }
    let output = run(&["--mqtt-url", "http://example:1883"], &[]);
    assert!(String::from_utf8_lossy(&output.stderr).contains(
        "`http://example:1883` is not an MQTT URL: use mqtt://host:port or mqtts://host:port"
    ),);
}

#[test]
fn values_outside_what_z_wave_and_z_wave_js_ui_know_are_refused_with_the_valid_ones() {
    for (args, expected) in [
        (
            &["--demo", "--demo-nodes", "233"][..],
            "invalid value '233' for '--demo-nodes <N>': 233 nodes is out of range: use 2 to 232 \
             (a Z-Wave network holds at most 232 nodes, the controller included)",
        ),
        (
            &["simulate", "--nodes", "many"],
            "invalid value 'many' for '--nodes <N>': `many` is not a node count: use 2 to 232",
        ),
        (
            &["--demo-nodes", "10"],
            "the following required arguments were not provided:\n  --demo",
        ),
        (
            &["simulate", "--topic-type", "2"],
            "invalid value '2' for '--topic-type <TOPIC_TYPE>'\n  [possible values: value-id, named]",
        ),
        (
            &["--topic-prefix", "#"],
            "invalid value '#' for '--topic-prefix <TOPIC_PREFIX>': `#` cannot be part of an MQTT topic (it holds + or #, MQTT's wildcards, or NUL): use the prefix set in Z-Wave JS UI (Settings → MQTT → Prefix), e.g. zwave or home/zwave",
        ),
        (
            &["--topic-prefix", "home/+"],
            "`home/+` cannot be part of an MQTT topic",
        ),
        (
            &["--topic-prefix", "/"],
            "invalid value '/' for '--topic-prefix <TOPIC_PREFIX>': `/` names no topic level: use the prefix set in Z-Wave JS UI (Settings → MQTT → Prefix), e.g. zwave",
        ),
        (
            &["--gateway-name", "+"],
            "invalid value '+' for '--gateway-name <GATEWAY_NAME>': `+` cannot be part of an MQTT topic (it holds + or #, MQTT's wildcards, or NUL): use the name set in Z-Wave JS UI (Settings → MQTT → Name), e.g. zwave-js-ui",
        ),
        (
            &["--gateway-name", "a/b"],
            "invalid value 'a/b' for '--gateway-name <GATEWAY_NAME>': `a/b` is not one topic level: use the name set in Z-Wave JS UI (Settings → MQTT → Name), e.g. zwave-js-ui",
        ),
        (
            &["simulate", "--payload-type", "json"],
            "invalid value 'json' for '--payload-type <PAYLOAD_TYPE>'\n  [possible values: time-value, entire-value-id, raw]",
        ),
    ] {
        let output = run(args, &[]);
        assert_eq!(output.status.code(), Some(2), "{args:?}");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(stderr.contains(expected), "{args:?}: {stderr}");
    }
}

#[test]
fn a_zwave_js_url_that_cannot_work_or_comes_with_mqtt_flags_exits_2() {
    let dir = test_support::mosquitto::ScratchDir::new();
    let not_pem = dir.path().join("ca.txt");
    std::fs::write(&not_pem, "hello").unwrap();
    let not_pem = not_pem.to_str().unwrap();
    for (args, expected) in [
        (
            &[
                "--zwave-js-url",
                "ws://hub:3000",
                "--mqtt-url",
                "mqtt://hub:1883",
            ][..],
            "the argument '--zwave-js-url <URL>' cannot be used with '--mqtt-url <MQTT_URL>'",
        ),
        (
            &["--zwave-js-url", "ws://hub:3000", "--mqtt-username", "me"],
            "the argument '--zwave-js-url <URL>' cannot be used with '--mqtt-username <MQTT_USERNAME>'",
        ),
        (
            &["--zwave-js-url", "ws://hub:3000", "--demo"],
            "the argument '--zwave-js-url <URL>' cannot be used with '--demo'",
        ),
        (
            &["--zwave-js-ca-file", not_pem],
            "the following required arguments were not provided:\n  --zwave-js-url <URL>",
        ),
        (
            &["--zwave-js-url", "http://hub:3000"],
            "invalid value 'http://hub:3000' for '--zwave-js-url <URL>': \"http://hub:3000\" is not a WebSocket URL: expected ws://host:port or wss://host:port (zwave-js-server listens on 3000)",
        ),
        (
            &[
                "--zwave-js-url",
                "ws://hub:3000",
                "--zwave-js-ca-file",
                not_pem,
            ],
            &format!(
                "--zwave-js-ca-file {not_pem:?} needs a wss:// URL, but --zwave-js-url is ws://hub:3000"
            ),
        ),
        (
            &[
                "--zwave-js-url",
                "wss://hub:3000",
                "--zwave-js-ca-file",
                not_pem,
            ],
            &format!(
                "--zwave-js-ca-file {not_pem:?} holds no PEM certificate (expected -----BEGIN CERTIFICATE-----)"
            ),
        ),
    ] {
        let output = run(args, &session_listing_tools(&[]));
        assert_eq!(output.status.code(), Some(2), "{args:?}");
        assert!(output.stdout.is_empty(), "{args:?}");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(stderr.contains(expected), "{args:?}: {stderr}");
    }
    // The environment counts as given, as a host's `env` block gives it.
    let output = run_with_env(
        &["--zwave-js-url", "ws://hub:3000"],
        &[("ZWAVE_MCP_MQTT_URL", "mqtt://hub:1883")],
        &session_listing_tools(&[]),
    );
    assert_eq!(output.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&output.stderr).contains("cannot be used with '--mqtt-url"),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
}

#[test]
fn a_ca_file_that_cannot_work_stops_the_start_with_exit_2() {
    let dir = test_support::mosquitto::ScratchDir::new();
    let garbage = dir.path().join("garbage.pem");
    std::fs::write(
        &garbage,
        "-----BEGIN CERTIFICATE-----\n!!!! not base64 !!!!\n-----END CERTIFICATE-----\n",
    )
    .unwrap();
    let not_x509 = dir.path().join("not-x509.pem");
    std::fs::write(
        &not_x509,
        "-----BEGIN CERTIFICATE-----\naGVsbG8gd29ybGQ=\n-----END CERTIFICATE-----\n",
    )
    .unwrap();
    for (file, reason) in [
        (&garbage, "its PEM does not parse"),
        (
            &not_x509,
            "none of its certificates is a valid X.509 certificate",
        ),
    ] {
        let output = run(
            &[
                "--mqtt-url",
                "mqtts://127.0.0.1:8883",
                "--mqtt-ca-file",
                file.to_str().unwrap(),
            ],
            &session_listing_tools(&[]),
        );
        assert_eq!(output.status.code(), Some(2), "{file:?}");
        assert!(output.stdout.is_empty());
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(
            stderr.contains(&format!("--mqtt-ca-file {file:?} cannot be used: {reason}"))
                && stderr
                    .contains("(give the PEM file of the CA that signed the broker's certificate)"),
            "{stderr}"
        );
    }
}

#[test]
fn start_up_errors_exit_nonzero_with_nothing_on_stdout() {
    let output = run(
        &["--mqtt-password-file", "/nonexistent/password"],
        &session_listing_tools(&[]),
    );
    assert_eq!(
        output.status.code(),
        Some(2),
        "a configuration error, as a bad flag"
    );
    assert!(
        output.stdout.is_empty(),
        "{:?}",
        String::from_utf8_lossy(&output.stdout)
    );
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("cannot read --mqtt-password-file \"/nonexistent/password\""),
        "{stderr}"
    );
}

#[test]
fn exposure_flags_and_environment_shape_the_tools() {
    let output = run_with_env(
        &["--demo", "--read-deny", "name:Garage Light,node:6"],
        &[("ZWAVE_MCP_READ_ONLY", "true")],
        &session_listing_tools(&[("list_zwave_devices", json!({"includeInactive": true}))]),
    );
    let messages = protocol_messages(&output);
    let tools: Vec<&str> = by_id(&messages, 1)["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert!(!tools.contains(&"control_zwave_device"), "{tools:?}");
    // Reads, the health read and its ping among them, stay.
    assert_eq!(tools.len(), 4);
    assert!(tools.contains(&"get_zwave_health"), "{tools:?}");
    let devices = by_id(&messages, 2)["result"]["structuredContent"]["devices"]
        .as_array()
        .unwrap()
        .len();
    // The demo home's 14 devices but the hidden Garage Light and node 6.
    assert_eq!(devices, 12);

    let output = run(&["--demo", "--control-deny", "garage"], &[]);
    assert_eq!(output.status.code(), Some(2));
    assert!(output.stdout.is_empty());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("exposure rule \"garage\" is not valid: use node:<id>, location:<location> or name:<device name>"),
        "{stderr}"
    );

    let output = run(
        &["--demo", "--exposure-file", "/nonexistent/exposure.json"],
        &session_listing_tools(&[]),
    );
    assert_eq!(
        output.status.code(),
        Some(2),
        "configuration errors exit as bad flags do"
    );
    assert!(output.stdout.is_empty());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("cannot read the exposure file \"/nonexistent/exposure.json\""),
        "{stderr}"
    );
}
