//! The conformance checker: our server passes it, and its verdicts on a third-party server
//! and on deliberately broken servers are asserted, so a check that cannot fail is caught.

use std::{collections::BTreeMap, net::TcpListener, process::Command, time::Duration};

use protocol_tests::{Verdict, checks::Report};
use test_support::{
    child, fixture_path,
    peers::{PYTHON_FASTMCP, python_venv, server_everything},
    workspace_bin,
};

fn verdicts(report: &Report) -> BTreeMap<String, Verdict> {
    report
        .checks
        .iter()
        .map(|c| (c.name.clone(), c.verdict))
        .collect()
}

/// The checks at 2025-11-25 and before, in order.
const CHECKS_2025: [&str; 20] = [
    "initialize 2024-11-05",
    "initialize 2025-03-26",
    "initialize 2025-06-18",
    "initialize 2025-11-25",
    "initialize unknown version",
    "requests before initialize",
    "batch under 2025-03-26",
    "ping",
    "tools/list",
    "unknown tool",
    "invalid arguments",
    "unknown method",
    "malformed JSON",
    "non-object line",
    "32 concurrent requests",
    "id reused in flight",
    "1 MiB argument",
    "notifications ignored",
    "notifications/cancelled",
    "exit on stdin EOF",
];

/// The checks at 2026-07-28 of a server that offers it and has no call that asks, in order.
const CHECKS_2026: [&str; 6] = [
    "2026-07-28 server/discover",
    "2026-07-28 caching hints",
    "2026-07-28 request _meta",
    "2026-07-28 input required",
    "2026-07-28 resultType",
    "2026-07-28 no requests to the client",
];

