//! Third-party clients drive our server over MCP Streamable HTTP (`--demo --http`): the
//! official Python SDK (reads, a switch, an unlock a person is asked about, a wrong token)
//! and the MCP Inspector CLI, each with the bearer token in its `Authorization` header.

use std::{process::Command, time::Duration};

use serde_json::{Value, json};
use test_support::{
    child, daemon::Daemon, fixture_path, mosquitto::ScratchDir, peers, workspace_bin,
};

/// The token the servers here require, when they require one.
const TOKEN: &str = "interop-token-0123456789abcdef";

/// What the server logs once it accepts connections, with its URL as `url=`.
const SERVING: &str = "serving MCP over Streamable HTTP";

/// How long a client run may take (peers are installed on first use).
const CLIENT_LIMIT: Duration = Duration::from_secs(120);

/// `zwave-mcp-server --demo --http` on a port it picked, ready for clients.
struct HttpServer {
    daemon: Daemon,
    url: String,
}

impl HttpServer {
    /// Starts the server on 127.0.0.1, port 0, with `flags`, requiring `token` (from
    /// `--http-token-file`) when given; returns once it says it serves, with the URL it logged.
    fn start(token: Option<&str>, flags: &[&str]) -> Self {
        let dir = ScratchDir::new();
        let mut command = Command::new(workspace_bin("zwave-mcp-server"));
        command
            .args(["--demo", "--http", "127.0.0.1:0"])
            .args(flags)
            // The URL is read from an info line: a RUST_LOG of the test's must not hide it.
            .env("RUST_LOG", "info");
        if let Some(token) = token {
            let file = dir.path().join("token");
            std::fs::write(&file, format!("{token}\n")).unwrap();
            command.arg("--http-token-file").arg(file);
        }
        let daemon = Daemon::start_until_logged(
            &command,
            dir,
            SERVING,
            "zwave-mcp-server over HTTP",
            Duration::from_secs(60),
        );
        let log = daemon.log();
        let url = log
            .lines()
            .filter(|line| line.contains(SERVING))
            .flat_map(str::split_whitespace)
            .find_map(|word| word.strip_prefix("url="))
            .unwrap_or_else(|| panic!("no url= on the line {SERVING:?}:\n{log}"))
            .to_owned();
        Self { daemon, url }
    }
}

/// What the Python SDK saw driving `server` in `mode` (`python_sdk_http.py`), sending `token`
/// (`-` for none); and what it wrote on stderr.
fn sdk(server: &HttpServer, token: &str, mode: &str) -> (Value, String) {
    let python = peers::python_venv("mcp2", peers::PYTHON_SDK);
    let output = child::output(
        Command::new(python)
            .arg(fixture_path("peers/python_sdk_http.py"))
            .args([server.url.as_str(), token, mode]),
        CLIENT_LIMIT,
    );
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    assert!(
        output.status.success(),
        "{mode}: {stderr}\nserver:\n{}",
        server.daemon.log()
    );
    let seen = serde_json::from_slice(&output.stdout)
        .unwrap_or_else(|err| panic!("{mode}: {err}: {stderr}"));
    (seen, stderr)
}

/// The HTTP answers a run got, as `METHOD status`.
fn exchanges(seen: &Value) -> Vec<String> {
    seen["http"]
        .as_array()
        .unwrap()
        .iter()
        .map(|answer| {
            format!(
                "{} {}",
                answer["method"].as_str().unwrap(),
                answer["status"]
            )
        })
        .collect()
}

/// A run that ended well: no error, and the session ended by its DELETE, answered 204
/// (rmcp's 202 made the SDK log "Session termination failed: 202").
fn assert_clean(seen: &Value, stderr: &str) {
    assert!(seen.get("error").is_none(), "{seen}");
    assert_eq!(exchanges(seen).last().unwrap(), "DELETE 204", "{seen}");
    assert!(!stderr.contains("Session termination failed"), "{stderr}");
}

#[test]
fn the_python_sdk_reads_and_switches_over_http_with_the_token() {
    // Wait for the switch's own report (~1 s in the demo), so the answer says it confirmed.
    let server = HttpServer::start(Some(TOKEN), &["--confirm-timeout", "8s"]);
    let (seen, stderr) = sdk(&server, TOKEN, "drive");
    assert_clean(&seen, &stderr);
    assert_eq!(seen["server"], "zwave-mcp-server");
    assert_eq!(seen["protocol"], "2025-11-25");
    assert_eq!(
        seen["tools"],
        json!([
            "control_zwave_device",
            "get_device_sensor_data",
            "get_device_status",
            "get_zwave_health",
            "list_zwave_devices"
        ])
    );
    let calls = seen["calls"].as_array().unwrap();
    assert!(calls.iter().all(|call| call["isError"] == false), "{seen}");
    assert!(
        calls[0]["text"].as_str().unwrap().starts_with(
            "\"Switch One\" (node 2, Kitchen) is a switch, online (node status Alive): off"
        ),
        "{seen}"
    );
    assert_eq!(calls[0]["structured"]["on"], false);
    assert_eq!(
        calls[1]["structured"]["readings"][0]["label"],
        "Air temperature"
    );
    assert_eq!(calls[2]["structured"]["confirmed"], true, "{seen}");
    assert!(
        calls[2]["text"]
            .as_str()
            .unwrap()
            .contains("the device confirmed it"),
        "{seen}"
    );
    assert_eq!(calls[3]["structured"]["on"], true, "{seen}");
}

