//! The `mcp-client` binary: `servers` and `doctor`, their output and exit codes.

use std::{
    process::{Command, Output},
    time::Duration,
};

use crate::harness::{fixture_path, is_running, scratch_file};

const BIN: &str = env!("CARGO_BIN_EXE_mcp-client");

fn run(args: &[&str]) -> (Output, String) {
    let root = test_support::workspace_root();
    let output = test_support::child::output(
        Command::new(BIN)
            .args(args)
            .current_dir(root)
            .env("MCP_CLIENT_LOG", "off"),
        Duration::from_secs(60),
    );
    let stdout = String::from_utf8(output.stdout.clone()).unwrap();
    (output, stdout)
}

#[test]
fn doctor_passes_a_clean_server() {
    let (output, stdout) = run(&[
        "doctor",
        "--",
        "python3",
        "fixtures/fake-servers/fake_mcp_server.py",
        "clean",
    ]);
    assert_eq!(output.status.code(), Some(0), "{stdout}");
    let lines: Vec<&str> = stdout.lines().collect();
    assert!(
        lines[0].starts_with("ok   start: initialize answered in "),
        "{stdout}"
    );
    assert!(
        lines[0].ends_with(" ms (fake 1.0, protocol 2025-11-25)"),
        "{stdout}"
    );
    assert_eq!(
        lines[1],
        "note revisions: 2025-11-25 only (server/discover refused): clients of 2026-07-28 fall back to initialize"
    );
    assert_eq!(lines[2], "ok   capabilities: tools announced");
    assert!(
        lines.contains(
            &"ok   tools: 8 tools, names valid for LLM providers, object schemas, descriptions"
        ),
        "{stdout}"
    );
    assert!(
        lines.contains(
            &"note tools: `echo`: has the name of a local builtin tool: hosts with local tools keep `echo` for theirs and offer this one under a prefixed name"
        ),
        "{stdout}"
    );
    assert!(
        lines.contains(&"ok   stdout: clean: 4 messages, nothing else"),
        "{stdout}"
    );
    assert_eq!(*lines.last().unwrap(), "0 problems, 0 warnings");
}

#[test]
fn doctor_shows_stdout_pollution_with_the_offending_lines() {
    let (output, stdout) = run(&[
        "doctor",
        "--",
        "python3",
        "fixtures/fake-servers/fake_mcp_server.py",
        "garbage",
    ]);
    assert_eq!(output.status.code(), Some(1), "{stdout}");
    assert!(stdout.contains("FAIL stdout: 8 lines were not MCP messages (they belong on stderr), 0 had invalid UTF-8:\n"), "{stdout}");
    assert!(stdout.contains("stdout: not JSON: \"hello from a print() that should have gone to stderr\" (52 bytes)\n"), "{stdout}");
    assert!(stdout.ends_with("1 problem, 0 warnings\n"), "{stdout}");
}

#[test]
fn doctor_reports_bad_tool_definitions() {
    let (output, stdout) = run(&[
        "doctor",
        "--",
        "python3",
        "fixtures/fake-servers/fake_mcp_server.py",
        "badtools",
    ]);
    assert_eq!(output.status.code(), Some(1), "{stdout}");
    for expected in [
        "FAIL tools: `files.read`: name is not valid for LLM providers (^[a-zA-Z0-9_-]{1,64}$); hosts must rename it (e.g. `files_read`)",
        "WARN tools: `list`: no description: models choose tools by their descriptions",
        "FAIL tools: `list`: inputSchema type must be \"object\" at the top (LLM providers need it), got \"array\"",
    ] {
        assert!(
            stdout.contains(expected),
            "missing {expected:?} in\n{stdout}"
        );
    }
    assert!(stdout.ends_with("2 problems, 1 warning\n"), "{stdout}");
}

#[test]
fn doctor_explains_a_server_that_cannot_start() {
    let (output, stdout) = run(&[
        "doctor",
        "--",
        "python3",
        "fixtures/fake-servers/fake_mcp_server.py",
        "exit",
    ]);
    assert_eq!(output.status.code(), Some(1));
    assert!(stdout.starts_with("FAIL start: MCP connection failed after 1 attempt: server `server`: initialize failed: "), "{stdout}");
    assert!(
        stdout.contains("\n    config error: missing TOKEN\n"),
        "{stdout}"
    );
}

