//! Each misbehaviour of a server, with the exact outcome and log or error text.

use std::time::{Duration, Instant};

use mcp_client::{ClientError, ServerConnection};
use serde_json::json;

use crate::harness::{args, capture_logs, fake, is_running, logs_of, scratch_file};

/// Calls the fake's `echo` tool and returns its text.
async fn echo(server: &ServerConnection, message: &str) -> String {
    let result = server
        .call_tool("echo", args(json!({"message": message})))
        .await
        .unwrap();
    text(&result)
}

fn text(result: &rmcp::model::CallToolResult) -> String {
    result
        .content
        .iter()
        .filter_map(|c| c.as_text().map(|t| t.text.clone()))
        .collect::<Vec<_>>()
        .join("\n")
}

#[tokio::test]
async fn garbage_lines_between_responses_are_dropped_and_reported() {
    capture_logs();
    let server = ServerConnection::new(fake("garbage-srv", &["garbage"]));
    server.connect().await.unwrap();
    assert_eq!(echo(&server, "hi").await, "Echo: hi");
    let counts = server.process().await.unwrap().counts();
    // The answers to server/discover (refused: the fake speaks 2025-11-25), initialize,
    // tools/list and tools/call each came after two garbage lines.
    assert_eq!(counts.not_json, 8);
    assert_eq!(counts.dropped(), 8);
    let logs = logs_of("garbage-srv");
    let dropped: Vec<&String> = logs
        .iter()
        .filter(|l| l.contains("dropped a stdout line"))
        .collect();
    assert_eq!(dropped.len(), 8, "{logs:#?}");
    assert!(
        dropped[0].contains(r#"kind="not JSON""#)
            && dropped[0].contains(
                r#"line="hello from a print() that should have gone to stderr" (52 bytes)"#
            ),
        "{}",
        dropped[0]
    );
    server.shutdown().await;
}

#[tokio::test]
async fn json_that_is_not_json_rpc_is_dropped_and_never_answered() {
    capture_logs();
    let record = scratch_file("stdin.jsonl");
    let mut config = fake("notrpc-srv", &["notjsonrpc"]);
    config
        .command_mut()
        .unwrap()
        .env
        .insert("FAKE_RECORD".into(), record.to_string_lossy().into_owned());
    let server = ServerConnection::new(config);
    server.connect().await.unwrap();
    assert_eq!(echo(&server, "x").await, "Echo: x");
    // One before each answer: server/discover's, initialize's, tools/list's, tools/call's.
    assert_eq!(server.process().await.unwrap().counts().not_jsonrpc, 4);
    server.shutdown().await;
    let sent = std::fs::read_to_string(&record).unwrap();
    let methods: Vec<String> = sent
        .lines()
        .map(|line| {
            serde_json::from_str::<serde_json::Value>(line).unwrap()["method"]
                .as_str()
                .unwrap_or("<response>")
                .to_owned()
        })
        .collect();
    assert_eq!(
        methods,
        [
            "server/discover",
            "initialize",
            "notifications/initialized",
            "tools/list",
            "tools/call"
        ],
        "nothing written back about the garbage"
    );
    assert!(
        logs_of("notrpc-srv")
            .iter()
            .any(|l| l.contains(r#"kind="JSON but not JSON-RPC 2.0""#))
    );
    let _ = std::fs::remove_file(record);
}

#[tokio::test]
async fn a_17_mib_line_is_skipped_and_the_session_continues() {
    capture_logs();
    let server = ServerConnection::new(fake("huge-srv", &["huge"]));
    server.connect().await.unwrap();
    assert_eq!(echo(&server, "after").await, "Echo: after");
    assert_eq!(
        server.tools().await.unwrap().len(),
        8,
        "tools/list answered after the huge line"
    );
    assert_eq!(server.process().await.unwrap().counts().oversized, 1);
    let logs = logs_of("huge-srv");
    let line = logs
        .iter()
        .find(|l| l.contains("longer than the limit"))
        .unwrap();
    assert!(line.contains("len=17825792"), "{line}");
    server.shutdown().await;
}

#[tokio::test]
async fn invalid_utf8_inside_a_response_is_decoded_lossily_not_lost() {
    capture_logs();
    let server = ServerConnection::new(fake("utf8-srv", &["clean"]));
    server.connect().await.unwrap();
    let result = server.call_tool("badutf8", args(json!({}))).await.unwrap();
    assert_eq!(text(&result), "café \u{FFFD}");
    assert_eq!(server.process().await.unwrap().counts().invalid_utf8, 1);
    assert!(
        logs_of("utf8-srv")
            .iter()
            .any(|l| l.contains("invalid UTF-8; decoding it lossily"))
    );
    server.shutdown().await;
}

#[tokio::test]
async fn a_slow_start_beyond_the_init_timeout_fails_with_a_hint_and_within_it_succeeds() {
    capture_logs();
    let mut config = fake("slow-srv", &["slowstart", "2"]);
    config.init_timeout = Duration::from_millis(500);
    let err = ServerConnection::new(config.clone())
        .connect()
        .await
        .unwrap_err();
    let text = err.to_string();
    assert!(text.starts_with("MCP connection failed after 1 attempt: server `slow-srv`: no answer to initialize within 500ms"), "{text}");
    assert!(text.ends_with("check: the server may just be slow to start (first npx/uvx runs download packages): raise timeouts.initialize"), "{text}");
    config.init_timeout = Duration::from_secs(10);
    let server = ServerConnection::new(config);
    let info = server.connect().await.unwrap();
    assert!(info.init_time >= Duration::from_secs(2));
    server.shutdown().await;
}

#[tokio::test]
async fn a_server_that_exits_at_once_is_reported_with_status_and_stderr() {
    capture_logs();
    let err = ServerConnection::new(fake("exit-srv", &["exit"]))
        .connect()
        .await
        .unwrap_err();
    let ClientError::ConnectFailed { attempts, failure } = &err else {
        panic!("{err:?}")
    };
    assert_eq!(*attempts, 1);
    assert_eq!(failure.exit.as_ref().unwrap().to_string(), "exit status: 2");
    assert_eq!(failure.stderr, ["config error: missing TOKEN"]);
    let text = err.to_string();
    assert!(
        text.starts_with(
            "MCP connection failed after 1 attempt: server `exit-srv`: initialize failed: "
        ),
        "{text}"
    );
    assert!(
        text.ends_with(
            "\n  process: exit status: 2\n  stderr (last 1 lines):\n    config error: missing TOKEN\n  check: the server exited right after starting: its stderr above says why"
        ),
        "{text}"
    );
}

#[tokio::test]
async fn a_missing_command_names_the_path_searched() {
    let mut config = fake("nocmd-srv", &[]);
    config.command_mut().unwrap().command = "no-such-mcp-server-xyz".into();
    config
        .command_mut()
        .unwrap()
        .env
        .insert("PATH".into(), "/nowhere:/also/nowhere".into());
    let err = ServerConnection::new(config).connect().await.unwrap_err();
    assert_eq!(
        err.to_string(),
        "MCP connection failed after 1 attempt: server `nocmd-srv`: command `no-such-mcp-server-xyz` not found (searched PATH=/nowhere:/also/nowhere)\n  check: is `no-such-mcp-server-xyz` installed and on PATH? (or give its full path in `command`)"
    );
}

#[tokio::test]
async fn a_crash_mid_call_fails_at_once_with_exit_status_and_the_next_call_restarts() {
    capture_logs();
    let server = ServerConnection::new(fake("crash-srv", &["clean"]));
    let first = server.connect().await.unwrap();
    let started = Instant::now();
    let err = server
        .call_tool("crash", args(json!({})))
        .await
        .unwrap_err();
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "failed at once, not after a timeout"
    );
    let ClientError::ServerDied { method, failure } = &err else {
        panic!("{err:?}")
    };
    assert_eq!(method, "tools/call crash");
    assert_eq!(failure.exit.as_ref().unwrap().to_string(), "exit status: 3");
    assert_eq!(
        failure.stderr,
        ["fatal: simulated crash in the middle of a call"]
    );
    assert!(err.is_retryable());
    assert_eq!(
        err.to_string(),
        "MCP server died during `tools/call crash`: server `crash-srv`: the server exited before answering\n  process: exit status: 3\n  stderr (last 1 lines):\n    fatal: simulated crash in the middle of a call"
    );
    assert!(!is_running(first.pid.unwrap()));

    assert_eq!(echo(&server, "back").await, "Echo: back");
    let second = server.session().await.unwrap();
    assert_ne!(first.pid, second.pid, "a new process");
    server.shutdown().await;
    assert!(!is_running(second.pid.unwrap()));
}

#[tokio::test]
async fn a_call_that_never_answers_times_out_and_is_cancelled() {
    capture_logs();
    let record = scratch_file("hang.jsonl");
    let mut config = fake("hang-srv", &["clean"]);
    config.call_timeout = Duration::from_millis(400);
    config
        .command_mut()
        .unwrap()
        .env
        .insert("FAKE_RECORD".into(), record.to_string_lossy().into_owned());
    let server = ServerConnection::new(config);
    server.connect().await.unwrap();
    let err = server.call_tool("hang", args(json!({}))).await.unwrap_err();
    assert_eq!(
        err.to_string(),
        "MCP server `hang-srv` did not answer `tools/call hang` within 400ms; the request was cancelled (see timeouts.call)"
    );
    // The session goes on.
    assert_eq!(echo(&server, "still here").await, "Echo: still here");
    server.shutdown().await;
    let sent = std::fs::read_to_string(&record).unwrap();
    assert!(sent.contains("\"notifications/cancelled\""), "{sent}");
    let _ = std::fs::remove_file(record);
}

#[tokio::test]
async fn a_stderr_flood_larger_than_the_pipe_does_not_block_the_server() {
    capture_logs();
    let server = ServerConnection::new(fake("flood-srv", &["stderrflood"]));
    server.connect().await.unwrap();
    assert_eq!(echo(&server, "ok").await, "Echo: ok");
    let process = server.process().await.unwrap();
    assert_eq!(process.stderr().total(), 4096);
    let tail = process.stderr().lines();
    assert_eq!(tail.len(), 40);
    assert!(tail[39].starts_with("flood line 4095 "), "{}", tail[39]);
    server.shutdown().await;
}

#[tokio::test]
async fn tools_list_changed_triggers_rediscovery() {
    let server = ServerConnection::new(fake("notify-srv", &["clean"]));
    server.connect().await.unwrap();
    assert_eq!(server.tools().await.unwrap().len(), 8);
    server.call_tool("notify", args(json!({}))).await.unwrap();
    let names: Vec<String> = server
        .tools()
        .await
        .unwrap()
        .iter()
        .map(|t| t.name.to_string())
        .collect();
    assert!(names.contains(&"added".to_owned()), "{names:?}");
    server.shutdown().await;
}

#[tokio::test]
async fn shutdown_and_drop_leave_no_process_behind() {
    let server = ServerConnection::new(fake("reap-srv", &["clean"]));
    let pid = server.connect().await.unwrap().pid.unwrap();
    assert!(is_running(pid));
    server.shutdown().await;
    assert!(!is_running(pid));

    let server = ServerConnection::new(fake("drop-srv", &["clean"]));
    let pid = server.connect().await.unwrap().pid.unwrap();
    drop(server);
    let deadline = Instant::now() + Duration::from_secs(3);
    while is_running(pid) && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(!is_running(pid), "dropping the connection kills the server");
}

/// The pid of the child a `stubborn` fake started, as its stderr says.
fn grandchild_of(process: &mcp_client::transport::ServerProcess) -> u32 {
    process
        .stderr()
        .lines()
        .iter()
        .find_map(|l| {
            l.strip_prefix("grandchild pid ")
                .map(|p| p.parse().unwrap())
        })
        .expect("a stubborn fake names its child on stderr")
}

#[tokio::test]
async fn shutdown_escalates_to_sigkill_for_the_whole_process_group() {
    capture_logs();
    let server = ServerConnection::new(fake("stubborn-srv", &["stubborn"]));
    let pid = server.connect().await.unwrap().pid.unwrap();
    let process = server.process().await.unwrap();
    let grandchild = grandchild_of(&process);
    assert!(is_running(grandchild));
    let started = Instant::now();
    let exit = process.shutdown().await.unwrap();
    assert_eq!(exit.to_string(), "signal: 9 (SIGKILL)");
    assert!(exit.killed() && !exit.success());
    assert!(
        started.elapsed() >= Duration::from_secs(4),
        "waited after closing stdin and after SIGTERM"
    );
    assert!(!is_running(pid));
    let deadline = Instant::now() + Duration::from_secs(2);
    while is_running(grandchild) && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(
        !is_running(grandchild),
        "the grandchild went with its group"
    );
    server.shutdown().await;
}

#[tokio::test]
async fn a_server_that_keeps_failing_is_not_restarted_in_a_tight_loop() {
    capture_logs();
    let server = ServerConnection::new(fake("flaky-srv", &["exit"]));
    assert!(matches!(
        server.connect().await,
        Err(ClientError::ConnectFailed { .. })
    ));
    let err = server
        .call_tool("echo", args(json!({"message": "x"})))
        .await
        .unwrap_err();
    let ClientError::BackingOff { retry_in, last, .. } = &err else {
        panic!("{err:?}")
    };
    assert!(*retry_in <= Duration::from_secs(1));
    assert!(last.starts_with("initialize failed"), "{last}");
    assert!(
        err.to_string()
            .starts_with("MCP server `flaky-srv` is down (initialize failed"),
        "{err}"
    );
    tokio::time::sleep(*retry_in).await;
    let err = server
        .call_tool("echo", args(json!({"message": "x"})))
        .await
        .unwrap_err();
    assert!(
        matches!(err, ClientError::ConnectFailed { attempts: 1, .. }),
        "{err:?}"
    );
    let err = server
        .call_tool("echo", args(json!({"message": "x"})))
        .await
        .unwrap_err();
    let ClientError::BackingOff { retry_in, .. } = &err else {
        panic!("{err:?}")
    };
    assert!(
        *retry_in > Duration::from_secs(1),
        "the wait doubled: {retry_in:?}"
    );
}

#[tokio::test]
async fn servers_that_only_speak_an_older_protocol_work() {
    let server = ServerConnection::new(fake("old-srv", &["oldversion"]));
    let info = server.connect().await.unwrap();
    assert_eq!(info.protocol_version, "2024-11-05");
    assert_eq!(echo(&server, "old").await, "Echo: old");
    server.shutdown().await;
}

#[tokio::test]
async fn progress_notifications_reach_the_callers_callback() {
    let server = ServerConnection::new(fake("progress-srv", &["clean"]));
    server.connect().await.unwrap();
    let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let sink = std::sync::Arc::clone(&seen);
    let callback: mcp_client::connection::ProgressFn =
        std::sync::Arc::new(move |p| sink.lock().unwrap().push(p));
    let result = server
        .call_tool_with_progress("progress", args(json!({})), Some(callback))
        .await
        .unwrap();
    assert_eq!(text(&result), "progressed");
    let seen = seen.lock().unwrap().clone();
    let steps: Vec<(f64, Option<f64>, Option<String>)> = seen
        .iter()
        .map(|p| (p.progress, p.total, p.message.clone()))
        .collect();
    assert_eq!(
        steps,
        [
            (1.0, Some(3.0), Some("step 1".into())),
            (2.0, Some(3.0), Some("step 2".into())),
            (3.0, Some(3.0), Some("step 3".into()))
        ]
    );
    server.shutdown().await;
}

// Connection fails after all retries / Exponential backoff delays
#[tokio::test]
async fn the_default_policy_tries_three_times_over_six_seconds_and_says_so() {
    capture_logs();
    // A server that exits at start may start next time; a missing program would not, and is
    // not retried (a_missing_program_is_tried_once_and_reported_once).
    let mut config = fake("retry-srv", &["exit"]);
    config.retry = mcp_client::connection::RetryPolicy::default();
    let started = Instant::now();
    let err = ServerConnection::new(config).connect().await.unwrap_err();
    let took = started.elapsed();
    assert!(
        took >= Duration::from_secs(6) && took < Duration::from_secs(20),
        "0 s + 2 s + 4 s, and three starts: {took:?}"
    );
    let text = err.to_string();
    assert!(
        text.starts_with(
            "MCP connection failed after 3 attempts: server `retry-srv`: initialize failed: "
        ),
        "{text}"
    );
    assert!(text.contains("config error: missing TOKEN"), "{text}");
    let attempts: Vec<String> = logs_of("retry-srv")
        .into_iter()
        .filter(|l| l.contains("connecting to MCP server"))
        .collect();
    assert_eq!(attempts.len(), 3, "{attempts:#?}");
    assert!(
        attempts[1].contains("attempt=2") && attempts[1].contains("delay=2s"),
        "{}",
        attempts[1]
    );
    assert!(
        attempts[2].contains("attempt=3") && attempts[2].contains("delay=4s"),
        "{}",
        attempts[2]
    );
}

// Successful connection on first attempt
#[tokio::test]
async fn success_is_logged_with_the_attempt_number() {
    capture_logs();
    let server = ServerConnection::new(fake("first-srv", &["clean"]));
    server.connect().await.unwrap();
    assert!(
        logs_of("first-srv")
            .iter()
            .any(|l| l.contains("MCP connection succeeded on attempt 1"))
    );
    server.shutdown().await;
}

#[tokio::test]
async fn an_answer_to_a_request_never_sent_before_initialize_is_dropped_not_fatal() {
    capture_logs();
    let server = ServerConnection::new(fake("unsolicited-srv", &["unsolicited"]));
    server.connect().await.unwrap();
    assert_eq!(echo(&server, "hi").await, "Echo: hi");
    let process = server.process().await.unwrap();
    assert_eq!(process.counts().dropped(), 1);
    let dropped = process.dropped_lines();
    assert_eq!(dropped.len(), 1, "{dropped:?}");
    assert_eq!(
        dropped[0],
        r#"an answer to a request never sent: "{\"jsonrpc\":\"2.0\",\"id\":9999,\"result\":{\"surprise\":true}}" (54 bytes)"#
    );
    let logs = logs_of("unsolicited-srv");
    assert!(
        logs.iter().any(|l| l.contains("dropped a stdout line")
            && l.contains("reason=\"it arrived before `initialize` was answered\"")),
        "{logs:#?}"
    );
    server.shutdown().await;
}

#[tokio::test]
async fn shutdown_finishes_when_the_server_stops_reading_stdin() {
    let mut config = fake("deaf-srv", &["deaf"]);
    config.call_timeout = std::time::Duration::from_secs(1);
    let server = ServerConnection::new(config);
    server.connect().await.unwrap();
    let pid = server.process().await.unwrap().pid().unwrap();
    // A 1 MiB argument cannot fit in the pipe the server no longer reads: the write blocks.
    let big = "x".repeat(1 << 20);
    let call = tokio::time::timeout(
        std::time::Duration::from_secs(10),
        server.call_tool("echo", args(serde_json::json!({"message": big}))),
    )
    .await;
    assert!(
        matches!(call, Ok(Err(_))),
        "the call must fail, not hang: {call:?}"
    );
    tokio::time::timeout(std::time::Duration::from_secs(20), server.shutdown())
        .await
        .expect("shutdown hung on a server that does not read stdin");
    assert!(!is_running(pid), "the deaf server is still running");
}

#[tokio::test]
async fn what_a_crashed_server_left_behind_is_killed_and_its_group_never_signalled_after_reaping() {
    let server = ServerConnection::new(fake("orphans-srv", &["stubborn"]));
    server.connect().await.unwrap();
    let process = server.process().await.unwrap();
    let grandchild = grandchild_of(&process);
    let err = server
        .call_tool("crash", args(json!({})))
        .await
        .unwrap_err();
    assert!(matches!(err, ClientError::ServerDied { .. }), "{err}");
    let exit = process.wait_exit(Duration::from_secs(10)).await.unwrap();
    assert_eq!(exit.to_string(), "exit status: 3");
    assert!(!exit.killed() && !exit.success());
    // The group was killed (SIGKILL takes a moment to land) before the leader was reaped.
    let deadline = Instant::now() + Duration::from_secs(10);
    while is_running(grandchild) && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(
        !is_running(grandchild),
        "the crashed server's child is still running"
    );
    assert!(
        !process.signal_group(rustix::process::Signal::TERM),
        "a reaped server's group id may be someone else's by now"
    );
}

/// Connects a fake in `mode` and checks that its tool list was cut at `kept` tools, ending
/// with `last`, with `warning` in the log.
async fn assert_tools_capped(server: &str, mode: &str, kept: usize, last: &str, warning: &str) {
    capture_logs();
    let connection = ServerConnection::new(fake(server, &[mode]));
    connection.connect().await.unwrap();
    let tools = connection.tools().await.unwrap();
    assert_eq!(tools.len(), kept);
    assert_eq!(tools.last().unwrap().name, last);
    assert!(
        logs_of(server).iter().any(|l| l.contains(warning)),
        "{:#?}",
        logs_of(server)
    );
    connection.shutdown().await;
}

#[tokio::test]
async fn endless_tools_list_pages_stop_at_the_page_cap() {
    assert_tools_capped(
        "pages-srv",
        "endlesspages",
        mcp_client::connection::MAX_TOOL_PAGES,
        "page64",
        "tools/list has more pages than a host reads; the rest are left out",
    )
    .await;
}

#[tokio::test]
async fn a_server_with_more_tools_than_the_cap_keeps_the_first_ones() {
    assert_tools_capped(
        "many-srv",
        "manytools",
        mcp_client::connection::MAX_TOOLS,
        "tool4095",
        "the server offers more tools than a host keeps; the rest are left out",
    )
    .await;
}

// Issue 31 item 12: a program that is not there (or cannot run) fails the same way every time.
#[tokio::test]
async fn a_missing_program_is_tried_once_and_reported_once() {
    capture_logs();
    let missing_path = scratch_file("no-such-dir").join("server");
    let not_executable = scratch_file("not-executable");
    std::fs::write(&not_executable, "#!/bin/sh\n").unwrap();
    for (name, command, expected) in [
        (
            "gone-srv",
            "no-such-mcp-server-31".to_owned(),
            "command `no-such-mcp-server-31` not found (searched PATH=/nowhere)".to_owned(),
        ),
        (
            "gone-path-srv",
            missing_path.to_string_lossy().into_owned(),
            format!("command `{}` does not exist", missing_path.display()),
        ),
        (
            "noexec-srv",
            not_executable.to_string_lossy().into_owned(),
            format!(
                "command `{}` is not executable (no execute permission)",
                not_executable.display()
            ),
        ),
    ] {
        let mut config = fake(name, &[]);
        config.retry = mcp_client::connection::RetryPolicy::default();
        config.command_mut().unwrap().command = command;
        config
            .command_mut()
            .unwrap()
            .env
            .insert("PATH".into(), "/nowhere".into());
        let started = Instant::now();
        let err = ServerConnection::new(config).connect().await.unwrap_err();
        assert!(
            started.elapsed() < Duration::from_secs(2),
            "{name}: no retry delay: {:?}",
            started.elapsed()
        );
        let text = err.to_string();
        assert!(
            text.starts_with(&format!(
                "MCP connection failed after 1 attempt: server `{name}`: {expected}\n  check: "
            )),
            "{text}"
        );
        let logs = logs_of(name);
        assert!(
            !logs
                .iter()
                .any(|l| l.contains("MCP connection attempt failed")),
            "{logs:#?}"
        );
        assert_eq!(
            logs.iter()
                .filter(|l| l.contains("connecting to MCP server"))
                .count(),
            1,
            "{logs:#?}"
        );
    }
}

// Issue 31 item 13: a server that exits at once has its stderr shown when the hint points at it,
// and a server that said nothing is not said to have.
#[tokio::test]
async fn a_server_that_exits_at_start_shows_the_stderr_the_hint_points_to() {
    for round in 0..5 {
        let mut config = fake(&format!("bye-srv-{round}"), &[]);
        config.command_mut().unwrap().command = "sh".into();
        config.command_mut().unwrap().args =
            vec!["-c".into(), "echo 'bye: no token' >&2; exit 3".into()];
        let err = ServerConnection::new(config).connect().await.unwrap_err();
        let text = err.to_string();
        assert!(
            text.ends_with(
                "\n  process: exit status: 3\n  stderr (last 1 lines):\n    bye: no token\n  check: the server exited right after starting: its stderr above says why"
            ),
            "round {round}: {text}"
        );
    }
    let mut config = fake("mute-srv", &[]);
    config.command_mut().unwrap().command = "sh".into();
    config.command_mut().unwrap().args = vec!["-c".into(), "exit 0".into()];
    let text = ServerConnection::new(config)
        .connect()
        .await
        .unwrap_err()
        .to_string();
    assert_eq!(
        text,
        "MCP connection failed after 1 attempt: server `mute-srv`: initialize failed: the server exited before answering it\n  process: exit status: 0\n  check: the server exited right after starting and wrote nothing to stderr: run its command in a terminal to see why"
    );
}

/// Found by the third hostile review: before `server/discover` was answered, a stray answer
/// ended the connection ("conflict initialized response id"), where before `initialize` it
/// was dropped.
#[tokio::test]
async fn an_answer_to_a_request_never_sent_before_discover_is_dropped_not_fatal() {
    capture_logs();
    let server = ServerConnection::new(fake("unsolicited-modern", &["modern-unsolicited"]));
    server.connect().await.unwrap();
    let process = server.process().await.unwrap();
    assert_eq!(process.counts().dropped(), 1);
    let logs = logs_of("unsolicited-modern");
    assert!(
        logs.iter().any(|l| l.contains("dropped a stdout line")
            && l.contains("reason=\"it arrived before `server/discover` was answered\"")),
        "{logs:#?}"
    );
    server.shutdown().await;
}

/// Found by the third hostile review: a `server/discover` answer naming only revisions this
/// client does not know ended the attempt instead of falling back to `initialize`.
#[tokio::test]
async fn a_discover_answer_of_unknown_revisions_falls_back_to_initialize() {
    capture_logs();
    let server = ServerConnection::new(fake("future-srv", &["future"]));
    server.connect().await.unwrap();
    assert_eq!(echo(&server, "hi").await, "Echo: hi");
    let logs = logs_of("future-srv");
    assert!(
        logs.iter()
            .any(|l| l.contains("server/discover named no revision this client speaks")),
        "{logs:#?}"
    );
    server.shutdown().await;
}

/// Found by the hostile review: a server answering `initialize` with a revision from the
/// future was spoken to as if it spoke the one asked for.
#[tokio::test]
async fn a_server_answering_with_a_revision_this_client_does_not_speak_is_left() {
    let server = ServerConnection::new(fake("future-init", &["futureinit"]));
    let err = server.connect().await.unwrap_err().to_string();
    assert!(
        err.contains("server `future-init`: initialize failed: the server answered with protocol revision \"2099-01-01\", which this client does not speak: disconnected"),
        "{err}"
    );
    server.shutdown().await;
}
