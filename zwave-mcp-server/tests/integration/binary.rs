//! The real binary: every byte on stdout is a complete JSON-RPC message, on every path.

use std::{
    io::Write as _,
    net::TcpListener,
    process::{Command, Output, Stdio},
    time::Duration,
};

use serde_json::{Value, json};

const BIN: &str = env!("CARGO_BIN_EXE_zwave-mcp-server");

/// Runs the binary with `args`, feeds `input` lines, closes stdin, and waits (at most 20 s).
fn run(args: &[&str], input: &[Value]) -> Output {
    let mut child = Command::new(BIN)
        .args(args)
        .env_remove("RUST_LOG")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    for message in input {
        writeln!(stdin, "{message}").unwrap();
    }
    drop(stdin);
    let (sender, receiver) = std::sync::mpsc::channel();
    let pid = child.id();
    std::thread::spawn(move || sender.send(child.wait_with_output()));
    match receiver.recv_timeout(Duration::from_secs(20)) {
        Ok(output) => output.unwrap(),
        Err(_) => {
            let _ = Command::new("kill").arg("-9").arg(pid.to_string()).status();
            panic!("{args:?} did not exit within 20 s of stdin EOF");
        }
    }
}

/// Every stdout byte belongs to a newline-terminated JSON-RPC 2.0 message; returns them.
fn protocol_messages(output: &Output) -> Vec<Value> {
    let stdout = std::str::from_utf8(&output.stdout).expect("stdout is UTF-8");
    assert!(
        stdout.is_empty() || stdout.ends_with('\n'),
        "stdout ends mid-message: {stdout:?}"
    );
    stdout
        .lines()
        .map(|line| {
            let message: Value = serde_json::from_str(line)
                .unwrap_or_else(|err| panic!("stdout line is not JSON ({err}): {line:?}"));
            assert_eq!(message["jsonrpc"], "2.0", "not JSON-RPC: {line}");
            assert!(
                message.get("id").is_some() || message.get("method").is_some(),
                "not a message: {line}"
            );
            message
        })
        .collect()
}

fn session(calls: &[(&str, Value)]) -> Vec<Value> {
    let mut messages = vec![
        json!({"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"test","version":"1"}}}),
        json!({"jsonrpc":"2.0","method":"notifications/initialized"}),
        json!({"jsonrpc":"2.0","id":1,"method":"tools/list"}),
    ];
    for (i, (tool, args)) in calls.iter().enumerate() {
        messages.push(json!({"jsonrpc":"2.0","id": i + 2,"method":"tools/call","params":{"name": tool, "arguments": args}}));
    }
    messages
}

fn by_id(messages: &[Value], id: u64) -> &Value {
    messages
        .iter()
        .find(|m| m["id"] == json!(id))
        .unwrap_or_else(|| panic!("no reply to id {id}: {messages:?}"))
}

#[test]
fn demo_mode_answers_every_request_on_a_clean_stdout() {
    let output = run(
        &["--demo"],
        &session(&[
            ("list_zwave_devices", json!({})),
            (
                "control_zwave_device",
                json!({"deviceName": "Living Room Light", "action": "dim", "level": 40}),
            ),
            (
                "get_device_sensor_data",
                json!({"deviceName": "Office Temperature"}),
            ),
            ("get_device_status", json!({"deviceName": "Garage Light"})),
        ]),
    );
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let messages = protocol_messages(&output);
    assert_eq!(messages.len(), 6, "one reply per request: {messages:?}");
    let tools: Vec<&str> = by_id(&messages, 1)["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        tools,
        [
            "control_zwave_device",
            "get_device_sensor_data",
            "get_device_status",
            "list_zwave_devices"
        ]
    );
    assert_eq!(
        by_id(&messages, 3)["result"]["structuredContent"]["confirmed"],
        true
    );
    assert_eq!(
        by_id(&messages, 4)["result"]["structuredContent"]["readings"][0]["value"],
        21.5
    );
    assert_eq!(
        by_id(&messages, 5)["result"]["structuredContent"]["online"],
        false
    );
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("demo home ready"),
        "logs go to stderr: {stderr}"
    );
}

#[test]
fn an_unreachable_broker_still_answers_at_once_and_explains_tool_failures() {
    let port = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let url = format!("mqtt://127.0.0.1:{port}");
    let started = std::time::Instant::now();
    let output = run(
        &["--mqtt-url", &url, "--api-timeout", "1s"],
        &session(&[(
            "control_zwave_device",
            json!({"deviceName": "Switch One", "action": "on"}),
        )]),
    );
    assert!(started.elapsed() < Duration::from_secs(10));
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let messages = protocol_messages(&output);
    assert_eq!(
        by_id(&messages, 0)["result"]["serverInfo"]["name"],
        "zwave-mcp-server"
    );
    assert_eq!(
        by_id(&messages, 1)["result"]["tools"]
            .as_array()
            .unwrap()
            .len(),
        4
    );
    let call = &by_id(&messages, 2)["result"];
    assert_eq!(call["isError"], true);
    let text = call["content"][0]["text"].as_str().unwrap();
    assert!(
        text.starts_with(&format!("cannot reach the mqtt broker at {url}: ")),
        "{text}"
    );
}

#[test]
fn bad_flags_exit_2_with_the_message_on_stderr_and_nothing_on_stdout() {
    for args in [
        &["--no-such-flag"][..],
        &["--mqtt-url", "http://example:1883"],
        &["--api-timeout", "soon"],
    ] {
        let output = run(args, &[]);
        assert_eq!(output.status.code(), Some(2), "{args:?}");
        assert!(
            output.stdout.is_empty(),
            "{args:?} wrote to stdout: {:?}",
            String::from_utf8_lossy(&output.stdout)
        );
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(stderr.contains("error:"), "{args:?}: {stderr}");
    }
    let output = run(&["--mqtt-url", "http://example:1883"], &[]);
    assert!(String::from_utf8_lossy(&output.stderr).contains(
        "`http://example:1883` is not an MQTT URL: use mqtt://host:port or mqtts://host:port"
    ),);
}

#[test]
fn start_up_errors_exit_nonzero_with_nothing_on_stdout() {
    let output = run(
        &["--mqtt-password-file", "/nonexistent/password"],
        &session(&[]),
    );
    assert_eq!(output.status.code(), Some(1));
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