#[test]
fn servers_lists_every_configured_server_with_its_state() {
    let (output, stdout) = run(&["servers", "--config", "fixtures/mcp-servers/fakes.json"]);
    assert_eq!(output.status.code(), Some(1), "a server is down: {stdout}");
    let lines: Vec<&str> = stdout.lines().collect();
    assert!(lines[0].starts_with("broken: down — MCP connection failed after 2 attempts: server `broken`: initialize failed: "), "{stdout}");
    assert!(
        stdout.contains("    config error: missing TOKEN\n"),
        "{stdout}"
    );
    let good = lines.iter().find(|l| l.starts_with("good: ")).unwrap();
    assert!(
        good.starts_with("good: connected — fake 1.0 (protocol 2025-11-25), started in "),
        "{good}"
    );
    assert!(
        good.ends_with(" ms, 8 tools, stdout: 3 messages, 6 lines dropped"),
        "{good}"
    );
    assert!(
        stdout.contains("    dropped not JSON: \"[INFO] still starting up...\" (27 bytes)\n"),
        "{stdout}"
    );
    assert!(stdout.ends_with("off: disabled\n"), "{stdout}");
}

#[test]
fn a_bad_config_file_is_named_in_the_error_with_exit_code_2() {
    let (output, _) = run(&["servers", "--config", "fixtures/mcp-servers/missing.json"]);
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    // The cause once: the message holds it, and it is not chained again.
    assert_eq!(
        stderr,
        "mcp-client: cannot read \"fixtures/mcp-servers/missing.json\": No such file or directory (os error 2)\n"
    );
}

#[test]
fn tools_lists_local_and_mcp_tools_with_their_source() {
    let (output, stdout) = run(&[
        "tools",
        "--tools",
        "fixtures/tools/local-tools.json",
        "--config",
        "fixtures/mcp-servers/fakes.json",
    ]);
    assert_eq!(output.status.code(), Some(0), "{stdout}");
    let lines: Vec<&str> = stdout.lines().collect();
    assert!(
        lines.contains(&"get_weather  [mock]  Weather for a city (mock data for tests)."),
        "{stdout}"
    );
    // The fake server also offers `echo`: the local builtin keeps the name (a server must never
    // receive calls meant for a local tool), the server's is prefixed, and the listing says so.
    assert_eq!(
        lines[0],
        "note: MCP server `good` offers `echo`, the name of a local tool: the local tool keeps the name, the server's is `good__echo`"
    );
    assert!(
        lines.contains(
            &"echo  [builtin:echo]  Returns the parameters it was called with, for testing."
        ),
        "{stdout}"
    );
    assert!(
        lines.contains(&"good__echo  [mcp:good]  Echoes the message"),
        "{stdout}"
    );
    assert!(
        lines.contains(&"greet  [mcp:good]  Greets a user"),
        "{stdout}"
    );
    let (_, json) = run(&[
        "tools",
        "--tools",
        "fixtures/tools/local-tools.json",
        "--json",
    ]);
    let tools: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(tools[1]["name"], "math_eval");
    assert_eq!(tools[1]["parameters"]["required"][0], "expression");
}

#[test]
fn call_prints_the_outcome_and_sets_the_exit_code() {
    let (output, stdout) = run(&[
        "call",
        "math_eval",
        "--args",
        r#"{"expression": "2+2"}"#,
        "--tools",
        "fixtures/tools/local-tools.json",
    ]);
    assert_eq!(output.status.code(), Some(0));
    let outcome: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(outcome["success"], true);
    assert_eq!(outcome["result"], serde_json::json!({"result": 4}));
    assert_eq!(outcome["tool_name"], "math_eval");

    let (output, stdout) = run(&[
        "call",
        "math_eval",
        "--args",
        r#"{"expression": "1/0"}"#,
        "--tools",
        "fixtures/tools/local-tools.json",
    ]);
    assert_eq!(output.status.code(), Some(1), "a tool failure exits 1");
    let outcome: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(outcome["error"], "division by zero at position 1");

    let (output, stdout) = run(&[
        "call",
        "math_eval",
        "--args",
        "{oops",
        "--tools",
        "fixtures/tools/local-tools.json",
    ]);
    assert_eq!(output.status.code(), Some(2), "a usage error exits 2");
    assert!(stdout.is_empty());
    assert!(
        String::from_utf8_lossy(&output.stderr).starts_with(
            "mcp-client: --args is not JSON (key must be a string at line 1 column 2)"
        )
    );
}

