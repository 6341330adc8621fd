//! The `mcp-client chat` and `history` commands as a user runs them: against the fake provider
//! and the real demo home, with what they print on stdout and stderr and their exit codes.

use std::{
    path::{Path, PathBuf},
    process::Output,
    time::Duration,
};

use crate::{
    fake_provider::{FakeProvider, Reply},
    harness::scratch_file,
};

const BIN: &str = env!("CARGO_BIN_EXE_mcp-client");

/// An `mcpServers` file for the demo home, with the binary's absolute path.
fn demo_config() -> PathBuf {
    let server = test_support::workspace_bin("zwave-mcp-server");
    let path = scratch_file("chat-servers.json");
    std::fs::write(
        &path,
        serde_json::json!({"mcpServers": {"zwave": {"command": server, "args": ["--demo"]}}})
            .to_string(),
    )
    .unwrap();
    path
}

/// Runs the binary with `args` and `stdin`, off the async runtime (the fake provider lives on it).
async fn run(
    args: Vec<String>,
    stdin: &str,
    envs: Vec<(&'static str, String)>,
) -> (Output, String, String) {
    let stdin = stdin.to_owned();
    let output = tokio::task::spawn_blocking(move || {
        test_support::child::run(
            std::process::Command::new(BIN)
                .args(&args)
                .env_remove("MCP_CLIENT_PROVIDER")
                .env_remove("MCP_CLIENT_MODEL")
                .env_remove("OLLAMA_HOST")
                .env_remove("OPENAI_BASE_URL")
                // Logs off unless a test asks for a level.
                .env("MCP_CLIENT_LOG", "off")
                .envs(envs),
            stdin.as_bytes(),
            Duration::from_secs(120),
        )
    })
    .await
    .unwrap();
    let stdout = String::from_utf8(output.stdout.clone()).unwrap();
    let stderr = String::from_utf8(output.stderr.clone()).unwrap();
    (output, stdout, stderr)
}

fn args(list: &[&str]) -> Vec<String> {
    list.iter().map(|s| (*s).to_owned()).collect()
}

fn chat_args(config: &Path, history: &Path, url: &str, extra: &[&str]) -> Vec<String> {
    let mut all = args(&[
        "chat",
        "--config",
        &config.to_string_lossy(),
        "--history",
        &history.to_string_lossy(),
        "--provider",
        "ollama",
        "--model",
        "qwen3:8b",
        "--base-url",
        url,
    ]);
    all.extend(args(extra));
    all
}

#[tokio::test]
async fn chat_once_answers_on_stdout_and_shows_each_tool_call_on_stderr() {
    let fake = FakeProvider::start(vec![
        Reply::fixture("ollama/dim-1.ndjson", 11),
        Reply::fixture("ollama/dim-2.ndjson", 11),
    ])
    .await;
    let history = scratch_file("chat-once.db");
    let (output, stdout, stderr) = run(
        chat_args(
            &demo_config(),
            &history,
            &fake.url,
            &["--yes", "--once", "dim the living room light to 40%"],
        ),
        "",
        vec![],
    )
    .await;
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    assert_eq!(stdout, "The Living Room Light is now dimmed to 40%.\n");
    let line = stderr
        .lines()
        .find(|l| l.starts_with("✓ control_zwave_device "))
        .unwrap_or_else(|| panic!("{stderr}"));
    assert!(
        // The arguments as sent to the server, not the model's snake_case ones.
        line.starts_with(r#"✓ control_zwave_device {"action":"dim","deviceName":"Living Room Light","level":40} ("#),
        "{line}"
    );
    assert!(line.ends_with(" ms)"), "{line}");
    // The conversation is in the history, and `history` shows it.
    let (output, listed, _) = run(
        args(&["history", "list", "--history", &history.to_string_lossy()]),
        "",
        vec![],
    )
    .await;
    assert_eq!(output.status.code(), Some(0));
    let row = listed.lines().next().unwrap();
    assert!(row.contains("  completed  "), "{row}");
    assert!(
        row.ends_with("4 messages, 982 tokens  dim the living room light to 40%"),
        "{row}"
    );
    let id = row.split_whitespace().next().unwrap();
    let (_, shown, _) = run(
        args(&[
            "history",
            "show",
            id,
            "--history",
            &history.to_string_lossy(),
        ]),
        "",
        vec![],
    )
    .await;
    let lines: Vec<&str> = shown.lines().collect();
    assert!(
        lines[0].starts_with(&format!(
            "conversation {id} with ollama qwen3:8b at {}/api/chat",
            fake.url
        )),
        "{shown}"
    );
    assert_eq!(lines[1], "user: dim the living room light to 40%");
    assert_eq!(
        lines[2],
        r#"  call call_8k2xq1 control_zwave_device {"action":"dim","brightness":40,"device_name":"Living Room Light"}"#
    );
    assert!(
        lines[3]
            .starts_with("  ✓ call_8k2xq1 control_zwave_device: Living Room Light: the command to dim to 40% was sent and acknowledged at "),
        "{shown}"
    );
    assert_eq!(
        lines[4],
        "assistant (turn 2): The Living Room Light is now dimmed to 40%."
    );
    assert_eq!(
        lines[5],
        "outcome: completed after 2 turns, 932 tokens in, 50 out"
    );
}

#[tokio::test]
async fn chat_asks_before_switching_and_a_no_fails_the_run() {
    let fake = FakeProvider::start(vec![
        Reply::fixture("ollama/dim-1.ndjson", 64),
        Reply::fixture("ollama/dim-2.ndjson", 64),
    ])
    .await;
    let (output, _, stderr) = run(
        chat_args(
            &demo_config(),
            &scratch_file("ask.db"),
            &fake.url,
            &["--once", "dim the living room light to 40%"],
        ),
        "n\n",
        vec![],
    )
    .await;
    assert!(
        stderr.contains(
            &[
                r#"The model asks to run the tool "control_zwave_device" of the MCP server "zwave""#,
                "  with 3 arguments:",
                r#"    "action" = "dim""#,
                r#"    "deviceName" = "Living Room Light""#,
                r#"    "level" = 40"#,
                r#"Allow the tool "control_zwave_device" of the MCP server "zwave" to run? [y/N] "#,
            ]
            .join("\n")
        ),
        "{stderr}"
    );
    assert!(stderr.contains(r#"✗ control_zwave_device {"action":"dim","deviceName":"Living Room Light","level":40} (0 ms): Error: the user declined to run `control_zwave_device`; it was not executed"#), "{stderr}");
    assert_eq!(output.status.code(), Some(1));
    let declined = &fake.bodies()[1]["messages"][2]["content"];
    assert_eq!(
        declined,
        "Error: the user declined to run `control_zwave_device`; it was not executed"
    );
}

#[tokio::test]
async fn chat_json_prints_every_event_as_a_json_line() {
    let fake = FakeProvider::start(vec![
        Reply::fixture("ollama/dim-1.ndjson", 64),
        Reply::fixture("ollama/dim-2.ndjson", 64),
    ])
    .await;
    let (output, stdout, _) = run(
        chat_args(
            &demo_config(),
            &scratch_file("json.db"),
            &fake.url,
            &[
                "--yes",
                "--json",
                "--once",
                "dim the living room light to 40%",
            ],
        ),
        "",
        vec![],
    )
    .await;
    assert_eq!(output.status.code(), Some(0));
    let events: Vec<serde_json::Value> = stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let kinds: Vec<&str> = events.iter().map(|e| e["type"].as_str().unwrap()).collect();
    assert_eq!(
        kinds,
        [
            "tool_call",
            "tool_result",
            "turn_finished",
            "text_delta",
            "text_delta",
            "text_delta",
            "turn_finished",
            "done"
        ]
    );
    assert_eq!(events[0]["args"]["device_name"], "Living Room Light");
    assert_eq!(events[1]["success"], true);
    assert_eq!(events[7]["reason"], "completed");
    assert_eq!(
        events[7]["usage"],
        serde_json::json!({"input_tokens": 932, "output_tokens": 50})
    );
}

#[tokio::test]
async fn chat_reads_questions_line_by_line_from_a_pipe_in_one_conversation() {
    let fake = FakeProvider::start(vec![
        Reply::fixture("ollama/dim-2.ndjson", 64),
        Reply::fixture("ollama/refine-3.ndjson", 64),
    ])
    .await;
    let (output, stdout, stderr) = run(
        args(&[
            "chat",
            "--no-history",
            "--provider",
            "ollama",
            "--model",
            "qwen3:8b",
            "--base-url",
            &fake.url,
        ]),
        "first question\n\nsecond question\n",
        vec![],
    )
    .await;
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    assert_eq!(
        stdout,
        "The Living Room Light is now dimmed to 40%.\nSwitch One is off.\n"
    );
    let second = &fake.bodies()[1]["messages"];
    assert_eq!(second.as_array().unwrap().len(), 3, "{second}");
}

#[tokio::test]
async fn chat_usage_errors_exit_2_and_say_what_is_missing() {
    let (output, _, stderr) =
        run(args(&["chat", "--no-history", "--once", "hi"]), "", vec![]).await;
    assert_eq!(output.status.code(), Some(2));
    assert_eq!(
        stderr,
        "mcp-client: choose a model provider: --provider ollama|openai|anthropic (or MCP_CLIENT_PROVIDER, or \"llm\": {\"provider\": …} in the config)\n"
    );
    let (output, _, stderr) = run(
        args(&[
            "chat",
            "--no-history",
            "--provider",
            "anthropic",
            "--once",
            "hi",
        ]),
        "",
        vec![],
    )
    .await;
    assert_eq!(output.status.code(), Some(2));
    assert_eq!(
        stderr,
        "mcp-client: choose a model: --model NAME (or MCP_CLIENT_MODEL, or \"llm\": {\"model\": …} in the config), e.g. claude-sonnet-4-5\n"
    );
    let (output, _, stderr) = run(
        args(&[
            "chat",
            "--no-history",
            "--provider",
            "anthropic",
            "--model",
            "claude-sonnet-4-5",
            "--once",
            "hi",
        ]),
        "",
        vec![("ANTHROPIC_API_KEY", String::new())],
    )
    .await;
    assert_eq!(output.status.code(), Some(2));
    assert_eq!(
        stderr,
        "mcp-client: Anthropic needs an API key: set ANTHROPIC_API_KEY\n"
    );
    // A base URL that cannot work is refused before any question is asked.
    let (output, _, stderr) = run(
        args(&[
            "chat",
            "--no-history",
            "--provider",
            "openai",
            "--model",
            "m",
            "--base-url",
            "http://127.0.0.1:/v1",
            "--once",
            "hi",
        ]),
        "",
        vec![],
    )
    .await;
    assert_eq!(output.status.code(), Some(2));
    assert_eq!(
        stderr,
        "mcp-client: the base URL `http://127.0.0.1:/v1` cannot work: its port is empty; give one such as http://127.0.0.1:8080/v1\n"
    );
}

#[tokio::test]
async fn chat_takes_provider_and_model_from_the_environment_and_the_config_file() {
    let fake = FakeProvider::start(vec![
        Reply::fixture("openai/dim-2.sse", 64),
        Reply::fixture("ollama/refine-3.ndjson", 64),
    ])
    .await;
    let (output, stdout, stderr) = run(
        args(&["chat", "--no-history", "--once", "hi"]),
        "",
        vec![
            ("MCP_CLIENT_PROVIDER", "openai".into()),
            ("MCP_CLIENT_MODEL", "gpt-4.1-mini".into()),
            ("OPENAI_BASE_URL", format!("{}/v1", fake.url)),
            ("OPENAI_API_KEY", "sk-from-env".into()),
        ],
    )
    .await;
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    assert_eq!(stdout, "The Living Room Light is now dimmed to 40%.\n");
    let first = &fake.received()[0];
    assert_eq!(first.path, "/v1/chat/completions");
    assert_eq!(first.body["model"], "gpt-4.1-mini");
    assert_eq!(first.headers["authorization"], "Bearer sk-from-env");
    let config = scratch_file("llm-config.json");
    std::fs::write(
        &config,
        serde_json::json!({"llm": {"provider": "ollama", "model": "qwen3:4b", "baseUrl": fake.url}, "mcpServers": {}})
            .to_string(),
    )
    .unwrap();
    let (output, stdout, stderr) = run(
        args(&[
            "chat",
            "--no-history",
            "--config",
            &config.to_string_lossy(),
            "--once",
            "hi",
        ]),
        "",
        vec![],
    )
    .await;
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    assert_eq!(stdout, "Switch One is off.\n");
    assert_eq!(fake.received()[1].body["model"], "qwen3:4b");
}

#[tokio::test]
async fn chat_once_exits_1_when_the_provider_fails_and_says_why() {
    let fake = FakeProvider::start(vec![Reply::status(
        401,
        r#"{"error":{"message":"Incorrect API key provided: sk-wr***ng","type":"invalid_request_error"}}"#,
    )])
    .await;
    let (output, stdout, stderr) = run(
        args(&[
            "chat",
            "--no-history",
            "--provider",
            "openai",
            "--model",
            "gpt-4.1-mini",
            "--once",
            "hi",
        ]),
        "",
        vec![
            ("OPENAI_BASE_URL", format!("{}/v1", fake.url)),
            ("OPENAI_API_KEY", "sk-wrong-key".into()),
        ],
    )
    .await;
    assert_eq!(output.status.code(), Some(1));
    assert_eq!(stdout, "");
    assert_eq!(
        stderr,
        "error: the OpenAI-compatible server refused the request with status 401 (Incorrect API key provided: sk-wr***ng): check the key in OPENAI_API_KEY\n"
    );
}

#[tokio::test]
async fn an_answer_cut_off_at_the_token_limit_exits_1_and_says_to_raise_max_tokens() {
    let cut = r#"{"model":"qwen3:8b","message":{"role":"assistant","content":"The light is"},"done":true,"done_reason":"length","prompt_eval_count":20,"eval_count":4}"#;
    let fake = FakeProvider::start(vec![Reply::status(200, cut)]).await;
    let history = scratch_file("chat-truncated.db");
    let (output, stdout, stderr) = run(
        chat_args(
            &demo_config(),
            &history,
            &fake.url,
            &[
                "--no-stream",
                "--max-tokens",
                "4",
                "--once",
                "how is the light?",
            ],
        ),
        "",
        vec![],
    )
    .await;
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert_eq!(stdout, "The light is\n");
    assert!(
        stderr.contains(
            "stopped: the answer was cut off at the output token limit; raise --max-tokens"
        ),
        "{stderr}"
    );
    let listed = run(
        args(&["history", "list", "--history", &history.to_string_lossy()]),
        "",
        vec![],
    )
    .await;
    assert!(listed.1.contains("truncated"), "{}", listed.1);
}

#[tokio::test]
async fn an_empty_answer_is_reported_not_passed_off_as_an_answer() {
    let empty = r#"{"model":"qwen3:8b","message":{"role":"assistant","content":""},"done":true,"done_reason":"stop","prompt_eval_count":20,"eval_count":0}"#;
    let fake =
        FakeProvider::start(vec![Reply::status(200, empty), Reply::status(200, empty)]).await;
    let history = scratch_file("chat-empty.db");
    let (output, stdout, stderr) = run(
        chat_args(
            &demo_config(),
            &history,
            &fake.url,
            &["--no-stream", "--once", "hi"],
        ),
        "",
        vec![],
    )
    .await;
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    assert_eq!(stdout.trim(), "");
    assert!(
        stderr.contains(
            "warning: the model's answer is empty (the model server may have failed mid-answer)"
        ),
        "{stderr}"
    );
    let (_, stdout, _) = run(
        chat_args(
            &demo_config(),
            &history,
            &fake.url,
            &["--no-stream", "--json", "--once", "hi"],
        ),
        "",
        vec![],
    )
    .await;
    assert!(
        stdout
            .lines()
            .any(|line| line == r#"{"type":"empty_answer"}"#),
        "{stdout}"
    );
}

#[tokio::test]
async fn a_failed_tool_shows_its_cross_line_and_no_log_warning_at_the_default_level() {
    let call = r#"{"model":"qwen3:8b","message":{"role":"assistant","content":"","tool_calls":[{"function":{"name":"control_zwave_device","arguments":{"deviceName":"Turn on Switch One","action":"on"}}}]},"done":true,"done_reason":"stop","prompt_eval_count":20,"eval_count":9}"#;
    let done = r#"{"model":"qwen3:8b","message":{"role":"assistant","content":"Which device?"},"done":true,"done_reason":"stop","prompt_eval_count":40,"eval_count":5}"#;
    let fake = FakeProvider::start(vec![Reply::status(200, call), Reply::status(200, done)]).await;
    let history = scratch_file("chat-failed-tool.db");
    let (output, stdout, stderr) = run(
        chat_args(
            &demo_config(),
            &history,
            &fake.url,
            &["--no-stream", "--yes", "--once", "turn on switch one"],
        ),
        "",
        // The CLI's default level.
        vec![("MCP_CLIENT_LOG", "warn".to_owned())],
    )
    .await;
    assert_eq!(
        output.status.code(),
        Some(1),
        "a failed tool call: {stderr}"
    );
    assert_eq!(stdout, "Which device?\n");
    assert!(
        stderr
            .lines()
            .any(|l| l.starts_with("✗ control_zwave_device ")
                && l.contains("no Z-Wave device matches \"Turn on Switch One\"")),
        "{stderr}"
    );
    assert!(
        !stderr.contains("WARN"),
        "the ✗ line says it; no log warning beside it: {stderr}"
    );
}

#[tokio::test]
async fn usage_a_server_did_not_report_is_recorded_as_unknown_not_as_zero() {
    // llama.cpp's server streams no usage, even with stream_options.include_usage.
    let fake = FakeProvider::start(vec![Reply::fixture("openai/no-usage.sse", 64)]).await;
    let history = scratch_file("chat-no-usage.db");
    let mut chat = args(&[
        "chat",
        "--config",
        &demo_config().to_string_lossy(),
        "--history",
        &history.to_string_lossy(),
        "--provider",
        "openai",
        "--model",
        "smollm2",
        "--base-url",
        &format!("{}/v1", fake.url),
    ]);
    chat.extend(args(&["--json", "--once", "hi"]));
    let (output, stdout, stderr) = run(chat, "", vec![("OPENAI_API_KEY", "sk-test".into())]).await;
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    let events: Vec<serde_json::Value> = stdout
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    let of_type = |kind: &str| {
        events
            .iter()
            .find(|event| event["type"] == kind)
            .unwrap_or_else(|| panic!("no {kind} event in {stdout}"))
    };
    assert_eq!(of_type("turn_finished")["usage"], serde_json::Value::Null);
    assert_eq!(of_type("done")["usage"], serde_json::Value::Null);
    assert_eq!(of_type("done")["reason"], "completed");

    let (_, listed, _) = run(
        args(&["history", "list", "--history", &history.to_string_lossy()]),
        "",
        vec![],
    )
    .await;
    assert!(listed.contains(" messages, unknown tokens "), "{listed}");
    let id = listed.split_whitespace().next().unwrap().to_owned();
    let (_, shown, _) = run(
        args(&[
            "history",
            "show",
            &id,
            "--history",
            &history.to_string_lossy(),
        ]),
        "",
        vec![],
    )
    .await;
    assert!(
        shown.contains("outcome: completed after 1 turn, tokens unknown (the server did not say)"),
        "{shown}"
    );
}

#[tokio::test]
async fn tool_choice_is_refused_where_it_cannot_be_kept() {
    let (output, stdout, stderr) = run(
        args(&[
            "chat",
            "--no-history",
            "--provider",
            "ollama",
            "--model",
            "qwen3:8b",
            "--tool-choice",
            "control_zwave_device",
            "--once",
            "hi",
        ]),
        "",
        vec![],
    )
    .await;
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert_eq!(stdout, "");
    assert_eq!(
        stderr,
        "mcp-client: --tool-choice required or a tool's name needs --provider openai or anthropic: Ollama's API cannot make a model call a tool (use auto or none)\n"
    );
    let (output, _, stderr) = run(
        args(&["chat", "--no-history", "--tool-choice", "", "--once", "hi"]),
        "",
        vec![],
    )
    .await;
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains(
            "invalid value '' for '--tool-choice <auto|required|none|NAME>': expected auto, required, none or a tool's name (e.g. control_zwave_device)"
        ),
        "{stderr}"
    );
}

#[tokio::test]
async fn a_key_the_server_quotes_back_reaches_neither_the_output_nor_the_history() {
    let key = "sk-proj-Zq81mXw0Secret";
    let fake = FakeProvider::start(vec![Reply::status(
        401,
        &format!(r#"{{"error":{{"message":"Incorrect API key provided: {key}","type":"invalid_request_error"}}}}"#),
    )])
    .await;
    let history = scratch_file("quoted-key.db");
    let (output, stdout, stderr) = run(
        args(&[
            "chat",
            "--history",
            &history.to_string_lossy(),
            "--provider",
            "openai",
            "--model",
            "gpt-4.1-mini",
            "--json",
            "--once",
            "hi",
        ]),
        "",
        vec![
            ("OPENAI_BASE_URL", format!("{}/v1", fake.url)),
            ("OPENAI_API_KEY", key.into()),
            ("MCP_CLIENT_LOG", "debug".into()),
        ],
    )
    .await;
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert!(
        stdout.contains(r#""message":"the OpenAI-compatible server refused the request with status 401 (Incorrect API key provided: [API key]): check the key in OPENAI_API_KEY""#),
        "{stdout}"
    );
    let mut stored = std::fs::read(&history).unwrap();
    let wal = history.with_extension("db-wal");
    stored.extend(std::fs::read(&wal).unwrap_or_default());
    // The error is stored, with the key cut out.
    assert!(
        stored.windows(9).any(|w| w == b"[API key]"),
        "the outcome is not in the history"
    );
    for (place, bytes) in [
        ("stdout", stdout.as_bytes()),
        ("stderr", stderr.as_bytes()),
        ("history", &stored[..]),
    ] {
        assert!(
            !bytes.windows(key.len()).any(|w| w == key.as_bytes()),
            "the key is in {place}"
        );
    }
}

#[tokio::test]
async fn history_list_without_a_history_lists_nothing_and_creates_nothing() {
    let dir = test_support::mosquitto::ScratchDir::new();
    let path = dir.path().join("none").join("history.db");
    let (output, stdout, stderr) = run(
        args(&["history", "list", "--history", &path.to_string_lossy()]),
        "",
        vec![],
    )
    .await;
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    assert_eq!(stdout, "");
    assert_eq!(
        stderr,
        format!("no conversations yet ({} does not exist)\n", path.display())
    );
    assert!(!path.parent().unwrap().exists());
    let (output, _, stderr) = run(
        args(&["history", "show", "x", "--history", &path.to_string_lossy()]),
        "",
        vec![],
    )
    .await;
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("it does not exist"), "{stderr}");
    assert!(!path.parent().unwrap().exists());
}

/// `chat --once` asked to stop by `signal` while a tool call is running: the question is
/// cancelled (the server told), stored with the call's result, and the exit code is the
/// signal's.
async fn stopped_mid_call(signal: rustix::process::Signal, code: i32) {
    let dir = test_support::mosquitto::ScratchDir::new();
    let record = dir.path().join("record");
    let history = dir.path().join("history.db");
    let config = dir.path().join("servers.json");
    std::fs::write(
        &config,
        serde_json::json!({"mcpServers": {"fake": {
            "command": "python3",
            "args": [test_support::fixture_path("fake-servers/fake_mcp_server.py"), "clean"],
            "env": {"FAKE_RECORD": record},
        }}})
        .to_string(),
    )
    .unwrap();
    let fake = FakeProvider::start(vec![Reply::fixture("openai/hang-1.sse", 20)]).await;
    let mut child = std::process::Command::new(BIN)
        .args(["chat", "--config"])
        .arg(&config)
        .arg("--history")
        .arg(&history)
        .args(["--provider", "openai", "--model", "m", "--base-url"])
        .arg(format!("{}/v1", fake.url))
        .args(["--yes", "--once", "wait for it"])
        .env("OPENAI_API_KEY", "sk-test")
        .env("MCP_CLIENT_LOG", "off")
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Once the server is working on the call.
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    while !std::fs::read_to_string(&record)
        .unwrap_or_default()
        .contains(r#""name":"hang""#)
    {
        assert!(
            std::time::Instant::now() < deadline,
            "the call never started"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let pid = rustix::process::Pid::from_child(&child);
    rustix::process::kill_process(pid, signal).unwrap();
    let output = tokio::task::spawn_blocking(move || {
        // The grace is 3 s; well within 20.
        let deadline = std::time::Instant::now() + Duration::from_secs(20);
        while child.try_wait().unwrap().is_none() {
            assert!(std::time::Instant::now() < deadline, "chat did not stop");
            std::thread::sleep(Duration::from_millis(20));
        }
        child.wait_with_output().unwrap()
    })
    .await
    .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(code), "{stderr}");
    // The server heard the call was cancelled.
    let seen = std::fs::read_to_string(&record).unwrap();
    assert!(seen.contains("notifications/cancelled"), "{seen}");
    // The question is stored as cancelled, its call answered.
    let (_, listed, _) = run(
        args(&["history", "list", "--history", &history.to_string_lossy()]),
        "",
        vec![],
    )
    .await;
    assert!(listed.contains(" cancelled "), "{listed}");
    let id = listed.split_whitespace().next().unwrap().to_owned();
    let stored = mcp_client::history::Store::open_read_only(&history)
        .unwrap()
        .load(&id)
        .unwrap();
    let results: Vec<String> = stored
        .messages
        .iter()
        .filter_map(|(_, m)| match m {
            mcp_client::llm::Message::ToolResults { results } => {
                Some(format!("{} {}", results[0].call_id, results[0].result.text))
            }
            _ => None,
        })
        .collect();
    assert_eq!(
        results,
        ["call_hang Error: the call was cancelled before it finished"]
    );
}

#[tokio::test]
async fn ctrl_c_in_once_cancels_the_question_and_stores_it() {
    stopped_mid_call(rustix::process::Signal::INT, 130).await;
}

#[tokio::test]
async fn sigterm_cancels_the_question_and_stores_it_before_stopping() {
    stopped_mid_call(rustix::process::Signal::TERM, 143).await;
}

// Multi-threaded: the test blocks its thread waiting on the child while the fake serves.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ctrl_c_at_an_approval_prompt_leaves_the_next_line_to_the_next_question() {
    use std::io::{Read as _, Write as _};
    let fake = FakeProvider::start(vec![
        Reply::fixture("openai/dim-1.json", 50),
        Reply::fixture("openai/dim-2.json", 50),
    ])
    .await;
    let mut child = std::process::Command::new(BIN)
        .args(["chat", "--no-history", "--no-stream", "--config"])
        .arg(demo_config())
        .args(["--provider", "openai", "--model", "m", "--base-url"])
        .arg(format!("{}/v1", fake.url))
        .env("OPENAI_API_KEY", "sk-test")
        .env("MCP_CLIENT_LOG", "off")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut stderr = child.stderr.take().unwrap();
    let (shown, seen) = std::sync::mpsc::channel::<Vec<u8>>();
    std::thread::spawn(move || {
        let mut buffer = [0u8; 1024];
        while let Ok(n) = stderr.read(&mut buffer) {
            if n == 0 || shown.send(buffer[..n].to_vec()).is_err() {
                break;
            }
        }
    });
    let mut said = String::new();
    let mut wait_for = |text: &str| {
        let deadline = std::time::Instant::now() + Duration::from_secs(20);
        while !said.contains(text) {
            let left = deadline.saturating_duration_since(std::time::Instant::now());
            let chunk = seen
                .recv_timeout(left)
                .unwrap_or_else(|_| panic!("never saw {text:?} on stderr: {said}"));
            said.push_str(&String::from_utf8_lossy(&chunk));
        }
    };
    stdin
        .write_all(b"dim the living room light to 40%\n")
        .unwrap();
    wait_for("[y/N] ");
    rustix::process::kill_process(
        rustix::process::Pid::from_child(&child),
        rustix::process::Signal::INT,
    )
    .unwrap();
    wait_for("cancelled");
    // Typed after Ctrl-C: the next question, not an answer to the abandoned prompt.
    stdin.write_all(b"how is switch one?\n").unwrap();
    drop(stdin);
    let output = tokio::task::spawn_blocking(move || child.wait_with_output())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(output.status.code(), Some(0));
    let received = fake.received();
    assert_eq!(
        received.len(),
        2,
        "the second question never reached the model"
    );
    let messages = received[1].body["messages"].as_array().unwrap();
    assert_eq!(
        messages.last().unwrap(),
        &serde_json::json!({"role": "user", "content": "how is switch one?"})
    );
}

#[tokio::test]
async fn history_show_prints_no_escape_sequence_a_model_wrote() {
    use mcp_client::agent::Journal as _;
    let history = scratch_file("escapes.db");
    let store = mcp_client::history::Store::open(&history).unwrap();
    store.begin("c-esc", "openai m", "hi");
    store.message(
        "c-esc",
        1,
        &mcp_client::llm::Message::Assistant {
            text: "ok\u{1b}]52;c;ZXZpbA==\u{7} \u{1b}[8mhidden\u{9b}2J".into(),
            tool_calls: Vec::new(),
        },
    );
    store.flush().await.unwrap();
    drop(store);
    let (output, stdout, stderr) = run(
        args(&[
            "history",
            "show",
            "c-esc",
            "--history",
            &history.to_string_lossy(),
        ]),
        "",
        vec![],
    )
    .await;
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    assert!(
        !stdout.contains(['\u{1b}', '\u{7}', '\u{9b}']),
        "{stdout:?}"
    );
    assert!(
        stdout.contains("ok]52;c;ZXZpbA== [8mhidden2J"),
        "{stdout:?}"
    );
}

#[tokio::test]
async fn without_a_terminal_a_servers_question_is_declined_and_said_so() {
    let server = test_support::workspace_bin("zwave-mcp-server");
    let config = scratch_file("elicit-servers.json");
    std::fs::write(
        &config,
        serde_json::json!({"mcpServers": {"zwave": {"command": server, "args": ["--demo", "--allow-sensitive", "lock"]}}})
            .to_string(),
    )
    .unwrap();
    let fake = FakeProvider::start(vec![
        Reply::status(
            200,
            r#"{"model":"qwen3:8b","message":{"role":"assistant","content":"","tool_calls":[{"function":{"name":"control_zwave_device","arguments":{"device_name":"Front Door Lock","action":"unlock"}}}]},"done":true,"done_reason":"stop","prompt_eval_count":5,"eval_count":5}"#,
        ),
        Reply::status(
            200,
            r#"{"model":"qwen3:8b","message":{"role":"assistant","content":"It stays locked."},"done":true,"done_reason":"stop","prompt_eval_count":5,"eval_count":5}"#,
        ),
    ])
    .await;
    // --yes approves the call; the server's question is still nobody's to answer here.
    let (output, stdout, stderr) = run(
        chat_args(
            &config,
            &scratch_file("elicit.db"),
            &fake.url,
            &["--yes", "--no-stream", "--once", "unlock the front door"],
        ),
        "y\n",
        vec![],
    )
    .await;
    assert!(
        stderr.contains("mcp-client: zwave asked a question and there is no terminal to ask it on: declined (Unlock \"Front Door Lock\" (node 8, Entrance)? An AI agent asks for it (it opens the home).)"),
        "{stderr}"
    );
    assert!(
        stderr.contains("needs a person's yes, and the user declined: nothing was sent."),
        "{stderr}"
    );
    assert_eq!(stdout.trim(), "It stays locked.");
    assert_eq!(
        output.status.code(),
        Some(1),
        "a failed tool call fails the run"
    );
}

/// A whole Ollama answer (`--no-stream`) saying `text`.
fn ollama_says(text: &str) -> Reply {
    Reply::status(
        200,
        &serde_json::json!({"model": "qwen3:8b", "message": {"role": "assistant", "content": text},
            "done": true, "done_reason": "stop", "prompt_eval_count": 5, "eval_count": 2})
        .to_string(),
    )
}

/// `chat` against the fake Ollama, no servers, whole answers.
fn chat_without_servers(history: &Path, url: &str, extra: &[&str]) -> Vec<String> {
    let mut all = args(&[
        "chat",
        "--history",
        &history.to_string_lossy(),
        "--provider",
        "ollama",
        "--model",
        "qwen3:8b",
        "--base-url",
        url,
        "--no-stream",
    ]);
    all.extend(args(extra));
    all
}

/// The id of the only conversation in `history`.
fn only_conversation(history: &Path) -> String {
    let listed = mcp_client::history::Store::open_read_only(history)
        .unwrap()
        .list()
        .unwrap();
    assert_eq!(listed.len(), 1, "{listed:?}");
    listed[0].id.clone()
}

// Multi-threaded: the chats are waited for on blocking threads while the fake serves.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn six_chats_resuming_one_conversation_at_once_never_garble_it() {
    use mcp_client::llm::Message;
    let dir = test_support::mosquitto::ScratchDir::new();
    let history = dir.path().join("history.db");
    let config = dir.path().join("servers.json");
    std::fs::write(
        &config,
        serde_json::json!({"mcpServers": {"fake": {
            "command": "python3",
            "args": [test_support::fixture_path("fake-servers/fake_mcp_server.py"), "clean"],
        }}})
        .to_string(),
    )
    .unwrap();
    // Each question: a call `c0` of a tool that takes 2 s (the chat holds the conversation
    // meanwhile), then an answer.
    let slow_call = Reply::status(
        200,
        &serde_json::json!({"model": "qwen3:8b", "message": {"role": "assistant", "content": "",
            "tool_calls": [{"id": "c0", "function": {"name": "slow", "arguments": {"seconds": 2}}}]},
            "done": true, "done_reason": "stop", "prompt_eval_count": 5, "eval_count": 2})
        .to_string(),
    );
    let replies = (0..7)
        .flat_map(|_| [slow_call.clone(), ollama_says("Done.")])
        .collect();
    let fake = FakeProvider::start(replies).await;
    let chat = |extra: &[&str]| {
        let mut all = args(&[
            "chat",
            "--config",
            &config.to_string_lossy(),
            "--history",
            &history.to_string_lossy(),
            "--provider",
            "ollama",
            "--model",
            "qwen3:8b",
            "--base-url",
            &fake.url,
            "--no-stream",
            "--yes",
        ]);
        all.extend(args(extra));
        all
    };
    let (output, _, stderr) = run(chat(&["--once", "wait a little"]), "", vec![]).await;
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    let id = only_conversation(&history);

    let commands: Vec<Vec<String>> = (0..6)
        .map(|n| chat(&["--resume", &id, "--once", &format!("again {n}")]))
        .collect();
    let outputs = tokio::task::spawn_blocking(move || {
        std::thread::scope(|scope| {
            let chats: Vec<_> = commands
                .iter()
                .map(|command| {
                    scope.spawn(move || {
                        test_support::child::run(
                            std::process::Command::new(BIN)
                                .args(command)
                                .env_remove("MCP_CLIENT_PROVIDER")
                                .env_remove("MCP_CLIENT_MODEL")
                                .env_remove("OLLAMA_HOST")
                                .env("MCP_CLIENT_LOG", "off"),
                            b"",
                            Duration::from_secs(120),
                        )
                    })
                })
                .collect();
            chats
                .into_iter()
                .map(|chat| chat.join().unwrap())
                .collect::<Vec<_>>()
        })
    })
    .await
    .unwrap();
    let (mut answered, mut refused) = (0, 0);
    for output in &outputs {
        let stderr = String::from_utf8_lossy(&output.stderr);
        match output.status.code() {
            Some(0) => answered += 1,
            Some(2)
                if stderr.starts_with(&format!(
                    "mcp-client: conversation `{id}` is open in another chat (process "
                )) && stderr.contains(" on this machine, since ") =>
            {
                refused += 1;
            }
            other => panic!("exit {other:?}: {stderr}"),
        }
    }
    assert!(answered >= 1, "{answered} answered, {refused} refused");
    // Every question answered is stored whole, one after another: its question, its call,
    // that call's result, its answer; each call id once.
    let stored = mcp_client::history::Store::open_read_only(&history)
        .unwrap()
        .load(&id)
        .unwrap();
    assert_eq!(stored.outcomes.len(), 1 + answered);
    assert_eq!(stored.messages.len(), 4 * (1 + answered), "{stored:#?}");
    let mut ids = Vec::new();
    for question in stored.messages.chunks(4) {
        let [
            (_, Message::User { .. }),
            (_, Message::Assistant { tool_calls, .. }),
            (_, Message::ToolResults { results }),
            (_, Message::Assistant { text, .. }),
        ] = question
        else {
            panic!("not a whole question: {question:#?}");
        };
        assert_eq!(tool_calls.len(), 1);
        assert_eq!(results.len(), 1);
        assert_eq!(results[0].call_id, tool_calls[0].id);
        assert!(!results[0].result.is_error, "{results:?}");
        assert_eq!(text, "Done.");
        ids.push(tool_calls[0].id.clone());
    }
    let expected: Vec<String> = std::iter::once("c0".to_owned())
        .chain((2..=answered + 1).map(|n| format!("c0_{n}")))
        .collect();
    assert_eq!(ids, expected);
    // The first to claim it held it for seconds: the others, started with it, were refused.
    assert!(refused >= 1, "{answered} answered, {refused} refused");
}

// Multi-threaded: the test blocks its thread on the holder's output while the fake serves.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_conversation_open_in_a_chat_is_refused_to_another_until_that_chat_is_gone() {
    use std::io::BufRead as _;
    let fake = FakeProvider::start(vec![ollama_says("First."), ollama_says("Second.")]).await;
    let history = scratch_file("held.db");
    let (output, _, stderr) = run(
        chat_without_servers(&history, &fake.url, &["--once", "hello"]),
        "",
        vec![],
    )
    .await;
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    let id = only_conversation(&history);
    // A chat that resumed it and waits for a question.
    let mut holder = std::process::Command::new(BIN)
        .args(chat_without_servers(
            &history,
            &fake.url,
            &["--resume", &id],
        ))
        .env("MCP_CLIENT_LOG", "off")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let said = holder.stderr.take().unwrap();
    let (first_line, line) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut line = String::new();
        let _ = std::io::BufReader::new(said).read_line(&mut line);
        let _ = first_line.send(line);
    });
    let line = line.recv_timeout(Duration::from_secs(30));
    if line.is_err() {
        let _ = holder.kill();
    }
    assert_eq!(
        line.as_deref(),
        Ok(format!("resumed conversation {id}: 2 messages\n").as_str())
    );

    let pid = holder.id();
    let (output, stdout, stderr) = run(
        chat_without_servers(&history, &fake.url, &["--resume", &id, "--once", "me too"]),
        "",
        vec![],
    )
    .await;
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert_eq!(stdout, "");
    assert!(
        stderr.starts_with(&format!(
            "mcp-client: conversation `{id}` is open in another chat (process {pid} on this machine, since "
        )),
        "{stderr}"
    );
    assert!(
        stderr.ends_with(&format!(
            "End that chat first (Ctrl-D in that chat, or `kill {pid}`), or leave out --resume to start a new conversation\n"
        )),
        "{stderr}"
    );
    assert_eq!(fake.received().len(), 1, "the refused chat asked nothing");

    // The holder dies without giving it up: the next chat takes it over at once.
    holder.kill().unwrap();
    holder.wait().unwrap();
    let (output, stdout, stderr) = run(
        chat_without_servers(&history, &fake.url, &["--resume", &id, "--once", "me too"]),
        "",
        vec![],
    )
    .await;
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    assert_eq!(stdout, "Second.\n");
    assert_eq!(stderr, format!("resumed conversation {id}: 2 messages\n"));
    let sent = &fake.bodies()[1]["messages"];
    assert_eq!(sent.as_array().unwrap().len(), 3, "{sent}");
}

#[tokio::test]
async fn a_turn_that_cannot_be_stored_is_a_failure_that_says_where_and_what_to_do() {
    let fake = FakeProvider::start(vec![
        ollama_says("Hello."),
        ollama_says("Hello."),
        ollama_says("Hello."),
        ollama_says("Hello."),
    ])
    .await;
    let history = scratch_file("damaged-chat.db");
    let (output, _, stderr) = run(
        chat_without_servers(&history, &fake.url, &["--once", "hi"]),
        "",
        vec![],
    )
    .await;
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    // Page 2 (the root of the conversations table) overwritten.
    let mut bytes = std::fs::read(&history).unwrap();
    bytes[4096..4096 + 64].fill(0xff);
    std::fs::write(&history, bytes).unwrap();
    let notice = format!(
        "mcp-client: this conversation was not saved to the history database {history:?} (database disk image is malformed): the file is damaged; move it aside together with its -wal and -shm files, if any, and the next chat starts a new history there (`sqlite3 FILE .recover` may rescue what it held), or chat with --no-history\n"
    );
    // --once: the answer is shown, and the run fails; the default log level adds nothing.
    let (output, stdout, stderr) = run(
        chat_without_servers(&history, &fake.url, &["--once", "hi"]),
        "",
        vec![("MCP_CLIENT_LOG", "warn".to_owned())],
    )
    .await;
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert_eq!(stdout, "Hello.\n");
    assert_eq!(stderr, notice);
    // Interactive: the notice after each answer that could not be stored.
    let (output, stdout, stderr) = run(
        chat_without_servers(&history, &fake.url, &[]),
        "hi\nand again\n",
        vec![("MCP_CLIENT_LOG", "warn".to_owned())],
    )
    .await;
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    assert_eq!(stdout, "Hello.\nHello.\n");
    assert_eq!(stderr, format!("{notice}{notice}"));
}

/// Makes a folder read-only for the binary, root included (root ignores permission bits):
/// `chattr +i` where the file system and capabilities allow it, else the binary runs as
/// `nobody` with the folder 0555. Undone when dropped.
enum ReadOnly {
    Bits(std::path::PathBuf),
    Immutable(std::path::PathBuf),
    Nobody(std::path::PathBuf),
}

impl ReadOnly {
    fn make(dir: &Path) -> Self {
        use std::os::unix::fs::PermissionsExt as _;
        let mode = |path: &Path, mode| {
            std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
        };
        if !rustix::process::geteuid().is_root() {
            mode(dir, 0o555);
            return Self::Bits(dir.to_owned());
        }
        if std::process::Command::new("chattr")
            .arg("+i")
            .arg(dir)
            .stderr(std::process::Stdio::null())
            .status()
            .is_ok_and(|status| status.success())
        {
            return Self::Immutable(dir.to_owned());
        }
        for entry in std::fs::read_dir(dir).unwrap() {
            mode(&entry.unwrap().path(), 0o644);
        }
        mode(dir, 0o555);
        Self::Nobody(dir.to_owned())
    }

    fn history(&self, list: &[&str]) -> (Option<i32>, String, String) {
        use std::os::unix::process::CommandExt as _;
        let mut command = std::process::Command::new(BIN);
        command.args(list).env("MCP_CLIENT_LOG", "off");
        if let Self::Nobody(_) = self {
            command.uid(65534).gid(65534);
        }
        let output = test_support::child::run(&mut command, b"", Duration::from_secs(60));
        (
            output.status.code(),
            String::from_utf8(output.stdout).unwrap(),
            String::from_utf8(output.stderr).unwrap(),
        )
    }
}

impl Drop for ReadOnly {
    fn drop(&mut self) {
        use std::os::unix::fs::PermissionsExt as _;
        match self {
            Self::Immutable(dir) => {
                let _ = std::process::Command::new("chattr")
                    .arg("-i")
                    .arg(dir)
                    .status();
            }
            Self::Bits(dir) | Self::Nobody(dir) => {
                let _ = std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o755));
            }
        }
    }
}

