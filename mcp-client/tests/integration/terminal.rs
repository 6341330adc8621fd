//! `chat` on a terminal: run in a pseudo-terminal, what it drew is replayed on a small screen
//! model (carriage returns, line feeds, erase-line and cursor-up: what the spinner uses), and
//! the final screen is asserted — no spinner frame left, the ✓ line with the arguments sent,
//! no log warning beside a failed call.

use std::{
    fs::File,
    io::Read as _,
    process::{Command, Stdio},
    time::Duration,
};

use rustix::pty::{OpenptFlags, grantpt, openpt, ptsname, unlockpt};

use crate::fake_provider::{FakeProvider, Reply};

const BIN: &str = env!("CARGO_BIN_EXE_mcp-client");

/// Runs the CLI with its stdin, stdout and stderr on a new pseudo-terminal; returns the
/// bytes drawn and the exit code.
fn run_on_terminal(args: Vec<String>) -> (Vec<u8>, Option<i32>) {
    answering_on_terminal(args, Vec::new())
}

/// [`run_on_terminal`], typing each `(prompt, line)`'s line once the prompt was drawn, in
/// order, as a person at the terminal would.
fn answering_on_terminal(
    args: Vec<String>,
    answers: Vec<(&'static str, &'static str)>,
) -> (Vec<u8>, Option<i32>) {
    let master = openpt(OpenptFlags::RDWR | OpenptFlags::NOCTTY | OpenptFlags::CLOEXEC).unwrap();
    grantpt(&master).unwrap();
    unlockpt(&master).unwrap();
    let name = ptsname(&master, Vec::new()).unwrap();
    let slave = File::options()
        .read(true)
        .write(true)
        .open(name.to_str().unwrap())
        .unwrap();
    let mut child = Command::new(BIN)
        .args(&args)
        // The default log level, as a person gets it.
        .env_remove("MCP_CLIENT_LOG")
        .env_remove("MCP_CLIENT_PROVIDER")
        .env_remove("MCP_CLIENT_MODEL")
        .env("OPENAI_API_KEY", "sk-test")
        .stdin(Stdio::from(slave.try_clone().unwrap()))
        .stdout(Stdio::from(slave.try_clone().unwrap()))
        .stderr(Stdio::from(slave))
        .spawn()
        .unwrap();
    // Once the child is gone (no one holds the slave), reading the master fails with EIO.
    let reader = std::thread::spawn(move || {
        let mut master = File::from(master);
        let mut typist = master.try_clone().unwrap();
        let mut answers = answers.into_iter().peekable();
        let mut drawn = Vec::new();
        let mut buffer = [0u8; 4096];
        while let Ok(n) = master.read(&mut buffer) {
            if n == 0 {
                break;
            }
            drawn.extend_from_slice(&buffer[..n]);
            if let Some((prompt, line)) = answers.peek()
                && String::from_utf8_lossy(&drawn).contains(prompt)
            {
                std::io::Write::write_all(&mut typist, format!("{line}\r").as_bytes()).unwrap();
                answers.next();
            }
        }
        drawn
    });
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if std::time::Instant::now() > deadline {
            let _ = child.kill();
            panic!("chat did not finish on the terminal within 60 s");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    (reader.join().unwrap(), status.code())
}

/// `chat --once QUESTION` against the fake OpenAI server at `url`, with `extra` options.
fn once_args(url: &str, extra: &[&str], question: &str) -> Vec<String> {
    let mut args: Vec<String> = ["chat"]
        .iter()
        .chain(extra)
        .map(|s| (*s).to_owned())
        .collect();
    args.extend(
        [
            "--provider",
            "openai",
            "--model",
            "test-model",
            "--base-url",
            &format!("{url}/v1"),
            "--no-stream",
            "--yes",
            "--once",
            question,
        ]
        .iter()
        .map(|s| (*s).to_owned()),
    );
    args
}

/// The lines a terminal shows after `drawn`.
fn screen(drawn: &[u8]) -> Vec<String> {
    let text = String::from_utf8_lossy(drawn);
    let mut lines: Vec<Vec<char>> = vec![Vec::new()];
    let (mut row, mut col) = (0usize, 0usize);
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\r' => col = 0,
            '\n' => {
                row += 1;
                if row == lines.len() {
                    lines.push(Vec::new());
                }
            }
            '\u{1b}' if chars.peek() == Some(&'[') => {
                chars.next();
                let mut parameter = String::new();
                let mut command = ' ';
                for next in chars.by_ref() {
                    if next.is_ascii_alphabetic() {
                        command = next;
                        break;
                    }
                    parameter.push(next);
                }
                let n: usize = parameter.trim_start_matches('?').parse().unwrap_or(1);
                match command {
                    // Erase in line: 2 the whole line, else from the cursor on.
                    'K' if parameter == "2" => lines[row].clear(),
                    'K' => lines[row].truncate(col),
                    'A' => row = row.saturating_sub(n),
                    'G' => col = n.saturating_sub(1),
                    'J' => {
                        lines[row].truncate(col);
                        lines.truncate(row + 1);
                    }
                    // Cursor shown or hidden, colours: nothing on the screen changes.
                    _ => {}
                }
            }
            c if c.is_control() => {}
            c => {
                let line = &mut lines[row];
                if col < line.len() {
                    line[col] = c;
                } else {
                    line.resize(col, ' ');
                    line.push(c);
                }
                col += 1;
            }
        }
    }
    lines
        .into_iter()
        .map(|line| line.into_iter().collect::<String>().trim_end().to_owned())
        .filter(|line| !line.is_empty())
        .collect()
}

