//! `chat` on a terminal: run in a pseudo-terminal, what it drew is replayed on a small screen
//! model (carriage returns, line feeds, erase-line and cursor moves: what the spinner and the
//! line editor use), and the final screen is asserted — no spinner frame left, the ✓ line
//! with the arguments sent, no log warning beside a failed call.

use std::{
    fs::File,
    io::Read as _,
    process::{Command, Stdio},
    time::Duration,
};

use rustix::{
    process::{Pid, Signal, kill_process},
    pty::{OpenptFlags, grantpt, openpt, ptsname, unlockpt},
};

use crate::fake_provider::{FakeProvider, Reply};

const BIN: &str = env!("CARGO_BIN_EXE_mcp-client");

/// What the person at the terminal does, in order.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Act {
    /// Types these keys at once, before anything is drawn: typed ahead.
    TypeAhead(&'static str),
    /// Once `prompt` is drawn (after what the act before waited for), types `keys` (nothing
    /// when empty: only waits).
    At(&'static str, &'static str),
    /// [`Act::At`], after thinking this long.
    SlowlyAt(&'static str, &'static str, Duration),
    /// Once `prompt` is drawn, presses Ctrl-C: SIGINT, as a terminal sends it.
    CtrlCAt(&'static str),
    /// Once `prompt` is drawn, writes `text` to the file (a FIFO) at `path`.
    WriteAt(&'static str, &'static str, &'static str),
}

/// Runs the CLI with its stdin, stdout and stderr on a new pseudo-terminal; returns the
/// bytes drawn and the exit code.
fn run_on_terminal(args: Vec<String>) -> (Vec<u8>, Option<i32>) {
    on_terminal(args, Vec::new())
}

/// [`run_on_terminal`], typing each `(prompt, line)`'s line once the prompt was drawn, in
/// order, as a person at the terminal would.
fn answering_on_terminal(
    args: Vec<String>,
    answers: Vec<(&'static str, &'static str)>,
) -> (Vec<u8>, Option<i32>) {
    let acts = answers
        .into_iter()
        .map(|(prompt, line)| Act::At(prompt, String::leak(format!("{line}\r"))))
        .collect();
    on_terminal(args, acts)
}

/// [`run_on_terminal`], with the person doing `acts`.
pub(crate) fn on_terminal(args: Vec<String>, acts: Vec<Act>) -> (Vec<u8>, Option<i32>) {
    let master = openpt(OpenptFlags::RDWR | OpenptFlags::NOCTTY | OpenptFlags::CLOEXEC).unwrap();
    grantpt(&master).unwrap();
    unlockpt(&master).unwrap();
    // A terminal of a size, as a person's is (the client fits its rows to it).
    rustix::termios::tcsetwinsize(
        &master,
        rustix::termios::Winsize {
            ws_row: 45,
            ws_col: 160,
            ws_xpixel: 0,
            ws_ypixel: 0,
        },
    )
    .unwrap();
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
    let pid = Pid::from_child(&child);
    // Once the child is gone (no one holds the slave), reading the master fails with EIO.
    let reader = std::thread::spawn(move || {
        let mut master = File::from(master);
        let mut typist = master.try_clone().unwrap();
        let mut type_keys =
            |keys: &str| std::io::Write::write_all(&mut typist, keys.as_bytes()).unwrap();
        let mut acts = acts.into_iter().peekable();
        while let Some(Act::TypeAhead(keys)) = acts.peek() {
            type_keys(keys);
            acts.next();
        }
        let mut drawn = Vec::new();
        // Where the next act looks for its prompt: after the one the act before waited for.
        let mut from = 0;
        let mut buffer = [0u8; 4096];
        while let Ok(n) = master.read(&mut buffer) {
            if n == 0 {
                break;
            }
            drawn.extend_from_slice(&buffer[..n]);
            while let Some(act) = acts.peek().copied() {
                let prompt = match act {
                    Act::At(prompt, _)
                    | Act::SlowlyAt(prompt, ..)
                    | Act::CtrlCAt(prompt)
                    | Act::WriteAt(prompt, ..) => prompt,
                    Act::TypeAhead(_) => "",
                };
                let Some(at) = drawn[from..]
                    .windows(prompt.len().max(1))
                    .position(|window| prompt.is_empty() || window == prompt.as_bytes())
                else {
                    break;
                };
                from += at + prompt.len();
                match act {
                    Act::At(_, keys) | Act::TypeAhead(keys) => type_keys(keys),
                    Act::SlowlyAt(_, keys, thinking) => {
                        std::thread::sleep(thinking);
                        type_keys(keys);
                    }
                    Act::CtrlCAt(_) => kill_process(pid, Signal::INT).unwrap(),
                    Act::WriteAt(_, path, text) => std::fs::write(path, text).unwrap(),
                }
                acts.next();
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
            let drawn = reader.join().unwrap();
            panic!(
                "chat did not finish on the terminal within 60 s: {:#?}",
                screen(&drawn)
            );
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    (reader.join().unwrap(), status.code())
}

/// `chat --once QUESTION` against the fake OpenAI server at `url`, with `extra` options;
/// tools run without asking (`--yes`).
fn once_args(url: &str, extra: &[&str], question: &str) -> Vec<String> {
    let mut extra = extra.to_vec();
    extra.extend(["--yes", "--once", question]);
    chat_args(url, &extra)
}

/// `chat` against the fake OpenAI server at `url`, with `extra` options.
pub(crate) fn chat_args(url: &str, extra: &[&str]) -> Vec<String> {
    let base_url = format!("{url}/v1");
    ["chat"]
        .iter()
        .chain(extra)
        .chain(&[
            "--provider",
            "openai",
            "--model",
            "test-model",
            "--base-url",
            &base_url,
            "--no-stream",
        ])
        .map(|s| (*s).to_owned())
        .collect()
}

/// The lines a terminal shows after `drawn`.
pub(crate) fn screen(drawn: &[u8]) -> Vec<String> {
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
                    'C' => col += n,
                    'D' => col = col.saturating_sub(n),
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
            shown[1].starts_with("  [zwave] Carry it out now? [y/N] "),
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

/// A config running the demo Z-Wave server with `args` after `--demo`, in a folder of its own
/// (kept while the first value lives); the second is the config's path.
fn zwave_config(args: &[&str]) -> (test_support::mosquitto::ScratchDir, String) {
    let folder = test_support::mosquitto::ScratchDir::new();
    let servers = folder.path().join("servers.json");
    let mut all = vec!["--demo"];
    all.extend(args);
    std::fs::write(
        &servers,
        serde_json::json!({"mcpServers": {"zwave": {"command": test_support::workspace_bin("zwave-mcp-server"), "args": all}}})
            .to_string(),
    )
    .unwrap();
    let path = servers.to_str().unwrap().to_owned();
    (folder, path)
}

/// A chat completion saying `content` and calling each `(name, arguments)`.
fn calling(calls: &[(&str, serde_json::Value)], content: &str) -> Reply {
    let tool_calls: Vec<serde_json::Value> = calls
        .iter()
        .enumerate()
        .map(|(n, (name, arguments))| {
            serde_json::json!({"id": format!("call_{n}"), "type": "function", "function": {"name": name, "arguments": arguments.to_string()}})
        })
        .collect();
    Reply::status(
        200,
        &serde_json::json!({"id": "c1", "object": "chat.completion", "choices": [{"index": 0, "message": {"role": "assistant", "content": content, "tool_calls": tool_calls}, "finish_reason": "tool_calls"}], "usage": {"prompt_tokens": 5, "completion_tokens": 5}})
            .to_string(),
    )
}

/// A chat completion answering `content`.
pub(crate) fn saying(content: &str) -> Reply {
    Reply::status(
        200,
        &serde_json::json!({"id": "c2", "object": "chat.completion", "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}], "usage": {"prompt_tokens": 5, "completion_tokens": 5}})
            .to_string(),
    )
}

fn unlock() -> (&'static str, serde_json::Value) {
    (
        "control_zwave_device",
        serde_json::json!({"device_name": "Front Door Lock", "action": "unlock"}),
    )
}

/// The line of `shown` starting with `start`, and where it is.
fn line_starting<'a>(shown: &'a [String], start: &str) -> Option<(usize, &'a str)> {
    shown
        .iter()
        .enumerate()
        .find(|(_, line)| line.starts_with(start))
        .map(|(at, line)| (at, line.as_str()))
}

// Issue 31: keys typed before a question was shown (an approval, a server's question) are
// discarded; only what is typed at its prompt answers it.
#[tokio::test]
async fn keys_typed_before_a_question_do_not_answer_it() {
    let (_folder, servers) = zwave_config(&["--allow-sensitive", "lock"]);
    let dim = (
        "control_zwave_device",
        serde_json::json!({"device_name": "Living Room Light", "action": "dim", "level": 40}),
    );
    // The approval of a tool call (no --yes), then the server's own question (--yes).
    for (call, yes) in [(dim, false), (unlock(), true)] {
        let fake = FakeProvider::start(vec![calling(&[call], ""), saying("Done.")]).await;
        let mut extra = vec!["--config", servers.as_str(), "--no-history"];
        if yes {
            extra.push("--yes");
        }
        extra.extend(["--once", "do it"]);
        let args = chat_args(&fake.url, &extra);
        let (drawn, exit) = tokio::task::spawn_blocking(move || {
            on_terminal(args, vec![Act::TypeAhead("y\r"), Act::At("[y/N] ", "n\r")])
        })
        .await
        .unwrap();
        let shown = screen(&drawn);
        // The `y` typed ahead did not say yes; the `n` typed at the prompt said no.
        assert_eq!(exit, Some(1), "{shown:#?}");
        assert!(
            !shown.iter().any(|line| line.starts_with("✓ ")),
            "{shown:#?}"
        );
        assert!(
            line_starting(&shown, "✗ control_zwave_device").is_some(),
            "{shown:#?}"
        );
        assert!(
            shown.iter().any(|line| line.ends_with("[y/N] n")),
            "{shown:#?}"
        );
    }
}

// Issue 31: two questions at once (two servers, each asking about its call) are asked one
// after the other, each with its words right above its own prompt, and nothing is written
// into a prompt's line while it waits.
#[tokio::test]
async fn questions_asked_at_once_are_asked_one_at_a_time() {
    let folder = test_support::mosquitto::ScratchDir::new();
    let servers = folder.path().join("servers.json");
    let server = |prefix: &str| {
        serde_json::json!({
            "command": test_support::workspace_bin("zwave-mcp-server"),
            "args": ["--demo", "--allow-sensitive", "lock"],
            "toolPrefix": prefix,
        })
    };
    std::fs::write(
        &servers,
        serde_json::json!({"mcpServers": {"front": server("front"), "back": server("back")}})
            .to_string(),
    )
    .unwrap();
    let unlocking = |prefix: &str| {
        (
            String::leak(format!("{prefix}__control_zwave_device")) as &str,
            unlock().1,
        )
    };
    let fake = FakeProvider::start(vec![
        calling(&[unlocking("front"), unlocking("back")], ""),
        saying("Done."),
    ])
    .await;
    let args = once_args(
        &fake.url,
        &["--config", servers.to_str().unwrap(), "--no-history"],
        "unlock both doors",
    );
    let (drawn, exit) = tokio::task::spawn_blocking(move || {
        on_terminal(
            args,
            // The first answer waits for the other question to have come.
            vec![
                Act::SlowlyAt("[y/N] ", "y\r", Duration::from_millis(500)),
                Act::At("[y/N] ", "n\r"),
            ],
        )
    })
    .await
    .unwrap();
    let shown = screen(&drawn);
    assert_eq!(exit, Some(1), "{shown:#?}");
    let asked: Vec<usize> = shown
        .iter()
        .enumerate()
        .filter(|(_, line)| line.contains(" asks: "))
        .map(|(at, _)| at)
        .collect();
    assert_eq!(asked.len(), 2, "{shown:#?}");
    for at in asked {
        assert!(
            shown[at].starts_with("front asks: Unlock")
                || shown[at].starts_with("back asks: Unlock"),
            "{shown:#?}"
        );
        let server = shown[at].split(' ').next().unwrap();
        assert!(
            shown[at + 1].starts_with(&format!("  [{server}] Carry it out now? [y/N] ")),
            "{shown:#?}"
        );
    }
    let prompts: Vec<&String> = shown.iter().filter(|line| line.contains("[y/N]")).collect();
    assert_eq!(prompts.len(), 2, "{shown:#?}");
    assert!(
        prompts[0].ends_with("Carry it out now? [y/N] y"),
        "{shown:#?}"
    );
    assert!(
        prompts[1].ends_with("Carry it out now? [y/N] n"),
        "{shown:#?}"
    );
    assert_eq!(
        shown.iter().filter(|line| line.starts_with("✓ ")).count(),
        1,
        "{shown:#?}"
    );
    assert_eq!(
        shown.iter().filter(|line| line.starts_with("✗ ")).count(),
        1,
        "{shown:#?}"
    );
}

// Issue 31: Ctrl-C at a question (a server's, an approval) dismisses it, the chat prompt
// comes back on a line of its own, and a `y` typed afterwards is a new question to the
// model, not an answer.
#[tokio::test]
async fn ctrl_c_at_a_question_dismisses_it_and_the_prompt_comes_back() {
    let (_folder, servers) = zwave_config(&["--allow-sensitive", "lock"]);
    let dim = (
        "control_zwave_device",
        serde_json::json!({"device_name": "Living Room Light", "action": "dim", "level": 40}),
    );
    // The server's question (--yes), then the approval of a tool call.
    for (call, yes) in [(unlock(), true), (dim, false)] {
        let fake = FakeProvider::start(vec![calling(&[call], ""), saying("Nothing to do.")]).await;
        let mut extra = vec!["--config", servers.as_str(), "--no-history"];
        if yes {
            extra.push("--yes");
        }
        let args = chat_args(&fake.url, &extra);
        let (drawn, exit) = tokio::task::spawn_blocking(move || {
            on_terminal(
                args,
                vec![
                    Act::At("> ", "do it\r"),
                    Act::CtrlCAt("[y/N] "),
                    Act::At("> ", "y\r"),
                    Act::At("Nothing to do.", ""),
                    Act::At("> ", "\u{4}"),
                ],
            )
        })
        .await
        .unwrap();
        let shown = screen(&drawn);
        assert_eq!(exit, Some(0), "{shown:#?}");
        // The question's line holds its prompt and nothing else.
        let asked: Vec<(usize, &String)> = shown
            .iter()
            .enumerate()
            .filter(|(_, line)| line.contains("[y/N]"))
            .collect();
        assert_eq!(asked.len(), 1, "{shown:#?}");
        let (at, prompt) = asked[0];
        assert!(prompt.ends_with("? [y/N]"), "{shown:#?}");
        assert!(
            shown[at + 1..].iter().any(|line| line == "cancelled"),
            "{shown:#?}"
        );
        assert!(
            line_starting(&shown, "✓ control_zwave_device").is_none(),
            "{shown:#?}"
        );
        // The `y` went to the model as the next question.
        let bodies = fake.bodies();
        assert_eq!(bodies.len(), 2, "{shown:#?}");
        let messages = bodies[1]["messages"].as_array().unwrap();
        assert_eq!(
            messages.last().unwrap(),
            &serde_json::json!({"role": "user", "content": "y"}),
            "{shown:#?}"
        );
    }
}

// Issue 31's review: Ctrl-C, `y` and Enter arriving at a question in one burst (a paste, a
// slow link) are an interruption: the `y` came after the Ctrl-C and answers nothing. Before,
// the `y` could reach the question before the interruption's signal was handled, and the door
// was unlocked while the screen said "cancelled".
#[tokio::test]
async fn a_yes_that_comes_with_a_ctrl_c_answers_nothing() {
    let (_folder, servers) = zwave_config(&["--allow-sensitive", "lock"]);
    let dim = (
        "control_zwave_device",
        serde_json::json!({"device_name": "Living Room Light", "action": "dim", "level": 40}),
    );
    for (call, yes) in [(unlock(), true), (dim, false)] {
        for _ in 0..3 {
            let fake = FakeProvider::start(vec![
                calling(std::slice::from_ref(&call), ""),
                saying("Nothing."),
            ])
            .await;
            let mut extra = vec!["--config", servers.as_str(), "--no-history"];
            if yes {
                extra.push("--yes");
            }
            let args = chat_args(&fake.url, &extra);
            let (drawn, exit) = tokio::task::spawn_blocking(move || {
                on_terminal(
                    args,
                    vec![
                        Act::At("> ", "do it\r"),
                        Act::At("[y/N] ", "\u{3}y\r"),
                        Act::At("> ", "\u{4}"),
                    ],
                )
            })
            .await
            .unwrap();
            let shown = screen(&drawn);
            assert_eq!(exit, Some(0), "{shown:#?}");
            assert!(
                line_starting(&shown, "✓ control_zwave_device").is_none(),
                "{shown:#?}"
            );
            assert!(shown.iter().any(|line| line == "cancelled"), "{shown:#?}");
            // Nor is the `y` a question to the model.
            assert!(
                fake.bodies().iter().all(|body| {
                    body["messages"].as_array().is_some_and(|messages| {
                        messages.iter().all(|message| message["content"] != "y")
                    })
                }),
                "{shown:#?}"
            );
        }
    }
}

// Issue 31: bidirectional overrides a model writes, in its answer or a tool call's
// arguments shown for approval, are escaped as the server escapes them.
#[tokio::test]
async fn bidirectional_overrides_are_escaped() {
    let (_folder, servers) = zwave_config(&[]);
    let fake = FakeProvider::start(vec![
        calling(
            &[(
                "control_zwave_device",
                serde_json::json!({"device_name": "Living\u{202e}Room Light", "action": "on"}),
            )],
            "Let me\u{2067} look.",
        ),
        saying("Done\u{202a}\u{200f}\u{61c}."),
    ])
    .await;
    let args = chat_args(
        &fake.url,
        &["--config", &servers, "--no-history", "--once", "turn it on"],
    );
    let (drawn, _) =
        tokio::task::spawn_blocking(move || on_terminal(args, vec![Act::At("[y/N] ", "n\r")]))
            .await
            .unwrap();
    let raw = String::from_utf8_lossy(&drawn);
    let shown = screen(&drawn);
    for c in [
        '\u{202a}', '\u{202b}', '\u{202c}', '\u{202d}', '\u{202e}', '\u{2066}', '\u{2067}',
        '\u{2068}', '\u{2069}', '\u{200e}', '\u{200f}', '\u{61c}',
    ] {
        assert!(!raw.contains(c), "{c:?} reached the terminal: {shown:#?}");
    }
    assert!(
        shown
            .iter()
            .any(|line| line.contains(r"Let me\u{2067} look.")),
        "{shown:#?}"
    );
    assert!(
        shown
            .iter()
            .any(|line| line == r#"    "deviceName" = "Living\u{202e}Room Light""#),
        "{shown:#?}"
    );
    assert!(
        shown.iter().any(|line| line.starts_with(
            r#"Allow the tool "control_zwave_device" of the MCP server "zwave" to run? [y/N] n"#
        )),
        "{shown:#?}"
    );
    assert!(
        shown.contains(&r"Done\u{202a}\u{200f}\u{61c}.".to_owned()),
        "{shown:#?}"
    );
}

// Issue 31: the time a person takes to answer a server's question is not the tool's: no
// slow-call warning for it, and no spinner frame left behind.
#[tokio::test]
async fn a_slow_answer_is_not_a_slow_tool() {
    let (_folder, servers) = zwave_config(&["--allow-sensitive", "lock"]);
    let fake = unlocking_model().await;
    let args = once_args(
        &fake.url,
        &["--config", &servers, "--no-history"],
        "unlock the front door",
    );
    let (drawn, exit) = tokio::task::spawn_blocking(move || {
        on_terminal(
            args,
            vec![Act::SlowlyAt("[y/N] ", "y\r", Duration::from_millis(1500))],
        )
    })
    .await
    .unwrap();
    let shown = screen(&drawn);
    assert_eq!(exit, Some(0), "{shown:#?}");
    assert_eq!(shown.len(), 4, "{shown:#?}");
    assert!(shown[0].starts_with("zwave asks: Unlock"), "{shown:#?}");
    assert_eq!(
        shown[1], "  [zwave] Carry it out now? [y/N] y",
        "{shown:#?}"
    );
    assert!(
        shown[2].starts_with(
            r#"✓ control_zwave_device {"action":"unlock","deviceName":"Front Door Lock"} ("#
        ),
        "{shown:#?}"
    );
    assert_eq!(shown[3], "Done.", "{shown:#?}");
}

// Issue 31 item 15, as a person sees it: a resumed chat says what it loaded, and a chat whose
// conversation is not kept shows no id anyone could resume.
#[tokio::test]
async fn a_resumed_chat_says_what_it_loaded_and_an_unkept_one_shows_no_id() {
    let folder = test_support::mosquitto::ScratchDir::new();
    let history = folder.path().join("history.db");
    let history = history.to_str().unwrap().to_owned();
    let fake = FakeProvider::start(vec![saying("First."), saying("Second.")]).await;
    let args = chat_args(&fake.url, &["--history", history.as_str()]);
    let (drawn, exit) = tokio::task::spawn_blocking(move || {
        on_terminal(
            args,
            vec![
                Act::At("> ", "one\r"),
                Act::At("First.", ""),
                Act::At("> ", "\u{4}"),
            ],
        )
    })
    .await
    .unwrap();
    let shown = screen(&drawn);
    assert_eq!(exit, Some(0), "{shown:#?}");
    let id = shown[0]
        .strip_prefix("conversation ")
        .and_then(|rest| rest.split(' ').next())
        .unwrap_or_else(|| panic!("{shown:#?}"))
        .to_owned();
    let args = chat_args(&fake.url, &["--history", history.as_str(), "--resume", &id]);
    let (drawn, exit) = tokio::task::spawn_blocking(move || {
        on_terminal(
            args,
            vec![
                Act::At("> ", "two\r"),
                Act::At("Second.", ""),
                Act::At("> ", "\u{4}"),
            ],
        )
    })
    .await
    .unwrap();
    let shown = screen(&drawn);
    assert_eq!(exit, Some(0), "{shown:#?}");
    assert_eq!(
        shown[0],
        format!("resumed conversation {id}: 2 messages"),
        "{shown:#?}"
    );

    let args = chat_args(&fake.url, &["--no-history"]);
    let (drawn, _) =
        tokio::task::spawn_blocking(move || on_terminal(args, vec![Act::At("> ", "\u{4}")]))
            .await
            .unwrap();
    let shown = screen(&drawn);
    assert_eq!(
        shown[0],
        "conversation not kept (--no-history) — ask away (Ctrl-D to quit, Ctrl-C to stop an answer)",
        "{shown:#?}"
    );
}

/// A 2026-07-28 server whose form has no fields ("proceed?"): the accept would be the whole
/// answer, so the person is asked a yes/no, and anything but `y` declines. Before, the accept
/// went out with no key pressed.
#[tokio::test]
async fn a_question_without_fields_is_a_yes_no_and_only_y_accepts() {
    let (_folder, servers) = modern_config();
    for (typed, answer) in [("y", "accept"), ("", "decline"), ("n", "decline")] {
        let fake = FakeProvider::start(vec![
            calling(&[("proceed", serde_json::json!({}))], ""),
            saying("Done."),
        ])
        .await;
        let args = once_args(
            &fake.url,
            &["--config", servers.to_str().unwrap(), "--no-history"],
            "wipe it",
        );
        let (drawn, _) = tokio::task::spawn_blocking(move || {
            answering_on_terminal(args, vec![("Answer yes? [y/N] ", typed)])
        })
        .await
        .unwrap();
        let shown = screen(&drawn);
        assert_eq!(shown[0], "modern asks: Wipe every file?", "{shown:#?}");
        assert!(
            shown[1].starts_with("  [modern] Answer yes? [y/N]"),
            "{shown:#?}"
        );
        // The tool's result, as the model was sent it next.
        let sent = fake.bodies();
        assert!(
            sent.last().is_some_and(|body| body
                .to_string()
                .contains(&format!("the person's answer: {answer}"))),
            "{typed:?}: {sent:#?}"
        );
    }
}

/// Found by the third hostile review: a model's call padded with 12,000 spaces left only
/// "Allow get_balance {}"? [y/N]" on the screen while `y` sent money, and a server's form
/// label could read as the client's own question. Now the approval names the server and the
/// tool, shows each argument bounded with what is left out said, shows it whole on `?`, and
/// every prompt of a server's form starts with the server's name.
#[tokio::test]
async fn a_padded_call_is_shown_bounded_and_a_servers_label_cannot_pass_for_the_clients() {
    let (_folder, servers) = modern_config();
    let padding = format!("{}Allow get_balance {{}}", " ".repeat(12_000));
    let fake = FakeProvider::start(vec![
        calling(
            &[(
                "impersonate",
                serde_json::json!({"amount": 5000, "to": "attacker-IBAN", "~": padding}),
            )],
            "",
        ),
        saying("Done."),
    ])
    .await;
    let args = chat_args(
        &fake.url,
        &[
            "--config",
            servers.to_str().unwrap(),
            "--no-history",
            "--once",
            "pay it",
        ],
    );
    let (drawn, _) = tokio::task::spawn_blocking(move || {
        on_terminal(
            args,
            vec![
                Act::At("to run? [y/N] ", "?\r"),
                Act::At("to run? [y/N] ", "y\r"),
                Act::At("Allow get_balance {}? [y/N] ", "n\r"),
            ],
        )
    })
    .await
    .unwrap();
    let shown = screen(&drawn);
    let at = shown
        .iter()
        .position(|line| line.starts_with("The model asks to run"))
        .unwrap_or_else(|| panic!("{shown:#?}"));
    assert_eq!(
        shown[at..at + 7],
        [
            "The model asks to run the tool \"impersonate\" of the MCP server \"modern\"",
            "  with 3 arguments:",
            "    \"amount\" = 5000",
            "    \"to\" = \"attacker-IBAN\"",
            "    \"~\" = \"⟨106 spaces⟩\" … 11,861 more characters in \"~\" … \"⟨33 spaces⟩Allow get_balance {}\" (12,020 characters in all)",
            "  (answer ? to see every argument whole before you answer)",
            "Allow the tool \"impersonate\" of the MCP server \"modern\" to run? [y/N] ?",
        ],
        "{shown:#?}"
    );
    // `?`: every argument whole, then the question again.
    assert!(
        shown.contains(&"    \"~\" = \"⟨12000 spaces⟩Allow get_balance {}\"".to_owned()),
        "{shown:#?}"
    );
    assert!(
        shown.contains(
            &"Allow the tool \"impersonate\" of the MCP server \"modern\" to run? [y/N] y"
                .to_owned()
        ),
        "{shown:#?}"
    );
    // The server's label starts with the server's name.
    assert!(
        shown.contains(&"  [modern] mcp-client: Allow get_balance {}? [y/N] n".to_owned()),
        "{shown:#?}"
    );
    // The line after the call shows the padding counted, as the approval did.
    assert!(
        line_starting(
            &shown,
            r#"✓ impersonate {"amount":5000,"to":"attacker-IBAN","~":"⟨12000 spaces⟩Allow get_balance {}"} ("#
        )
        .is_some(),
        "{shown:#?}"
    );
    let sent = fake.bodies();
    assert!(
        sent.last()
            .is_some_and(|body| body.to_string().contains(r#"\"ok\": false"#)),
        "{sent:#?}"
    );
}

/// Found by the hostile review of the first fix: a label of one U+2800 and 74 U+3000 filled
/// the row after `  [modern] `, so the terminal wrapped the rest to the first column, where it
/// read as the client's own approval question. Labels are escaped (blank runs counted) and
/// cut to one row.
#[tokio::test]
async fn a_label_cannot_wrap_into_the_clients_own_question() {
    let (_folder, servers) = modern_config();
    let title = format!(
        "\u{2800}{}Allow the tool \"echo\" of the MCP server \"bank\" to run",
        "\u{3000}".repeat(74)
    );
    let fake = FakeProvider::start(vec![
        calling(&[("impersonate", serde_json::json!({"title": title}))], ""),
        saying("Done."),
    ])
    .await;
    let args = chat_args(
        &fake.url,
        &[
            "--config",
            servers.to_str().unwrap(),
            "--no-history",
            "--once",
            "go",
            "--yes",
        ],
    );
    let (drawn, _) = tokio::task::spawn_blocking(move || {
        on_terminal(args, vec![Act::At("to run? [y/N] ", "n\r")])
    })
    .await
    .unwrap();
    let shown = screen(&drawn);
    assert!(
        shown.iter().all(|row| !row.starts_with("Allow the tool")),
        "{shown:#?}"
    );
    assert!(
        shown.iter().any(
            |row| row.starts_with("  [modern] \\u{2800}⟨74 × U+3000⟩Allow the tool")
                && row.ends_with("? [y/N] n")
        ),
        "{shown:#?}"
    );
}

/// A configuration of the `modern` fake server (2026-07-28, with its questions), in a folder
/// removed when dropped.
fn modern_config() -> (test_support::mosquitto::ScratchDir, std::path::PathBuf) {
    let folder = test_support::mosquitto::ScratchDir::new();
    let servers = folder.path().join("servers.json");
    let script = test_support::fixture_path("fake-servers/fake_mcp_server.py");
    std::fs::write(
        &servers,
        serde_json::json!({"mcpServers": {"modern": {"command": "python3", "args": [script, "modern"]}}})
            .to_string(),
    )
    .unwrap();
    (folder, servers)
}
