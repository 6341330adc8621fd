//! `mcp-client bench`: its report (JSON and table) against a real server process and against
//! a remote one (`--url`: our server's `--http`), and every way a run can be refused or
//! stopped, with its message and exit code.

use std::{
    process::{Command, Output},
    time::Duration,
};

use serde_json::Value;

use crate::harness::{TOKEN, ZwaveHttp, fixture_path};

const BIN: &str = env!("CARGO_BIN_EXE_mcp-client");

/// Runs `mcp-client bench ARGS -- python3 fake_mcp_server.py SERVER…`; (output, stdout, stderr).
fn bench(args: &[&str], server: &[&str]) -> (Output, String, String) {
    let output = test_support::child::output(
        Command::new(BIN)
            .arg("bench")
            .args(args)
            .arg("--")
            .arg("python3")
            .arg(fixture_path("fake-servers/fake_mcp_server.py"))
            .args(server)
            .env("MCP_CLIENT_LOG", "off"),
        Duration::from_secs(120),
    );
    let stdout = String::from_utf8(output.stdout.clone()).unwrap();
    let stderr = String::from_utf8(output.stderr.clone()).unwrap();
    (output, stdout, stderr)
}

fn number(value: &Value, key: &str) -> f64 {
    value[key]
        .as_f64()
        .unwrap_or_else(|| panic!("`{key}` is not a number in {value}"))
}

#[test]
fn bench_reports_latency_throughput_and_the_servers_costs_as_json() {
    let (output, stdout, stderr) = bench(
        &[
            "--tool",
            "echo",
            "--allow-writes",
            "--args",
            r#"{"message": "hi"}"#,
            "--calls",
            "200",
            "--concurrency",
            "4",
            "--warmup",
            "5",
            "--json",
        ],
        &["clean"],
    );
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    assert_eq!(stderr, "", "no progress bar when stderr is not a terminal");
    let report: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(report["server"], "fake 1.0");
    assert_eq!(report["protocol_version"], "2025-11-25");
    assert_eq!(report["request"], "tools/call echo");
    assert!(number(&report, "start_ms") > 0.0, "{report}");
    let phases = report["phases"].as_array().unwrap();
    assert_eq!(phases.len(), 2, "{report}");
    for (phase, (name, in_flight)) in phases.iter().zip([("sequential", 1), ("concurrent", 4)]) {
        assert_eq!(phase["name"], name);
        assert_eq!(phase["in_flight"], in_flight);
        assert_eq!(phase["calls"], 200);
        assert_eq!(phase["tool_errors"], 0);
        let ordered = ["p50_us", "p90_us", "p99_us", "max_us"].map(|key| number(phase, key));
        assert!(ordered[0] > 0.0, "{phase}");
        assert!(ordered.windows(2).all(|w| w[0] <= w[1]), "{phase}");
        assert!(number(phase, "mean_us") <= ordered[3], "{phase}");
        assert!(number(phase, "calls_per_second") > 0.0, "{phase}");
        assert!(number(phase, "server_cpu_ms") >= 0.0, "{phase}");
        assert!(number(phase, "server_cpu_per_call_us") >= 0.0, "{phase}");
    }
    let process = &report["server_process"];
    assert_eq!(process["processes"], 1, "python3 runs the server itself");
    assert!(number(process, "pid") > 0.0);
    assert!(
        number(process, "peak_rss_kib") > 1_024.0,
        "a Python interpreter holds more than 1 MiB: {process}"
    );
}

#[test]
fn bench_without_a_tool_times_ping_and_prints_a_table() {
    let (output, stdout, stderr) = bench(
        &["--calls", "50", "--concurrency", "1", "--warmup", "1"],
        &["clean"],
    );
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines[0], "server   fake 1.0 (protocol 2025-11-25)");
    assert_eq!(lines[1], "request  ping");
    assert!(lines[2].starts_with("start    "), "{stdout}");
    assert!(
        lines[2].ends_with(" from spawn to a started session"),
        "{stdout}"
    );
    assert!(lines[3].starts_with("memory   "), "{stdout}");
    assert!(
        lines[3].contains(" MiB peak resident (1 process, pid ") && lines[3].ends_with(')'),
        "{stdout}"
    );
    assert!(lines[5].starts_with("phase "), "{stdout}");
    assert!(lines[5].ends_with("calls/s server CPU/call"), "{stdout}");
    let row: Vec<&str> = lines[6].split_whitespace().collect();
    assert_eq!(row[..4], ["sequential", "1", "50", "0"], "{stdout}");
    assert_eq!(
        lines.len(),
        7,
        "one phase only at --concurrency 1: {stdout}"
    );
}

