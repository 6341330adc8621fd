//! What the binary logs and where: its own lines by default, files private to the owner, the
//! password never, and logging never holding up serving.

use std::{
    io::Write as _,
    process::{Command, Stdio},
    time::Duration,
};

use serde_json::{Value, json};

use crate::harness::{
    BIN, closed_port_url, protocol_messages, run, run_with_env, session_listing_tools,
};

/// The level and message of a log line: without its time, spans and target (every target
/// must be this crate's).
fn log_message(line: &str) -> (&str, &str) {
    let rest = line
        .split_once(' ')
        .map_or("", |(_, rest)| rest.trim_start());
    let (level, rest) = rest.split_once(' ').unwrap_or_default();
    let at = rest
        .find("zwave_mcp_server")
        .unwrap_or_else(|| panic!("a line of another crate: {line}"));
    let message = rest[at..]
        .split_once(": ")
        .map_or("", |(_, message)| message);
    (level, message)
}

#[test]
fn the_default_log_of_a_short_session_is_ours_line_by_line() {
    let output = run(
        &["--demo"],
        &session_listing_tools(&[(
            "control_zwave_device",
            json!({"deviceName": "Switch One", "action": "on"}),
        )]),
    );
    assert!(output.status.success());
    let stderr = String::from_utf8(output.stderr).unwrap();
    let mut messages: Vec<(&str, &str)> = stderr.lines().map(log_message).collect();
    // The simulator's own start and ours run side by side: compare them as a set.
    messages.sort_unstable();
    let mut expected = [
        ("INFO", "starting broker=mqtt://"),
        ("INFO", "simulated gateway connected gateway=zwave-js-ui"),
        ("INFO", "demo home ready"),
        ("INFO", "connected to the mqtt broker filter=zwave/#"),
        ("INFO", "z-wave driver status ready=Some(true)"),
        (
            "INFO",
            "gateway status online=Some(true) gateway=zwave-js-ui",
        ),
        ("INFO", "node list loaded nodes=16 paths=58 tails=150"),
        (
            "INFO",
            "value written device=\"Switch One\" node=2 action=on value=true status=254",
        ),
        ("INFO", "MCP session ended reason=Closed"),
    ];
    expected.sort_unstable();
    assert_eq!(messages.len(), expected.len(), "{stderr}");
    for ((level, message), (want_level, want)) in messages.iter().zip(expected) {
        assert_eq!(*level, want_level, "{stderr}");
        assert!(
            message.starts_with(want),
            "{message:?} is not {want:?}:\n{stderr}"
        );
    }
}

#[test]
fn log_dir_gets_a_daily_file_with_the_same_logs() {
    let dir = test_support::mosquitto::ScratchDir::new();
    let logs = dir.path().join("logs");
    let output = run(
        &["--demo", "--log-dir", logs.to_str().unwrap()],
        &session_listing_tools(&[("list_zwave_devices", json!({}))]),
    );
    assert!(output.status.success());
    assert_eq!(protocol_messages(&output).len(), 3);
    let files: Vec<_> = std::fs::read_dir(&logs)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(files.len(), 1, "{files:?}");
    assert!(
        files[0]
            .file_name()
            .unwrap()
            .to_string_lossy()
            .starts_with("zwave-mcp-server.log.")
    );
    let text = std::fs::read_to_string(&files[0]).unwrap();
    assert!(text.contains("demo home ready"), "{text}");
    // The owner's alone: the logs name devices and what was done to them.
    use std::os::unix::fs::PermissionsExt as _;
    let mode =
        |path: &std::path::Path| std::fs::metadata(path).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(&logs), 0o700, "the log directory");
    assert_eq!(mode(&files[0]), 0o600, "the log file");
}

#[test]
fn a_host_that_never_reads_stderr_still_gets_every_answer() {
    let calls: u64 = 1_500;
    let dir = test_support::mosquitto::ScratchDir::new();
    let logs = dir.path().join("logs");
    let mut child = Command::new(BIN)
        .args([
            "--demo",
            "--log-level",
            "debug",
            "--log-dir",
            logs.to_str().unwrap(),
        ])
        .env_remove("RUST_LOG")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        // Piped and never read: the pipe fills after 64 KiB of logs.
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    // The calls go in waves of at most 32 unanswered (the server takes 64 at once and
    // refuses more): each wave is sent once the one before it is answered.
    let (answers, progress) = std::sync::mpsc::channel::<u64>();
    let writer = std::thread::spawn(move || {
        let mut input = String::new();
        for message in session_listing_tools(&[]) {
            input.push_str(&format!("{message}\n"));
        }
        stdin.write_all(input.as_bytes()).unwrap();
        let mut answered = 0;
        for wave in (1..=calls).collect::<Vec<_>>().chunks(32) {
            while answered + 32 < wave[0] {
                let Ok(count) = progress.recv() else {
                    return stdin;
                };
                answered = count;
            }
            let mut input = String::new();
            for id in wave {
                let action = if id % 2 == 0 { "on" } else { "off" };
                input.push_str(&format!(
                    "{}\n",
                    json!({"jsonrpc":"2.0","id": 10_000 + id,"method":"tools/call","params":{"name":"control_zwave_device","arguments":{"deviceName":"Switch One","action":action}}})
                ));
            }
            stdin.write_all(input.as_bytes()).unwrap();
        }
        stdin
    });
    let stdout = child.stdout.take().unwrap();
    let (sender, receiver) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        use std::io::BufRead as _;
        let mut answered = 0;
        for line in std::io::BufReader::new(stdout).lines() {
            let message: Value = serde_json::from_str(&line.unwrap()).unwrap();
            if message["id"].as_u64().is_some_and(|id| id > 10_000) {
                assert!(message.get("result").is_some(), "{message}");
                answered += 1;
                let _ = answers.send(answered);
                if answered == calls {
                    break;
                }
            }
        }
        let _ = sender.send(answered);
    });
    let answered = receiver.recv_timeout(Duration::from_secs(120));
    if answered != Ok(calls) {
        let _ = child.kill();
    }
    // At stdin's end the server exits, still without anyone reading its stderr.
    drop(writer.join().unwrap());
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    while child.try_wait().unwrap().is_none() {
        assert!(
            std::time::Instant::now() < deadline,
            "no exit after stdin closed"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    assert_eq!(answered, Ok(calls), "answers stopped while stderr was full");
    // What could not go to stderr is counted, and the count reaches the log file.
    let file = std::fs::read_dir(&logs)
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let text = std::fs::read_to_string(file).unwrap();
    assert!(
        text.contains(
            "log lines were dropped: the output could not take them in time (is stderr read?)"
        ) && text.contains("output=\"stderr\""),
        "{}",
        &text[text.len().saturating_sub(2000)..]
    );
}

#[test]
fn the_mqtt_password_is_never_logged_even_at_trace() {
    let url = closed_port_url();
    let output = run_with_env(
        &[
            "--mqtt-url",
            &url,
            "--log-level",
            "trace",
            "--api-timeout",
            "500ms",
        ],
        &[
            ("ZWAVE_MCP_MQTT_USERNAME", "agent"),
            ("ZWAVE_MCP_MQTT_PASSWORD", "hunter2-secret"),
        ],
        &session_listing_tools(&[("list_zwave_devices", json!({}))]),
    );
    assert!(output.status.success());
    let everything = [output.stdout.as_slice(), output.stderr.as_slice()].concat();
    let text = String::from_utf8_lossy(&everything);
    assert!(!text.contains("hunter2-secret"), "the password leaked");
    assert!(
        text.contains("cannot connect to the mqtt broker"),
        "trace logs were produced"
    );
}