/// Every check passes, except two that do not apply: `notifications/cancelled` (the Z-Wave
/// server has no slow tool whose cancellation could be seen) and the input-required checks
/// (without --allow-sensitive none of its calls asks for a person's yes).
fn assert_all_pass(report: &Report) {
    let names: Vec<&str> = report.checks.iter().map(|c| c.name.as_str()).collect();
    let all: Vec<&str> = CHECKS_2025
        .into_iter()
        .chain(CHECKS_2026)
        .chain(["stdout is only JSON-RPC"])
        .collect();
    assert_eq!(names, all, "every check ran, in order");
    let not_applicable = ["notifications/cancelled", "2026-07-28 input required"];
    let not_passed: Vec<&protocol_tests::checks::CheckResult> = report
        .checks
        .iter()
        .filter(|c| c.verdict != Verdict::Pass && !not_applicable.contains(&c.name.as_str()))
        .collect();
    assert!(not_passed.is_empty(), "{}", report.text());
    let cancelled = report.get("notifications/cancelled").unwrap();
    assert_eq!(
        cancelled.verdict,
        Verdict::NotApplicable,
        "{}",
        report.text()
    );
    assert_eq!(
        cancelled.evidence,
        "no slow tool (a name with long, slow, sleep or wait) to cancel; a fast tool's answer shows nothing either way"
    );
    let input_required = report.get("2026-07-28 input required").unwrap();
    assert_eq!(input_required.verdict, Verdict::NotApplicable);
    assert_eq!(
        input_required.evidence,
        "no --input-required-call given, and `control_zwave_device` {} did not ask for input: an isError result \"failed to deserialize parameters: missing field `deviceName`\""
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn our_server_passes_every_check_in_demo_mode() {
    let server = workspace_bin("zwave-mcp-server")
        .to_string_lossy()
        .into_owned();
    let report = protocol_tests::run(&[server, "--demo".into()]).await;
    assert_all_pass(&report);
    assert_eq!(
        report.get("2026-07-28 server/discover").unwrap().evidence,
        "supports [\"2024-11-05\",\"2025-03-26\",\"2025-06-18\",\"2025-11-25\",\"2026-07-28\"]; capabilities: completions, prompts, resources, tools; zwave-mcp-server 0.1.0"
    );
    assert_eq!(
        report.get("2026-07-28 caching hints").unwrap().evidence,
        // The home is listed as a resource now, so the checker reads it too.
        "tools/list (ttlMs 0, public), prompts/list (ttlMs 0, private), resources/list (ttlMs 0, private), resources/templates/list (ttlMs 0, private), resources/read (ttlMs 0, private)"
    );
    assert_eq!(
        report.get("invalid arguments").unwrap().evidence,
        "`control_zwave_device` without its required parameters: isError result \"failed to deserialize parameters: missing field `deviceName`\""
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn our_server_passes_every_check_with_the_broker_unreachable() {
    let port = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let server = workspace_bin("zwave-mcp-server")
        .to_string_lossy()
        .into_owned();
    let report = protocol_tests::run(&[
        server,
        "--mqtt-url".into(),
        format!("mqtt://127.0.0.1:{port}"),
        "--api-timeout".into(),
        "1s".into(),
    ])
    .await;
    assert_all_pass(&report);
}

/// The same over the other backend: the demo home through a simulated zwave-js-server.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn our_server_passes_every_check_over_zwave_js_server() {
    let server = workspace_bin("zwave-mcp-server")
        .to_string_lossy()
        .into_owned();
    let report = protocol_tests::run(&[
        server,
        "--demo".into(),
        "--demo-backend".into(),
        "zwave-js-server".into(),
    ])
    .await;
    assert_all_pass(&report);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn our_server_passes_every_check_with_zwave_js_server_unreachable() {
    let port = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let server = workspace_bin("zwave-mcp-server")
        .to_string_lossy()
        .into_owned();
    let report = protocol_tests::run(&[
        server,
        "--zwave-js-url".into(),
        format!("ws://127.0.0.1:{port}"),
        "--api-timeout".into(),
        "1s".into(),
    ])
    .await;
    assert_all_pass(&report);
}

/// Calibration: the TypeScript reference server, pinned, gets these verdicts.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn server_everything_gets_the_expected_verdicts() {
    let (node, args) = server_everything();
    let command: Vec<String> = std::iter::once(node).chain(args).collect();
    let report = protocol_tests::run(&command).await;
    let mut expected: BTreeMap<String, Verdict> = CHECKS_2025
        .iter()
        .chain(&["stdout is only JSON-RPC"])
        .map(|c| ((*c).to_owned(), Verdict::Pass))
        .collect();
    // A 2025-11-25 server (MCP_AND_LLM.md): no server/discover, so no 2026-07-28 checks.
    expected.insert("2026-07-28 server/discover".into(), Verdict::Note);
    // It serves tools/list before initialize.
    expected.insert("requests before initialize".into(), Verdict::Warn);
    // It answers an unknown tool with an isError result, not a JSON-RPC error.
    expected.insert("unknown tool".into(), Verdict::Warn);
    // Its cancelled long-running operation keeps node alive after stdin closes.
    expected.insert("exit on stdin EOF".into(), Verdict::Fail);
    // It agrees on 2025-03-26 but answers no batch (the TypeScript SDK's stdio transport
    // parses one message per line).
    expected.insert("batch under 2025-03-26".into(), Verdict::Fail);
    // It ignores lines that are not JSON or not requests: no -32700 / -32600.
    expected.insert("malformed JSON".into(), Verdict::Warn);
    expected.insert("non-object line".into(), Verdict::Warn);
    assert_eq!(verdicts(&report), expected, "{}", report.text());
    assert_eq!(
        report.get("unknown tool").unwrap().evidence,
        "answered with an isError result; the spec asks for a JSON-RPC error for unknown tools"
    );
    assert_eq!(
        report.get("batch under 2025-03-26").unwrap().evidence,
        "no answer to a batch of two pings within 2 s, although the server agreed on 2025-03-26, which requires batches"
    );
    assert_eq!(
        report.get("2026-07-28 server/discover").unwrap().evidence,
        "refused (error -32601: Method not found): a 2025-11-25 server; the 2026-07-28 checks do not apply"
    );
}

/// Calibration: a FastMCP server (the Python SDK 1.x line), pinned, gets these verdicts.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fastmcp_gets_the_expected_verdicts() {
    let python = python_venv("mcp1", PYTHON_FASTMCP)
        .to_string_lossy()
        .into_owned();
    let script = fixture_path("peers/fastmcp_server.py")
        .to_string_lossy()
        .into_owned();
    let report = protocol_tests::run(&[python, script]).await;
    let mut expected: BTreeMap<String, Verdict> = CHECKS_2025
        .iter()
        .chain(&["stdout is only JSON-RPC"])
        .map(|c| ((*c).to_owned(), Verdict::Pass))
        .collect();
    // It refuses server/discover with -32602 (invalid params): a 2025-11-25 server.
    expected.insert("2026-07-28 server/discover".into(), Verdict::Note);
    // Like server-everything: no batch, an isError result for an unknown tool, and lines that
    // are no requests ignored.
    expected.insert("batch under 2025-03-26".into(), Verdict::Fail);
    expected.insert("unknown tool".into(), Verdict::Warn);
    expected.insert("malformed JSON".into(), Verdict::Warn);
    expected.insert("non-object line".into(), Verdict::Warn);
    // It answers an unknown method with -32602, not -32601.
    expected.insert("unknown method".into(), Verdict::Warn);
    // Its tools are fast: nothing to cancel.
    expected.insert("notifications/cancelled".into(), Verdict::NotApplicable);
    assert_eq!(verdicts(&report), expected, "{}", report.text());
    assert_eq!(
        report.get("2026-07-28 server/discover").unwrap().evidence,
        "refused (error -32602: Invalid request parameters): a 2025-11-25 server; the 2026-07-28 checks do not apply"
    );
}

fn fake(mode: &str) -> Vec<String> {
    let script = fixture_path("fake-servers/fake_mcp_server.py");
    vec![
        "python3".into(),
        script.to_string_lossy().into_owned(),
        mode.into(),
    ]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn broken_servers_fail_the_checks_that_concern_them() {
    let garbage = protocol_tests::run(&fake("garbage")).await;
    let stdout = garbage.get("stdout is only JSON-RPC").unwrap();
    assert_eq!(stdout.verdict, Verdict::Fail);
    assert!(
        stdout.evidence.contains("[initialize 2024-11-05] not JSON: \"hello from a print() that should have gone to stderr\" (52 bytes)"),
        "{}",
        stdout.evidence
    );
    assert_eq!(
        garbage.get("initialize unknown version").unwrap().verdict,
        Verdict::Fail
    );
    assert_eq!(
        garbage.get("invalid arguments").unwrap().verdict,
        Verdict::Fail
    );

    let bad_tools = protocol_tests::run(&fake("badtools")).await;
    let tools = bad_tools.get("tools/list").unwrap();
    assert_eq!(tools.verdict, Verdict::Fail);
    assert_eq!(
        tools.evidence,
        "2 tools in 1 page: `files.read`: name is not valid for LLM providers (^[a-zA-Z0-9_-]{1,64}$); hosts must rename it (e.g. `files_read`); `list`: inputSchema type must be \"object\" at the top (LLM providers need it), got \"array\""
    );
    assert_eq!(
        bad_tools.get("invalid arguments").unwrap().verdict,
        Verdict::Skip
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_crashes_on_a_non_object_line_fails_that_check() {
    let report = protocol_tests::run(&fake("fragile")).await;
    assert_eq!(report.get("malformed JSON").unwrap().verdict, Verdict::Warn);
    let line = report.get("non-object line").unwrap();
    assert_eq!(line.verdict, Verdict::Fail);
    assert_eq!(
        line.evidence,
        "the session did not continue: ping got no answer within 10 s"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_ignores_stdin_eof_fails_the_exit_check() {
    // `stubborn` answers every check normally but neither exits at EOF nor on SIGTERM.
    let report = protocol_tests::run(&fake("stubborn")).await;
    assert_eq!(
        report.get("32 concurrent requests").unwrap().verdict,
        Verdict::Pass
    );
    let exit = report.get("exit on stdin EOF").unwrap();
    assert_eq!(exit.verdict, Verdict::Fail, "{}", report.text());
    assert_eq!(
        exit.evidence,
        "still running 2 s after stdin closed (killed)"
    );
}

#[test]
fn the_binary_prints_one_line_per_check_and_exits_1_on_failure() {
    let output = child::output(
        Command::new(workspace_bin("mcp-conformance"))
            .arg("--")
            .args(fake("badtools")),
        Duration::from_secs(120),
    );
    assert_eq!(output.status.code(), Some(1));
    let stdout = String::from_utf8(output.stdout).unwrap();
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines.len(), 23, "{stdout}");
    assert!(
        lines[8].starts_with(
            "FAIL tools/list: 2 tools in 1 page: `files.read`: name is not valid for LLM providers"
        ),
        "{stdout}"
    );
    assert!(
        lines[20].starts_with("NOTE 2026-07-28 server/discover: refused (error -32601"),
        "{stdout}"
    );
    assert!(
        lines[22].ends_with(" failed, 3 warnings, 1 note, 1 skipped, 1 not applicable"),
        "{stdout}"
    );

    let output = child::output(
        Command::new(workspace_bin("mcp-conformance"))
            .args(["--json", "--"])
            .arg(workspace_bin("zwave-mcp-server"))
            .arg("--demo"),
        Duration::from_secs(120),
    );
    assert_eq!(output.status.code(), Some(0));
    let report: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(report["checks"].as_array().unwrap().len(), 27);
    assert_eq!(
        report["checks"][0],
        serde_json::json!({"name": "initialize 2024-11-05", "verdict": "pass", "evidence": "agreed on 2024-11-05 (zwave-mcp-server 0.1.0)"})
    );
}

#[test]
fn the_binary_checks_one_revision_with_the_call_that_asks() {
    let output = child::output(
        Command::new(workspace_bin("mcp-conformance"))
            .args(["--protocol", "2026-07-28", "--input-required-call"])
            .args([
                "control_zwave_device",
                r#"{"deviceName":"Front Door Lock","action":"unlock"}"#,
                "--",
            ])
            .arg(workspace_bin("zwave-mcp-server"))
            .args(["--demo", "--allow-sensitive", "lock"]),
        Duration::from_secs(120),
    );
    let stdout = String::from_utf8(output.stdout).unwrap();
    assert_eq!(output.status.code(), Some(0), "{stdout}");
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines.len(), 11, "{stdout}");
    assert!(
        lines[3].starts_with("PASS 2026-07-28 input required: round trip: "),
        "{stdout}"
    );
    assert_eq!(
        lines[10],
        "10 passed, 0 failed, 0 warnings, 0 notes, 0 skipped, 0 not applicable"
    );

    // Its arguments must be a JSON object, and it is a 2026-07-28 check.
    for (args, said) in [
        (
            vec!["--input-required-call", "control_zwave_device", "[]"],
            "the arguments of `control_zwave_device` must be a JSON object, got an array",
        ),
        (
            vec![
                "--protocol",
                "2025-11-25",
                "--input-required-call",
                "control_zwave_device",
                "{}",
            ],
            "--input-required-call is a 2026-07-28 check: use --protocol 2026-07-28 or both",
        ),
    ] {
        let output = child::output(
            Command::new(workspace_bin("mcp-conformance"))
                .args(args)
                .args(["--", "true"]),
            Duration::from_secs(30),
        );
        assert_eq!(output.status.code(), Some(2));
        let stderr = String::from_utf8(output.stderr).unwrap();
        assert!(stderr.contains(said), "{stderr}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_fake_servers_slow_tool_ignores_cancellation_and_gets_a_warning() {
    // `slow` sleeps a second and answers anyway: the check can fail (warn) as well as pass.
    let report = protocol_tests::run(&fake("clean")).await;
    let cancelled = report.get("notifications/cancelled").unwrap();
    assert_eq!(cancelled.verdict, Verdict::Warn, "{}", report.text());
    assert_eq!(
        cancelled.evidence,
        "the slow tool `slow` still answered 2 s after its cancellation"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_stops_reading_stdin_cannot_hang_the_checker() {
    let mut session =
        protocol_tests::session::Session::start(&fake("deaf"), "deaf", std::sync::Arc::default())
            .unwrap();
    session.initialize("2025-11-25").await.unwrap();
    // `deaf` stops reading stdin once it has answered tools/list.
    let listed = session
        .request("tools/list", None, protocol_tests::session::ANSWER_TIMEOUT)
        .await;
    assert!(listed.is_some());
    let err = session
        .send_raw(&"x".repeat(1024 * 1024))
        .await
        .unwrap_err();
    assert_eq!(err.kind(), std::io::ErrorKind::TimedOut);
    assert_eq!(
        err.to_string(),
        "the server did not read a 1048577 byte line from its stdin within 10s"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_loses_an_answer_to_a_reused_id_gets_a_warning() {
    let report = protocol_tests::run(&fake("forgetful")).await;
    let reused = report.get("id reused in flight").unwrap();
    assert_eq!(reused.verdict, Verdict::Warn, "{}", report.text());
    assert_eq!(
        reused.evidence,
        "two requests with id 77777 sent together got one answer: a client that reuses an id by mistake waits forever for the other (answer it with an error, e.g. -32600)"
    );
}