#[test]
fn bench_refuses_a_tool_the_server_lacks_and_names_those_it_has() {
    let (output, stdout, stderr) = bench(&["--tool", "nope"], &["clean"]);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert_eq!(stdout, "");
    assert_eq!(
        stderr,
        "mcp-client: the server has no tool `nope`; it offers `echo`, `crash`, `hang`, `slow`, `badutf8`, `notify`, `greet`, `progress`\n"
    );
}

#[test]
fn bench_stops_when_the_first_call_fails_instead_of_timing_errors() {
    let (output, stdout, stderr) = bench(
        &["--tool", "greet", "--allow-writes", "--calls", "10"],
        &["clean"],
    );
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert_eq!(stdout, "");
    assert_eq!(
        stderr,
        "mcp-client bench: the first tools/call greet failed, so there is nothing worth timing (fix the tool's arguments): the tool answered with an error: missing required argument userName\n"
    );
    let (output, _, stderr) = bench(&["--tool", "crash", "--allow-writes"], &["clean"]);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.starts_with("mcp-client bench: the first tools/call crash failed, so there is nothing worth timing (fix the tool's arguments): "),
        "{stderr}"
    );
    assert!(
        stderr.contains("fatal: simulated crash in the middle of a call"),
        "{stderr}"
    );
}

#[test]
fn bench_names_the_call_at_which_a_server_died() {
    let (output, stdout, stderr) = bench(
        &[
            "--tool",
            "echo",
            "--allow-writes",
            "--args",
            r#"{"message": "hi"}"#,
            "--calls",
            "100",
            "--concurrency",
            "1",
            "--warmup",
            "5",
        ],
        &["mortal", "20"],
    );
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert_eq!(stdout, "");
    assert!(
        stderr.starts_with("mcp-client bench: call 16 of the sequential phase failed: "),
        "{stderr}"
    );
    assert!(stderr.contains("exit status: 4"), "{stderr}");
    assert!(stderr.contains("mortal: exiting at call 21"), "{stderr}");
}

#[test]
fn bench_explains_a_server_that_cannot_start() {
    let (output, stdout, stderr) = bench(&[], &["exit"]);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert_eq!(stdout, "");
    assert!(
        stderr.starts_with("mcp-client bench: the server did not start: MCP connection failed after 1 attempt: server `server`: initialize failed: "),
        "{stderr}"
    );
    assert!(stderr.contains("config error: missing TOKEN"), "{stderr}");
}

#[test]
fn bench_usage_errors_name_the_value_and_what_would_be_valid() {
    let (output, _, stderr) = bench(&["--tool", "echo", "--args", "[1]"], &["clean"]);
    assert_eq!(output.status.code(), Some(2));
    assert_eq!(
        stderr,
        "mcp-client: --args must be a JSON object of named arguments, got [1]\n"
    );
    let (output, _, stderr) = bench(&["--args", "{}"], &["clean"]);
    assert_eq!(output.status.code(), Some(2));
    assert!(
        stderr.starts_with(
            "error: the following required arguments were not provided:\n  --tool <TOOL>"
        ),
        "{stderr}"
    );
    let (output, _, stderr) = bench(&["--protocol-version", "2099-01-01"], &["clean"]);
    assert_eq!(output.status.code(), Some(2));
    assert!(
        stderr.starts_with(
            "error: invalid value '2099-01-01' for '--protocol-version <PROTOCOL_VERSION>': `2099-01-01` is not an MCP revision this client speaks: use one of "
        ),
        "{stderr}"
    );
    let (output, _, stderr) = bench(&["--calls", "0"], &["clean"]);
    assert_eq!(output.status.code(), Some(2));
    assert!(
        stderr.starts_with(
            "error: invalid value '0' for '--calls <CALLS>': 0 is not in 1..=10000000"
        ),
        "{stderr}"
    );
}