#[test]
fn call_normalizes_mcp_arguments_before_validating_them() {
    let (output, stdout) = run(&[
        "call",
        "greet",
        "--args",
        r#"{"user_name": "Ann"}"#,
        "--config",
        "fixtures/mcp-servers/fakes.json",
    ]);
    assert_eq!(output.status.code(), Some(0), "{stdout}");
    let outcome: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(outcome["result"]["content"][0]["text"], "Hello, Ann");
}

/// Starts `mcp-client call hang` against a fake server in `mode` and returns the host, once
/// the call is in flight, with the server's pid and its grandchild's (0 if none).
fn host_in_a_hanging_call(mode: &str) -> (std::process::Child, u32, u32) {
    let pidfile = scratch_file("pids");
    let record = scratch_file("record");
    let config = scratch_file("config.json");
    let script = fixture_path("fake-servers/fake_mcp_server.py");
    let servers = serde_json::json!({"mcpServers": {"fake": {
        "command": "python3",
        "args": [script, mode],
        "env": {"FAKE_PIDFILE": pidfile, "FAKE_RECORD": record},
    }}});
    std::fs::write(&config, servers.to_string()).unwrap();
    let host = Command::new(BIN)
        .args(["call", "hang", "--config"])
        .arg(&config)
        .env("MCP_CLIENT_LOG", "off")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let in_flight =
        wait_until(|| std::fs::read_to_string(&record).is_ok_and(|r| r.contains("\"tools/call\"")));
    assert!(in_flight, "the call never reached the server");
    let pids = std::fs::read_to_string(&pidfile).unwrap();
    let (server, grandchild) = pids.split_once(' ').unwrap();
    (host, server.parse().unwrap(), grandchild.parse().unwrap())
}

