//! Third-party clients drive our server: the official Python SDK and the MCP Inspector CLI.

use std::{process::Command, time::Duration};

use serde_json::Value;
use test_support::peers::{PYTHON_SDK, inspector, python_venv};
use test_support::{child, fixture_path, workspace_bin};

/// The Python SDK as the client of an unlock on the demo home, answering the server's
/// question as `mode` says (`python_sdk_elicit.py`): what it saw.
fn sdk_unlock(mode: &str) -> Value {
    let python = python_venv("mcp2", PYTHON_SDK);
    let output = child::output(
        Command::new(python)
            .arg(fixture_path("peers/python_sdk_elicit.py"))
            .arg(mode)
            .arg(workspace_bin("zwave-mcp-server"))
            .args(["--demo", "--allow-sensitive", "lock", "--ask-timeout", "1s"]),
        Duration::from_secs(120),
    );
    assert!(
        output.status.success(),
        "{mode}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_slice(&output.stdout).unwrap()
}

#[test]
fn the_python_sdk_answers_the_servers_question_and_only_a_yes_unlocks() {
    let yes = sdk_unlock("accept");
    assert_eq!(yes["isError"], false, "{yes}");
    assert_eq!(
        yes["asked"][0]["message"],
        "Unlock \"Front Door Lock\" (node 8, Entrance)? An AI agent asks for it (it opens the home)."
    );
    assert_eq!(
        yes["asked"][0]["schema"]["properties"]["confirm"]["type"],
        "boolean"
    );
    for (mode, why) in [
        ("no", "the user answered no"),
        ("decline", "the user declined"),
        ("cancel", "the user dismissed the question"),
        ("never", "nobody answered within 1s"),
        (
            "none",
            "this client cannot ask its user (it did not declare MCP elicitation). Use a client that can, or the owner can start the server with --sensitive-without-confirmation, which lets any agent do it unasked",
        ),
    ] {
        let seen = sdk_unlock(mode);
        assert_eq!(seen["isError"], true, "{mode}: {seen}");
        assert_eq!(
            seen["text"],
            format!(
                "Unlocking \"Front Door Lock\" (node 8, Entrance) needs a person's yes, and {why}: nothing was sent."
            ),
            "{mode}"
        );
    }
}

#[test]
fn the_python_sdk_lists_and_calls_every_zwave_tool() {
    let python = python_venv("mcp2", PYTHON_SDK);
    let script = fixture_path("peers/python_sdk_client.py");
    let output = child::output(
        Command::new(python)
            .arg(script)
            .arg(workspace_bin("zwave-mcp-server"))
            .arg("--demo")
            // The dimmer's own report comes ~5 s after the command (the real driver's delay):
            // wait for it, so the status read afterwards shows the level the device reported.
            .args(["--confirm-timeout", "8s"]),
        Duration::from_secs(120),
    );
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let seen: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(seen["server"], "zwave-mcp-server");
    assert_eq!(seen["protocol"], "2025-11-25");
    assert_eq!(
        seen["tools"],
        serde_json::json!([
            "control_zwave_device",
            "get_device_sensor_data",
            "get_device_status",
            "get_zwave_health",
            "list_zwave_devices"
        ])
    );
    let calls = seen["calls"].as_array().unwrap();
    assert_eq!(
        calls[0]["structured"]["devices"].as_array().unwrap().len(),
        14
    );
    assert_eq!(
        calls[1]["text"],
        "Living Room Light dimmed to 40%; the device confirmed it (now on at 40%)."
    );
    assert_eq!(
        calls[2]["structured"]["readings"][0]["label"],
        "Air temperature"
    );
    assert_eq!(calls[3]["structured"]["level"], 40);
    assert_eq!(calls[4]["isError"], true);
    assert_eq!(
        calls[4]["text"],
        "\"Garage Light\" (node 7, Garage) is offline (status Dead) and cannot be controlled until it is reachable again"
    );
}

fn inspect(args: &[&str]) -> (Option<i32>, String) {
    let output = child::output(
        Command::new(inspector())
            .arg("--cli")
            .arg(workspace_bin("zwave-mcp-server"))
            .arg("--demo")
            .args(args),
        Duration::from_secs(120),
    );
    (
        output.status.code(),
        String::from_utf8_lossy(&output.stdout).into_owned(),
    )
}

#[test]
fn the_inspector_cli_lists_and_calls_tools_with_the_right_exit_codes() {
    let (code, stdout) = inspect(&["--method", "tools/list"]);
    assert_eq!(code, Some(0), "{stdout}");
    let listed: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(listed["tools"].as_array().unwrap().len(), 5);

    let (code, stdout) = inspect(&[
        "--method",
        "tools/call",
        "--tool-name",
        "control_zwave_device",
        "--tool-arg",
        "deviceName=Switch One",
        "--tool-arg",
        "action=on",
    ]);
    assert_eq!(code, Some(0), "{stdout}");
    assert!(
        stdout.contains("Switch One: the command to switch on was sent and acknowledged at "),
        "{stdout}"
    );

    // An isError result is exit code 5.
    let (code, stdout) = inspect(&[
        "--method",
        "tools/call",
        "--tool-name",
        "get_device_status",
        "--tool-arg",
        "deviceName=Attic Door",
    ]);
    assert_eq!(code, Some(5), "{stdout}");
    assert!(stdout.contains("no Z-Wave device matches"), "{stdout}");
}

#[test]
fn the_python_sdk_subscribes_to_a_device_and_is_told_of_its_change() {
    let python = python_venv("mcp2", PYTHON_SDK);
    let output = child::output(
        Command::new(python)
            .arg(fixture_path("peers/python_sdk_subscribe.py"))
            .arg(workspace_bin("zwave-mcp-server"))
            .args(["--demo", "--confirm-timeout", "3s"]),
        Duration::from_secs(120),
    );
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let seen: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(seen["subscribe"], true, "{seen}");
    assert_eq!(seen["before"], false, "{seen}");
    // The switch's state, then (at most) the echo zwave-js shows before it: each a change of
    // what the resource shows, never another resource.
    let updates = seen["updates"].as_array().unwrap();
    assert!(
        !updates.is_empty() && updates.iter().all(|uri| uri == "zwave://devices/2"),
        "{seen}"
    );
    assert_eq!(seen["after"], true, "{seen}");
}