// Issue 31 item 16: thousands of calls to a tool that may change things need the person's say.
#[test]
fn bench_refuses_a_tool_not_marked_read_only_without_allow_writes() {
    let record = crate::harness::scratch_file("bench-record");
    let output = test_support::child::output(
        Command::new(BIN)
            .args([
                "bench",
                "--tool",
                "echo",
                "--args",
                r#"{"message": "hi"}"#,
                "--",
            ])
            .arg("python3")
            .arg(fixture_path("fake-servers/fake_mcp_server.py"))
            .arg("clean")
            .env("MCP_CLIENT_LOG", "off")
            .env("FAKE_RECORD", &record),
        Duration::from_secs(60),
    );
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert_eq!(
        stderr,
        "mcp-client: `echo` is not marked read-only by the server (readOnlyHint), so each of the 4100 calls of this run may change something real: pass --allow-writes to benchmark it anyway\n"
    );
    let sent = std::fs::read_to_string(&record).unwrap();
    assert!(!sent.contains("tools/call"), "no call was made: {sent}");
    // A read-only tool needs no flag.
    let output = test_support::child::output(
        Command::new(BIN)
            .args([
                "bench",
                "--tool",
                "get_device_status",
                "--args",
                r#"{"deviceName": "Switch One"}"#,
                "--calls",
                "5",
                "--warmup",
                "1",
                "--concurrency",
                "1",
                "--json",
                "--",
            ])
            .arg(test_support::workspace_bin("zwave-mcp-server"))
            .arg("--demo")
            .env("MCP_CLIENT_LOG", "off"),
        Duration::from_secs(120),
    );
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(0), "{stderr}");
}

/// `mcp-client bench ARGS` (no server command) with `ZWAVE_MCP_TOKEN` = `token` (unset when
/// `None`): (exit code, stdout, stderr).
fn bench_remote(args: &[&str], token: Option<&str>) -> (Option<i32>, String, String) {
    let mut command = Command::new(BIN);
    command
        .arg("bench")
        .args(args)
        .env("MCP_CLIENT_LOG", "off")
        .env_remove("ZWAVE_MCP_TOKEN");
    if let Some(token) = token {
        command.env("ZWAVE_MCP_TOKEN", token);
    }
    let output = test_support::child::output(&mut command, Duration::from_secs(120));
    (
        output.status.code(),
        String::from_utf8(output.stdout).unwrap(),
        String::from_utf8(output.stderr).unwrap(),
    )
}

/// The header that carries the token, from the environment.
const AUTHORIZATION: &str = "Authorization: Bearer ${ZWAVE_MCP_TOKEN}";

#[test]
fn bench_measures_a_remote_server_and_says_it_has_no_figures_of_its_process() {
    let zwave = ZwaveHttp::start("127.0.0.1:0");
    let run = |extra: &[&str]| {
        let mut args = vec![
            "--url",
            &zwave.url,
            "--header",
            AUTHORIZATION,
            "--tool",
            "get_device_status",
            "--args",
            r#"{"deviceName": "Switch One"}"#,
            "--calls",
            "100",
            "--warmup",
            "5",
        ];
        args.extend_from_slice(extra);
        bench_remote(&args, Some(TOKEN))
    };
    let (code, stdout, stderr) = run(&["--concurrency", "4", "--json"]);
    assert_eq!(code, Some(0), "{stderr}");
    assert!(!stdout.contains(TOKEN) && !stderr.contains(TOKEN));
    let report: Value = serde_json::from_str(&stdout).unwrap();
    assert!(
        report["server"]
            .as_str()
            .unwrap()
            .starts_with("zwave-mcp-server "),
        "{report}"
    );
    assert_eq!(report["protocol_version"], "2026-07-28");
    assert_eq!(report["request"], "tools/call get_device_status");
    assert_eq!(report["server_url"], zwave.url.as_str());
    assert_eq!(report["server_process"], Value::Null, "{report}");
    assert!(number(&report, "start_ms") > 0.0, "{report}");
    let phases = report["phases"].as_array().unwrap();
    assert_eq!(phases.len(), 2, "{report}");
    for (phase, (name, in_flight)) in phases.iter().zip([("sequential", 1), ("concurrent", 4)]) {
        assert_eq!(phase["name"], name);
        assert_eq!(phase["in_flight"], in_flight);
        assert_eq!(phase["calls"], 100);
        assert_eq!(phase["tool_errors"], 0);
        let ordered = ["p50_us", "p90_us", "p99_us", "max_us"].map(|key| number(phase, key));
        assert!(ordered[0] > 0.0, "{phase}");
        assert!(ordered.windows(2).all(|w| w[0] <= w[1]), "{phase}");
        assert!(number(phase, "calls_per_second") > 0.0, "{phase}");
        assert_eq!(phase["server_cpu_ms"], Value::Null, "{phase}");
        assert_eq!(phase["server_cpu_per_call_us"], Value::Null, "{phase}");
    }

    // Pinned to the revision before 2026-07-28: one session over HTTP.
    let (code, stdout, stderr) = run(&["--concurrency", "1", "--protocol-version", "2025-11-25"]);
    assert_eq!(code, Some(0), "{stderr}");
    let lines: Vec<&str> = stdout.lines().collect();
    assert!(
        lines[0].starts_with("server   zwave-mcp-server ")
            && lines[0].ends_with(" (protocol 2025-11-25)"),
        "{stdout}"
    );
    assert!(
        lines[2].starts_with("start    ")
            && lines[2].ends_with(" from the first request to a started session"),
        "{stdout}"
    );
    assert_eq!(
        lines[3],
        "memory   not measured: a remote server's process is not this run's (nor its CPU time)"
    );
    let row: Vec<&str> = lines[6].split_whitespace().collect();
    assert_eq!(row[..4], ["sequential", "1", "100", "0"], "{stdout}");
    assert_eq!(row.last(), Some(&"n/a"), "{stdout}");
    assert_eq!(lines.len(), 7, "{stdout}");
}