/// Polls `condition` for up to 20 s.
fn wait_until(condition: impl Fn() -> bool) -> bool {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while std::time::Instant::now() < deadline {
        if condition() {
            return true;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    condition()
}

fn signal(child: &std::process::Child, signal: rustix::process::Signal) {
    let pid = rustix::process::Pid::from_raw(child.id() as i32).unwrap();
    rustix::process::kill_process(pid, signal).unwrap();
}

#[test]
fn a_host_stopped_with_sigterm_stops_its_servers_first_even_stubborn_ones() {
    // `stubborn` ignores SIGTERM and stdin EOF, and has a child of its own.
    let (mut host, server, grandchild) = host_in_a_hanging_call("stubborn");
    assert!(is_running(server) && is_running(grandchild));
    signal(&host, rustix::process::Signal::TERM);
    let status = host.wait().unwrap();
    assert_eq!(status.code(), Some(143), "128 + SIGTERM");
    // The host exited only after its server was gone (SIGKILL to the whole group after the
    // grace periods, the leader reaped). The rest of the group got the same SIGKILL, but on a
    // busy machine it may still be on its way out when the host's exit is seen: it must be
    // gone shortly after, never left running.
    assert!(!is_running(server), "the server survived");
    assert!(
        wait_until(|| !is_running(grandchild)),
        "the server's child survived"
    );
}

#[test]
fn ctrl_c_while_chat_starts_its_servers_stops_them_and_their_children() {
    // A server that never answers (so `chat` is still starting it), ignores SIGTERM and stdin
    // EOF, and has a child of its own: before `chat` listens for Ctrl-C itself, Ctrl-C stops
    // the CLI like any command, its servers' process groups first.
    let pidfile = scratch_file("pids");
    let record = scratch_file("record");
    let config = scratch_file("config.json");
    let script = fixture_path("fake-servers/fake_mcp_server.py");
    let servers = serde_json::json!({"mcpServers": {"mute": {
        "command": "python3",
        "args": [script, "stubborn"],
        "env": {"FAKE_PIDFILE": pidfile, "FAKE_RECORD": record, "FAKE_MUTE": "1"},
    }}});
    std::fs::write(&config, servers.to_string()).unwrap();
    let mut host = Command::new(BIN)
        .args(["chat", "--no-history", "--once", "hello", "--config"])
        .arg(&config)
        .args(["--provider", "openai", "--model", "m"])
        .args(["--base-url", "http://127.0.0.1:9/v1"])
        .env("OPENAI_API_KEY", "sk-test")
        .env("MCP_CLIENT_LOG", "off")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let starting = wait_until(|| std::fs::read_to_string(&record).is_ok_and(|r| !r.is_empty()));
    assert!(starting, "the server never got the client's first message");
    let pids = std::fs::read_to_string(&pidfile).unwrap();
    let (server, grandchild) = pids.split_once(' ').unwrap();
    let (server, grandchild): (u32, u32) = (server.parse().unwrap(), grandchild.parse().unwrap());
    signal(&host, rustix::process::Signal::INT);
    let status = host.wait().unwrap();
    assert_eq!(status.code(), Some(130), "128 + SIGINT, not killed by it");
    assert!(!is_running(server), "the server survived");
    assert!(
        wait_until(|| !is_running(grandchild)),
        "the server's child survived"
    );
}

#[test]
fn a_host_killed_with_sigkill_takes_its_server_with_it() {
    // `clean` exits on stdin EOF too; `stubborn` would not: it is the case that needs the
    // parent-death signal.
    let (mut host, server, _) = host_in_a_hanging_call("stubborn");
    signal(&host, rustix::process::Signal::KILL);
    host.wait().unwrap();
    assert!(
        wait_until(|| !is_running(server)),
        "the server outlived its host"
    );
}

/// `mcp-client ARGS` with `env` added and logs at their default level; (output, stdout, stderr).
fn run_with(
    args: &[&str],
    env: &[(&str, &std::ffi::OsStr)],
    dir: &std::path::Path,
) -> (Output, String, String) {
    let output = test_support::child::output(
        Command::new(BIN)
            .args(args)
            .current_dir(dir)
            .env("MCP_CLIENT_LOG", "warn")
            .envs(env.iter().copied()),
        Duration::from_secs(60),
    );
    let stdout = String::from_utf8(output.stdout.clone()).unwrap();
    let stderr = String::from_utf8(output.stderr.clone()).unwrap();
    (output, stdout, stderr)
}

// Issue 31 item 9: a configuration file is read no further than 1 MiB.
#[test]
fn a_config_file_over_1_mib_is_refused_with_its_size_and_the_cap() {
    let big = scratch_file("big.json");
    // Sparse: 8 MiB that take no room, and that the host must not read.
    std::fs::File::create(&big)
        .unwrap()
        .set_len(8 * 1024 * 1024)
        .unwrap();
    let (output, _) = run(&["servers", "--config", big.to_str().unwrap()]);
    assert_eq!(output.status.code(), Some(2));
    assert_eq!(
        String::from_utf8_lossy(&output.stderr),
        format!(
            "mcp-client: {big:?} is 8388608 bytes (8.0 MiB), more than the 1048576 bytes (1.0 MiB) a configuration file may be: is it the right file?\n"
        )
    );
    // A pipe has no size to look at: it is read up to one byte past the cap, not to its end.
    let output = test_support::child::run(
        Command::new(BIN)
            .args(["servers", "--config", "/dev/stdin"])
            .env("MCP_CLIENT_LOG", "off"),
        &vec![b' '; 3 * 1024 * 1024],
        Duration::from_secs(60),
    );
    assert_eq!(output.status.code(), Some(2));
    assert_eq!(
        String::from_utf8_lossy(&output.stderr),
        "mcp-client: \"/dev/stdin\" is more than the 1048576 bytes (1.0 MiB) a configuration file may be: is it the right file?\n"
    );
}

// Issue 31 item 10: `${…}` in `command` and `args` is expanded as in `env`, with `:-` and `:?`.
#[test]
fn variables_are_expanded_in_command_and_args() {
    let fakes = fixture_path("fake-servers");
    let config = scratch_file("expand.json");
    std::fs::write(
        &config,
        r#"{"mcpServers": {"fake": {"command": "${MCP31_PYTHON:-python3}",
            "args": ["${MCP31_FAKES}/fake_mcp_server.py", "clean"], "retry": {"attempts": 1}}}}"#,
    )
    .unwrap();
    let root = test_support::workspace_root();
    let (output, stdout, stderr) = run_with(
        &["servers", "--config", config.to_str().unwrap()],
        &[("MCP31_FAKES", fakes.as_os_str())],
        &root,
    );
    assert_eq!(output.status.code(), Some(0), "{stdout}{stderr}");
    assert!(
        stdout.starts_with("fake: connected — fake 1.0 (protocol 2025-11-25)"),
        "{stdout}"
    );
    std::fs::write(
        &config,
        r#"{"mcpServers": {"fake": {"command": "python3",
            "args": ["${MCP31_NOPE:?set MCP31_NOPE to the fake servers' folder}/fake_mcp_server.py"]}}}"#,
    )
    .unwrap();
    let (output, _, stderr) = run_with(
        &["servers", "--config", config.to_str().unwrap()],
        &[],
        &root,
    );
    assert_eq!(output.status.code(), Some(2));
    assert_eq!(
        stderr,
        format!(
            "mcp-client: {config:?}: server `fake`: `args.0` refers to ${{MCP31_NOPE}}, which is not set: set MCP31_NOPE to the fake servers' folder\n"
        )
    );
}