#[tokio::test]
async fn history_reads_a_database_in_a_folder_it_cannot_write() {
    use mcp_client::{agent::Journal as _, llm::Message};
    let dir = test_support::mosquitto::ScratchDir::new();
    let history = dir.path().join("history.db");
    let store = mcp_client::history::Store::open(&history).unwrap();
    store.begin("c-media", "ollama qwen3:8b", "what is on?");
    store.message("c-media", 0, &Message::user("what is on?"));
    store.flush().await.unwrap();
    drop(store);
    let barrier = ReadOnly::make(dir.path());
    let path = history.to_string_lossy().into_owned();
    let (code, stdout, stderr) = barrier.history(&["history", "list", "--history", &path]);
    assert_eq!(code, Some(0), "{stderr}");
    assert!(stdout.starts_with("c-media  "), "{stdout}");
    assert!(
        stdout.ends_with("  unfinished            1 messages, 0 tokens  what is on?\n"),
        "{stdout}"
    );
    let (code, stdout, stderr) =
        barrier.history(&["history", "show", "c-media", "--history", &path]);
    assert_eq!(code, Some(0), "{stderr}");
    assert!(stdout.ends_with("\nuser: what is on?\n"), "{stdout}");
    drop(barrier);

    // Its newest part still in a -wal file (the chat writing it was killed, and the files were
    // copied as they were): unreadable without writing beside it, and said so.
    let copy = test_support::mosquitto::ScratchDir::new();
    let store = mcp_client::history::Store::open(&history).unwrap();
    store.begin("c-newer", "ollama qwen3:8b", "and now?");
    store.flush().await.unwrap();
    let wal = dir.path().join("history.db-wal");
    assert!(std::fs::metadata(&wal).unwrap().len() > 0);
    std::fs::copy(&history, copy.path().join("history.db")).unwrap();
    std::fs::copy(&wal, copy.path().join("history.db-wal")).unwrap();
    drop(store);
    let barrier = ReadOnly::make(copy.path());
    let copied = copy.path().join("history.db");
    let (code, _, stderr) =
        barrier.history(&["history", "list", "--history", &copied.to_string_lossy()]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(
        stderr.contains(&format!(
            "its folder cannot be written, and its newest part is still in {:?}",
            copy.path().join("history.db-wal")
        )),
        "{stderr}"
    );
    assert!(
        stderr.contains("copy the database and its -wal file into a folder you can write, and give the copy with --history"),
        "{stderr}"
    );
}

#[tokio::test]
async fn history_shows_each_outcome_after_its_question_and_a_resumed_chat_says_what_it_loaded() {
    let fake = FakeProvider::start(vec![ollama_says("First."), ollama_says("Second.")]).await;
    let history = scratch_file("order.db");
    let (output, _, stderr) = run(
        chat_without_servers(&history, &fake.url, &["--once", "one"]),
        "",
        vec![],
    )
    .await;
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    let id = only_conversation(&history);
    let (output, _, stderr) = run(
        chat_without_servers(&history, &fake.url, &["--resume", &id, "--once", "two"]),
        "",
        vec![],
    )
    .await;
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    assert_eq!(stderr, format!("resumed conversation {id}: 2 messages\n"));
    let (output, shown, stderr) = run(
        args(&[
            "history",
            "show",
            &id,
            "--history",
            &history.to_string_lossy(),
        ]),
        "",
        vec![],
    )
    .await;
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    let lines: Vec<&str> = shown.lines().skip(1).collect();
    assert_eq!(
        lines,
        [
            "user: one",
            "assistant (turn 1): First.",
            "outcome: completed after 1 turn, 5 tokens in, 2 out",
            "user: two",
            "assistant (turn 1): Second.",
            "outcome: completed after 1 turn, 5 tokens in, 2 out",
        ]
    );
    let (_, help, _) = run(args(&["history", "--help"]), "", vec![]).await;
    assert!(
        help.contains(
            "One line per conversation, newest first: id, start, outcome, messages, tokens, title"
        ),
        "{help}"
    );
}

#[tokio::test]
async fn json_names_a_conversation_only_when_it_is_stored() {
    let fake = FakeProvider::start(vec![ollama_says("Hi."), ollama_says("Hi.")]).await;
    let done = |stdout: &str| -> serde_json::Value {
        serde_json::from_str(stdout.lines().last().unwrap()).unwrap()
    };
    let (output, stdout, stderr) = run(
        args(&[
            "chat",
            "--no-history",
            "--provider",
            "ollama",
            "--model",
            "qwen3:8b",
            "--base-url",
            &fake.url,
            "--no-stream",
            "--json",
            "--once",
            "hi",
        ]),
        "",
        vec![],
    )
    .await;
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    assert_eq!(
        stdout.lines().last().unwrap(),
        r#"{"type":"done","reason":"completed","turns":1,"usage":{"input_tokens":5,"output_tokens":2},"conversation_id":null}"#
    );
    let history = scratch_file("json-id.db");
    let (output, stdout, stderr) = run(
        chat_without_servers(&history, &fake.url, &["--json", "--once", "hi"]),
        "",
        vec![],
    )
    .await;
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    assert_eq!(
        done(&stdout)["conversation_id"],
        only_conversation(&history)
    );
}