#[tokio::test]
async fn no_spinner_frame_stays_and_the_tool_line_shows_the_arguments_sent() {
    let fake = FakeProvider::start(vec![
        Reply::fixture("openai/dim-1.json", 50),
        Reply::fixture("openai/dim-2.json", 50),
        // A call of a device that does not exist, and the model's answer to its error.
        Reply::status(
            200,
            r#"{"id":"c3","object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":"","tool_calls":[{"id":"call_x","type":"function","function":{"name":"control_zwave_device","arguments":"{\"device_name\":\"Attic Door\",\"action\":\"on\"}"}}]},"finish_reason":"tool_calls"}],"usage":{"prompt_tokens":5,"completion_tokens":5}}"#,
        ),
        Reply::status(
            200,
            r#"{"id":"c4","object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":"There is no Attic Door."},"finish_reason":"stop"}],"usage":{"prompt_tokens":5,"completion_tokens":5}}"#,
        ),
    ])
    .await;
    let config = test_support::mosquitto::ScratchDir::new();
    let servers = config.path().join("servers.json");
    std::fs::write(
        &servers,
        serde_json::json!({"mcpServers": {"zwave": {"command": test_support::workspace_bin("zwave-mcp-server"), "args": ["--demo"]}}})
            .to_string(),
    )
    .unwrap();
    let args = |question: &str| {
        once_args(
            &fake.url,
            &["--config", servers.to_str().unwrap(), "--no-history"],
            question,
        )
    };

    let dim = args("dim the living room light to 40%");
    let (drawn, code) = tokio::task::spawn_blocking(move || run_on_terminal(dim))
        .await
        .unwrap();
    let shown = screen(&drawn);
    assert_eq!(code, Some(0), "{shown:#?}");
    // The spinner was drawn (this is a terminal)...
    assert!(
        String::from_utf8_lossy(&drawn).contains("running control_zwave_device"),
        "{shown:#?}"
    );
    // ...and nothing of it stayed; the ✓ line has the names the server was sent, not the
    // model's snake_case ones.
    assert_eq!(shown.len(), 2, "{shown:#?}");
    assert!(
        shown[0].starts_with(
            r#"✓ control_zwave_device {"action":"dim","deviceName":"Living Room Light","level":40} ("#
        ),
        "{shown:#?}"
    );
    assert_eq!(shown[1], "The Living Room Light is now dimmed to 40%.");

    let garage = args("turn on the garage door");
    let (drawn, code) = tokio::task::spawn_blocking(move || run_on_terminal(garage))
        .await
        .unwrap();
    let shown = screen(&drawn);
    assert_eq!(code, Some(1), "{shown:#?}");
    // Only the ✗ line and the answer: no log warning beside it at the default level.
    assert_eq!(shown.len(), 2, "{shown:#?}");
    assert!(
        shown[0]
            .starts_with(r#"✗ control_zwave_device {"action":"on","deviceName":"Attic Door"} ("#)
            && shown[0].contains(r#"ms): Error: no Z-Wave device matches "Attic Door""#),
        "{shown:#?}"
    );
    assert_eq!(shown[1], "There is no Attic Door.");
}

#[tokio::test]
async fn escape_sequences_from_the_model_never_reach_the_terminal() {
    // A tool name and an answer carrying OSC 52 (clipboard), OSC 0 (title), SGR 8 (hidden
    // text) and a clear-screen.
    let fake = FakeProvider::start(vec![
        Reply::status(
            200,
            r#"{"id":"c1","object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":"","tool_calls":[{"id":"call_e","type":"function","function":{"name":"list\u001b]0;pwned\u0007","arguments":"{}"}}]},"finish_reason":"tool_calls"}],"usage":{"prompt_tokens":5,"completion_tokens":5}}"#,
        ),
        Reply::status(
            200,
            r#"{"id":"c2","object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":"Done\u001b]52;c;ZXZpbA==\u0007 and \u001b[8msecret\u001b[0m \u001b[2Jok"},"finish_reason":"stop"}],"usage":{"prompt_tokens":5,"completion_tokens":5}}"#,
        ),
    ])
    .await;
    let args = once_args(&fake.url, &["--no-history"], "hi");
    let (drawn, _) = tokio::task::spawn_blocking(move || run_on_terminal(args))
        .await
        .unwrap();
    let raw = String::from_utf8_lossy(&drawn);
    for forbidden in ["\u{1b}]", "\u{7}", "\u{1b}[8m", "\u{1b}[2J", "\u{1b}[0m"] {
        assert!(
            !raw.contains(forbidden),
            "{forbidden:?} reached the terminal: {raw:?}"
        );
    }
    let shown = screen(&drawn);
    assert!(
        shown
            .iter()
            .any(|line| line.starts_with("✗ list ]0;pwned  {} (")),
        "{shown:#?}"
    );
    assert!(
        shown.contains(&"Done]52;c;ZXZpbA== and [8msecret[0m [2Jok".to_owned()),
        "{shown:#?}"
    );
}

/// A model that unlocks the front door, and its answer once the tool answered.
async fn unlocking_model() -> FakeProvider {
    FakeProvider::start(vec![
        Reply::status(
            200,
            r#"{"id":"c1","object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":"","tool_calls":[{"id":"call_u","type":"function","function":{"name":"control_zwave_device","arguments":"{\"device_name\":\"Front Door Lock\",\"action\":\"unlock\"}"}}]},"finish_reason":"tool_calls"}],"usage":{"prompt_tokens":5,"completion_tokens":5}}"#,
        ),
        Reply::status(
            200,
            r#"{"id":"c2","object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":"Done."},"finish_reason":"stop"}],"usage":{"prompt_tokens":5,"completion_tokens":5}}"#,
        ),
    ])
    .await
}

#[tokio::test]
async fn a_servers_question_is_asked_on_the_terminal_even_with_yes() {
    let config = test_support::mosquitto::ScratchDir::new();
    let servers = config.path().join("servers.json");
    std::fs::write(
        &servers,
        serde_json::json!({"mcpServers": {"zwave": {"command": test_support::workspace_bin("zwave-mcp-server"), "args": ["--demo", "--allow-sensitive", "lock"]}}})
            .to_string(),
    )
    .unwrap();
    for (typed, code, result) in [
        ("y", Some(0), "✓ control_zwave_device"),
        ("n", Some(1), "✗ control_zwave_device"),
    ] {
        let fake = unlocking_model().await;
        // --yes approves tool calls; it never answers a server's question.
        let args = once_args(
            &fake.url,
            &["--config", servers.to_str().unwrap(), "--no-history"],
            "unlock the front door",
        );
        let (drawn, exit) = tokio::task::spawn_blocking(move || {
            answering_on_terminal(args, vec![("[y/N] ", typed)])
        })
        .await
        .unwrap();
        let shown = screen(&drawn);
        assert_eq!(exit, code, "{shown:#?}");
        assert_eq!(
            shown[0],
            "zwave asks: Unlock \"Front Door Lock\" (node 8, Entrance)? An AI agent asks for it (it opens the home).",
            "{shown:#?}"
        );
        assert!(
            shown[1].starts_with("  Carry it out now? [y/N] "),
            "{shown:#?}"
        );
        assert!(
            shown.iter().any(|line| line.starts_with(result)),
            "{shown:#?}"
        );
        if typed == "n" {
            assert!(
                shown.iter().any(|line| line
                    .contains("needs a person's yes, and the user answered no: nothing was sent")),
                "{shown:#?}"
            );
        }
        // No spinner frame stayed on the screen, over the question or after it.
        assert!(
            !shown
                .iter()
                .any(|line| line.contains("running control_zwave_device")),
            "{shown:#?}"
        );
    }
}