// Issue 31 item 12: a program that is not there is one attempt and one message.
#[test]
fn a_missing_program_is_reported_once_without_retries() {
    let config = scratch_file("missing-program.json");
    std::fs::write(
        &config,
        r#"{"mcpServers": {"gone": {"command": "no-such-mcp-server-31"}}}"#,
    )
    .unwrap();
    let started = std::time::Instant::now();
    let (output, stdout, stderr) = run_with(
        &["servers", "--config", config.to_str().unwrap()],
        &[],
        &test_support::workspace_root(),
    );
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "no retries: {:?}",
        started.elapsed()
    );
    assert_eq!(output.status.code(), Some(1), "{stdout}{stderr}");
    assert!(
        stdout.starts_with("gone: down — MCP connection failed after 1 attempt: server `gone`: command `no-such-mcp-server-31` not found (searched PATH="),
        "{stdout}"
    );
    let all = format!("{stdout}{stderr}");
    assert_eq!(
        all.matches("`no-such-mcp-server-31` not found").count(),
        1,
        "said once:\n{all}"
    );
}

// Issue 31 item 13: `bin/server` in a configuration file is the file's, whatever the current
// directory.
#[test]
fn a_relative_command_starts_from_the_config_files_folder() {
    use std::os::unix::fs::PermissionsExt as _;
    let folder = scratch_file("relative");
    std::fs::create_dir_all(folder.join("bin")).unwrap();
    let server = folder.join("bin/fake-server");
    std::fs::write(
        &server,
        format!(
            "#!/bin/sh\nexec python3 '{}' clean\n",
            fixture_path("fake-servers/fake_mcp_server.py").display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&server, std::fs::Permissions::from_mode(0o755)).unwrap();
    let config = folder.join("servers.json");
    std::fs::write(
        &config,
        r#"{"mcpServers": {"rel": {"command": "bin/fake-server", "retry": {"attempts": 1}}}}"#,
    )
    .unwrap();
    let (output, stdout, stderr) = run_with(
        &["servers", "--config", config.to_str().unwrap()],
        &[],
        std::path::Path::new("/"),
    );
    assert_eq!(output.status.code(), Some(0), "{stdout}{stderr}");
    assert!(stdout.starts_with("rel: connected — fake 1.0"), "{stdout}");
}

/// `path` with `.` and `..` folded away, without asking the file system.
fn lexical(path: &std::path::Path) -> std::path::PathBuf {
    use std::path::Component;
    let mut out = std::path::PathBuf::new();
    for part in path.components() {
        match part {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            other => out.push(other),
        }
    }
    out
}

#[test]
fn the_readme_fixture_names_the_servers_binary_from_its_own_folder() {
    let servers =
        mcp_client::connection::config::load(&fixture_path("mcp-servers/zwave-demo.json")).unwrap();
    let command = std::path::Path::new(&servers[0].command().unwrap().command);
    assert!(command.is_absolute(), "{command:?}");
    assert_eq!(
        lexical(command),
        lexical(&test_support::workspace_root().join("target/debug/zwave-mcp-server"))
    );
}

/// Found by the third hostile review: `tools` exited 0 when every server failed, as if they
/// offered nothing.
#[test]
fn tools_fails_when_every_server_failed() {
    let folder = test_support::mosquitto::ScratchDir::new();
    let config = folder.path().join("broken.json");
    std::fs::write(
        &config,
        serde_json::json!({"mcpServers": {"broken": {"command": "python3",
            "args": ["fixtures/fake-servers/fake_mcp_server.py", "exit"], "retry": {"attempts": 1}}}})
        .to_string(),
    )
    .unwrap();
    let (output, stdout) = run(&["tools", "--config", config.to_str().unwrap()]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stdout}{stderr}");
    assert!(
        stderr.contains("mcp-client: no configured server could be reached (1 failed): the tools listed are the local ones only"),
        "{stderr}"
    );
}

/// Found by the third hostile review: one tool whose schema nests past serde_json's limit made
/// the whole `tools/list` unreadable, and every tool of that server was lost.
#[test]
fn a_tool_nested_too_deep_is_left_out_saying_why_and_the_others_are_kept() {
    let config = scratch_file("deep-tools.json");
    std::fs::write(
        &config,
        r#"{"mcpServers": {"deep": {"command": "python3", "args": ["fixtures/fake-servers/fake_mcp_server.py", "deeptools"]}}}"#,
    )
    .unwrap();
    let output = test_support::child::output(
        Command::new(BIN)
            .args(["tools", "--config", config.to_str().unwrap()])
            .current_dir(test_support::workspace_root())
            .env_remove("MCP_CLIENT_LOG"),
        Duration::from_secs(60),
    );
    let stdout = String::from_utf8(output.stdout).unwrap();
    let stderr = String::from_utf8(output.stderr).unwrap();
    assert_eq!(output.status.code(), Some(0), "{stdout}{stderr}");
    assert!(
        stdout.starts_with("echo  [mcp:deep]  Echoes the message\n"),
        "{stdout}"
    );
    assert_eq!(stdout.lines().count(), 8, "{stdout}");
    assert!(!stdout.contains("Nests too deep"), "{stdout}");
    assert!(
        stderr.contains(
            "left out tool `deep`: its definition nests deeper than 127 levels (at `inputSchema.properties.a.properties.a"
        ) && stderr.contains("more than mcp-client reads server=deep"),
        "{stderr}"
    );
}

#[test]
fn doctor_names_a_message_nested_too_deep() {
    let (output, stdout) = run(&[
        "doctor",
        "--",
        "python3",
        "fixtures/fake-servers/fake_mcp_server.py",
        "deeptools",
    ]);
    assert_eq!(output.status.code(), Some(1), "{stdout}");
    assert!(
        stdout.contains("stdout: JSON nested deeper than mcp-client reads (127 levels): \"{\\\"jsonrpc\\\": \\\"2.0\\\", \\\"method\\\": \\\"notifications/message\\\""),
        "{stdout}"
    );
    // The tool left out is a problem of the server's tools, not a healthy list.
    assert!(
        stdout.contains("\nFAIL tools: left out tool `deep`: its definition nests deeper than 127 levels (at `inputSchema.properties.a"),
        "{stdout}"
    );
    assert!(stdout.ends_with("2 problems, 0 warnings\n"), "{stdout}");
}