/// The unlock as the Python SDK asks for it, answering the question as `mode` says: the
/// questions asked, the unlock's answer, and the lock's status read afterwards.
fn sdk_unlock(server: &HttpServer, mode: &str) -> (Value, Value, Value) {
    let (seen, stderr) = sdk(server, TOKEN, mode);
    assert_clean(&seen, &stderr);
    let calls = seen["calls"].as_array().unwrap();
    (seen["asked"].clone(), calls[0].clone(), calls[1].clone())
}

#[test]
fn over_http_the_python_sdk_is_asked_before_an_unlock_and_only_its_yes_unlocks() {
    let server = HttpServer::start(
        Some(TOKEN),
        &["--allow-sensitive", "lock", "--confirm-timeout", "8s"],
    );
    let question = "Unlock \"Front Door Lock\" (node 8, Entrance)? An AI agent asks for it (it opens the home).";

    let (asked, unlock, status) = sdk_unlock(&server, "decline");
    assert_eq!(asked, json!([question]));
    assert_eq!(unlock["isError"], true, "{unlock}");
    assert_eq!(
        unlock["text"],
        "Unlocking \"Front Door Lock\" (node 8, Entrance) needs a person's yes, and the user declined: nothing was sent."
    );
    assert!(
        status["structured"]["summary"]
            .as_str()
            .unwrap()
            .starts_with("locked"),
        "{status}"
    );

    let (asked, unlock, status) = sdk_unlock(&server, "accept");
    assert_eq!(asked, json!([question]));
    assert_eq!(unlock["isError"], false, "{unlock}");
    assert_eq!(unlock["structured"]["already"], false, "{unlock}");
    assert_eq!(unlock["structured"]["confirmed"], true, "{unlock}");
    assert!(
        status["structured"]["summary"]
            .as_str()
            .unwrap()
            .starts_with("unlocked"),
        "{status}"
    );
}

#[test]
fn without_a_token_the_python_sdk_is_never_asked_and_an_unlock_is_refused() {
    let server = HttpServer::start(None, &["--allow-sensitive", "lock"]);
    let (seen, stderr) = sdk(&server, "-", "accept");
    assert_clean(&seen, &stderr);
    assert_eq!(seen["asked"], json!([]));
    let unlock = &seen["calls"][0];
    assert_eq!(unlock["isError"], true, "{unlock}");
    assert!(
        unlock["text"].as_str().unwrap().contains(
            "this server is served over HTTP without a token: any program on its machine can be a client and answer its own question, so no sensitive action is carried out. Nothing was sent."
        ),
        "{unlock}"
    );
    assert!(
        seen["calls"][1]["structured"]["summary"]
            .as_str()
            .unwrap()
            .starts_with("locked"),
        "{seen}"
    );
}

#[test]
fn a_wrong_token_reaches_the_python_sdk_as_a_401_and_nothing_more() {
    let server = HttpServer::start(Some(TOKEN), &[]);
    let (seen, _) = sdk(&server, "not-the-token-0123456789", "drive");
    // The first request (initialize) is refused; the SDK makes no other.
    assert_eq!(
        seen["http"],
        json!([{
            "method": "POST",
            "status": 401,
            "wwwAuthenticate": "Bearer realm=\"zwave-mcp-server\""
        }])
    );
    // The refusal's body is a JSON-RPC error, which the SDK hands its user as is: our text
    // saying why (a plain-text body became "Server returned an error response").
    assert_eq!(
        seen["error"],
        json!({
            "type": "MCPError",
            "code": -32600,
            "message": "the bearer token is not this server's: nothing was done"
        })
    );
}

/// Runs the Inspector's CLI against `server` over HTTP with `args`, sending `token`: its exit
/// code, stdout and stderr.
fn inspect(server: &HttpServer, token: &str, args: &[&str]) -> (Option<i32>, String, String) {
    let output = child::output(
        Command::new(peers::inspector())
            .args(["--cli", server.url.as_str(), "--transport", "http"])
            .arg("--header")
            .arg(format!("Authorization: Bearer {token}"))
            .args(args),
        CLIENT_LIMIT,
    );
    (
        output.status.code(),
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

#[test]
fn the_inspector_cli_lists_and_calls_tools_over_http_with_the_token() {
    let server = HttpServer::start(Some(TOKEN), &["--confirm-timeout", "8s"]);
    let (code, stdout, _) = inspect(&server, TOKEN, &["--method", "tools/list"]);
    assert_eq!(code, Some(0), "{stdout}");
    let listed: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(listed["tools"].as_array().unwrap().len(), 5);

    let (code, stdout, _) = inspect(
        &server,
        TOKEN,
        &[
            "--method",
            "tools/call",
            "--tool-name",
            "control_zwave_device",
            "--tool-arg",
            "deviceName=Switch One",
            "--tool-arg",
            "action=on",
        ],
    );
    assert_eq!(code, Some(0), "{stdout}");
    let called: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(called["structuredContent"]["confirmed"], true, "{stdout}");

    // An isError result is exit code 5, as on stdio.
    let (code, stdout, _) = inspect(
        &server,
        TOKEN,
        &[
            "--method",
            "tools/call",
            "--tool-name",
            "get_device_status",
            "--tool-arg",
            "deviceName=Attic Door",
        ],
    );
    assert_eq!(code, Some(5), "{stdout}");
    assert!(stdout.contains("no Z-Wave device matches"), "{stdout}");

    // A 401 sends the Inspector to OAuth, which a run without a terminal cannot do.
    let (code, _, stderr) = inspect(
        &server,
        "not-the-token-0123456789",
        &["--method", "tools/list"],
    );
    assert_eq!(code, Some(3), "{stderr}");
    assert!(stderr.contains("\"code\":\"auth_required\""), "{stderr}");
}