#[test]
fn bench_of_a_remote_server_names_what_to_fix_before_and_at_the_start() {
    let zwave = ZwaveHttp::start("127.0.0.1:0");
    let url = zwave.url.as_str();
    // The token's variable unset: refused before anything is sent, naming the flag.
    let (code, stdout, stderr) = bench_remote(&["--url", url, "--header", AUTHORIZATION], None);
    assert_eq!((code, stdout.as_str()), (Some(2), ""), "{stderr}");
    assert_eq!(
        stderr,
        "mcp-client: --header `Authorization` refers to ${ZWAVE_MCP_TOKEN}, which is not set (set it, or write ${ZWAVE_MCP_TOKEN:-default})\n"
    );
    // A header without its colon is not quoted: it may be the token.
    let (code, _, stderr) = bench_remote(
        &[
            "--url",
            url,
            "--header",
            "Authorization Bearer s3cret-token",
        ],
        None,
    );
    assert_eq!(code, Some(2), "{stderr}");
    assert_eq!(
        stderr,
        "mcp-client: a --header has no `:`: write it `Name: value`\n"
    );
    let (code, _, stderr) = bench_remote(&["--url", "ftp://127.0.0.1/mcp"], None);
    assert_eq!(code, Some(2), "{stderr}");
    assert_eq!(
        stderr,
        "mcp-client: --url is not an http:// or https:// URL: give the server's Streamable HTTP endpoint, such as http://127.0.0.1:8080/mcp\n"
    );
    // A wrong token: the 401 says what to check, and the token is never shown.
    let wrong = "a-wrong-token-of-some-length";
    let (code, stdout, stderr) =
        bench_remote(&["--url", url, "--header", AUTHORIZATION], Some(wrong));
    assert_eq!((code, stdout.as_str()), (Some(1), ""), "{stderr}");
    assert!(
        stderr.starts_with("mcp-client bench: the server did not start: MCP connection failed after 1 attempt: server `server`: initialize failed: the server refused our credentials (HTTP 401)\n  check: check the token"),
        "{stderr}"
    );
    assert!(!stderr.contains(wrong), "{stderr}");
    // Nothing listening.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let (code, _, stderr) = bench_remote(&["--url", &format!("http://127.0.0.1:{port}/mcp")], None);
    assert_eq!(code, Some(1), "{stderr}");
    assert_eq!(
        stderr,
        format!(
            "mcp-client bench: the server did not start: MCP connection failed after 1 attempt: server `server`: initialize failed: connection refused by 127.0.0.1:{port}\n  check: is the server running, and listening at that address and port?\n"
        )
    );
}

#[test]
fn bench_takes_a_url_or_a_command_but_not_both() {
    let (code, _, stderr) = bench_remote(&["--url", "http://127.0.0.1:9/mcp", "--", "true"], None);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(
        stderr.starts_with("error: the argument '--url <URL>' cannot be used with '[COMMAND]...'"),
        "{stderr}"
    );
    let (code, _, stderr) = bench_remote(&["--header", "X-A: b", "--", "true"], None);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(
        stderr.starts_with(
            "error: the argument '--header <NAME: VALUE>' cannot be used with '[COMMAND]...'"
        ),
        "{stderr}"
    );
    let (code, _, stderr) = bench_remote(&[], None);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(
        stderr.starts_with(
            "error: the following required arguments were not provided:\n  <COMMAND>..."
        ),
        "{stderr}"
    );
}
