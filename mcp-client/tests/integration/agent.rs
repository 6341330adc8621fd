//! The agent end to end: a fake provider on loopback replaying recorded responses, the real
//! `zwave-mcp-server --demo` (or a fake MCP server) running the tools, and assertions on the
//! request bodies the provider received, the events, the conversation and the device state.

use std::{
    sync::{Arc, Mutex},
    time::{Duration, Instant},
};

use mcp_client::{
    McpTools, ServerCommand, ServerConfig, ServerPool,
    agent::{Agent, AgentEvent, AgentOptions, Approver, Conversation, DoneReason, EventSink},
    connection::RetryPolicy,
    llm::{Dialect, HttpProvider, Message, ProviderConfig},
    tools::{
        ToolCall, definition::ToolDefinition, executor::ToolExecutor, manager::ToolManager,
        results::for_model,
    },
};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use crate::{
    fake_provider::{FakeProvider, Reply},
    harness::{self, fixture_path},
};

const QUESTION: &str = "dim the living room light to 40%";

/// `target/<profile>/<name>`, built by the README's test command before the tests run.
fn workspace_bin(name: &str) -> std::path::PathBuf {
    let exe = std::env::current_exe().unwrap();
    let path = exe.parent().unwrap().parent().unwrap().join(name);
    assert!(
        path.is_file(),
        "{} is missing: run `cargo build --workspace --bins` first",
        path.display()
    );
    path
}

/// An executor over `configs`' servers, as a host builds it.
async fn host(configs: Vec<ServerConfig>) -> (ToolExecutor, ServerPool) {
    let pool = ServerPool::new(configs);
    let report = pool.connect_all().await;
    assert!(report.failed.is_empty(), "{report:?}");
    let mut manager = ToolManager::new();
    manager.add_mcp(&McpTools::discover(&pool).await);
    let normalizer = McpTools::normalizer(&pool);
    (
        ToolExecutor::new(manager).with_mcp(pool.clone(), normalizer),
        pool,
    )
}

async fn demo_home() -> (ToolExecutor, ServerPool) {
    let mut config = ServerConfig::new(ServerCommand::new(
        "zwave",
        workspace_bin("zwave-mcp-server").to_string_lossy(),
        ["--demo"],
    ));
    config.retry = RetryPolicy {
        attempts: 1,
        base_delay: Duration::ZERO,
    };
    host(vec![config]).await
}

fn provider(dialect: Dialect, fake: &FakeProvider, stream: bool) -> Arc<HttpProvider> {
    let mut config = fake.provider_config(dialect);
    config.stream = stream;
    Arc::new(HttpProvider::new(config).unwrap())
}

/// Every event, kept.
fn recorder() -> (EventSink, Arc<Mutex<Vec<AgentEvent>>>) {
    let events = Arc::new(Mutex::new(Vec::new()));
    let kept = Arc::clone(&events);
    (
        Arc::new(move |event| kept.lock().unwrap().push(event)),
        events,
    )
}

/// The text `get_device_status` gives for `device`.
async fn status(executor: &ToolExecutor, device: &str) -> String {
    let outcome = executor
        .execute("get_device_status", json!({"deviceName": device}))
        .await;
    for_model(&outcome, None).text
}

/// The Z-Wave tools as the provider's request lists them.
fn tool_names(dialect: Dialect, body: &Value) -> Vec<String> {
    body["tools"]
        .as_array()
        .map(|tools| {
            tools
                .iter()
                .map(|tool| match dialect {
                    Dialect::Anthropic => tool["name"].as_str().unwrap().to_owned(),
                    _ => tool["function"]["name"].as_str().unwrap().to_owned(),
                })
                .collect()
        })
        .unwrap_or_default()
}

/// "dim the living room light to 40%": the model calls `control_zwave_device` with spec 003's
/// snake_case names, the client normalizes them, the demo light really dims, the result goes
/// back in the provider's format, and the model answers.
async fn dims_the_light(dialect: Dialect, turns: [Reply; 2], stream: bool) {
    let fake = FakeProvider::start(turns.to_vec()).await;
    let (executor, pool) = demo_home().await;
    assert!(status(&executor, "Living Room Light").await.contains("off"));
    let agent = Agent::new(provider(dialect, &fake, stream), executor.clone());
    let (sink, events) = recorder();
    let mut conversation = Conversation::new();
    let answer = agent
        .ask(
            &mut conversation,
            QUESTION,
            &sink,
            &CancellationToken::new(),
        )
        .await;
    assert_eq!(answer.reason, DoneReason::Completed, "{answer:?}");
    assert!(
        answer
            .text
            .ends_with("The Living Room Light is now dimmed to 40%."),
        "{}",
        answer.text
    );
    assert_eq!(answer.turns, 2);
    assert!(answer.usage.input_tokens > 0 && answer.usage.output_tokens > 0);
    let now = status(&executor, "Living Room Light").await;
    assert!(now.contains("40%"), "{now}");

    let received = fake.received();
    assert_eq!(received.len(), 2);
    let path = match dialect {
        Dialect::Ollama => "/api/chat",
        Dialect::OpenAi => "/v1/chat/completions",
        Dialect::Anthropic => "/v1/messages",
    };
    assert!(received.iter().all(|r| r.path == path));
    let (first, second) = (&received[0].body, &received[1].body);
    assert_eq!(first["model"], "test-model");
    assert_eq!(first["stream"], stream);
    assert_eq!(
        tool_names(dialect, first),
        [
            "control_zwave_device",
            "get_device_sensor_data",
            "get_device_status",
            "list_zwave_devices"
        ]
    );
    let result = &answer.tool_results[0];
    assert!(!result.result.is_error, "{result:?}");
    assert!(
        result
            .result
            .text
            .starts_with("Living Room Light dimmed to 40%"),
        "{}",
        result.result.text
    );
    let call = &answer.tool_calls[0];
    assert_eq!(
        call.args,
        json!({"device_name": "Living Room Light", "action": "dim", "brightness": 40})
    );
    match dialect {
        Dialect::Ollama => {
            let messages = second["messages"].as_array().unwrap();
            assert_eq!(messages[0], json!({"role": "user", "content": QUESTION}));
            assert_eq!(
                messages[1]["tool_calls"][0],
                json!({"id": "call_8k2xq1", "function": {"name": "control_zwave_device", "arguments": call.args}})
            );
            assert_eq!(
                messages[2],
                json!({"role": "tool", "tool_name": "control_zwave_device", "tool_call_id": "call_8k2xq1", "content": result.result.text})
            );
        }
        Dialect::OpenAi => {
            let messages = second["messages"].as_array().unwrap();
            assert_eq!(messages[1]["role"], "assistant");
            assert_eq!(messages[1]["content"], Value::Null);
            assert_eq!(messages[1]["tool_calls"][0]["id"], "call_Qm2aX9");
            let arguments: Value = serde_json::from_str(
                messages[1]["tool_calls"][0]["function"]["arguments"]
                    .as_str()
                    .unwrap(),
            )
            .unwrap();
            assert_eq!(arguments, call.args);
            assert_eq!(
                messages[2],
                json!({"role": "tool", "tool_call_id": "call_Qm2aX9", "content": result.result.text})
            );
            if stream {
                assert_eq!(first["stream_options"], json!({"include_usage": true}));
            }
            assert_eq!(
                received[0].headers["authorization"],
                "Bearer sk-test-key-123"
            );
        }
        Dialect::Anthropic => {
            assert_eq!(first["max_tokens"], 4096);
            let messages = second["messages"].as_array().unwrap();
            assert_eq!(
                messages[1],
                json!({"role": "assistant", "content": [
                    {"type": "text", "text": "I'll dim it."},
                    {"type": "tool_use", "id": "toolu_01Xa9", "name": "control_zwave_device", "input": call.args}
                ]})
            );
            assert_eq!(
                messages[2],
                json!({"role": "user", "content": [
                    {"type": "tool_result", "tool_use_id": "toolu_01Xa9", "content": result.result.text}
                ]})
            );
            assert_eq!(received[0].headers["x-api-key"], "sk-test-key-123");
            assert_eq!(received[0].headers["anthropic-version"], "2023-06-01");
        }
    }
    // The events a host renders: text as it came, the call, its result with its duration.
    let events = events.lock().unwrap().clone();
    let streamed: String = events
        .iter()
        .filter_map(|e| match e {
            AgentEvent::TextDelta { text } => Some(text.as_str()),
            _ => None,
        })
        .collect();
    assert!(streamed.ends_with("The Living Room Light is now dimmed to 40%."));
    assert!(
        events.iter().any(
            |e| matches!(e, AgentEvent::ToolCall { name, .. } if name == "control_zwave_device")
        )
    );
    assert!(
        events
            .iter()
            .any(|e| matches!(e, AgentEvent::ToolResult { success: true, .. }))
    );
    assert!(matches!(
        events.last(),
        Some(AgentEvent::Done {
            reason: DoneReason::Completed,
            turns: 2,
            ..
        })
    ));
    pool.shutdown().await;
}

#[tokio::test]
async fn ollama_dims_the_light_streamed_in_small_chunks() {
    dims_the_light(
        Dialect::Ollama,
        [
            Reply::fixture("ollama/dim-1.ndjson", 7),
            Reply::fixture("ollama/dim-2.ndjson", 5),
        ],
        true,
    )
    .await;
}

#[tokio::test]
async fn ollama_dims_the_light_without_streaming() {
    dims_the_light(
        Dialect::Ollama,
        [
            Reply::fixture("ollama/dim-1.json", 64),
            Reply::fixture("ollama/dim-2.json", 64),
        ],
        false,
    )
    .await;
}

#[tokio::test]
async fn openai_dims_the_light_streamed_with_crlf_and_split_events() {
    dims_the_light(
        Dialect::OpenAi,
        [
            Reply::fixture("openai/dim-1.sse", 3).crlf(),
            Reply::fixture("openai/dim-2.sse", 11),
        ],
        true,
    )
    .await;
}

#[tokio::test]
async fn openai_dims_the_light_without_streaming() {
    dims_the_light(
        Dialect::OpenAi,
        [
            Reply::fixture("openai/dim-1.json", 50),
            Reply::fixture("openai/dim-2.json", 50),
        ],
        false,
    )
    .await;
}

#[tokio::test]
async fn anthropic_dims_the_light_streamed_with_split_events() {
    dims_the_light(
        Dialect::Anthropic,
        [
            Reply::fixture("anthropic/dim-1.sse", 9),
            Reply::fixture("anthropic/dim-2.sse", 4).crlf(),
        ],
        true,
    )
    .await;
}

#[tokio::test]
async fn anthropic_dims_the_light_without_streaming() {
    dims_the_light(
        Dialect::Anthropic,
        [
            Reply::fixture("anthropic/dim-1.json", 40),
            Reply::fixture("anthropic/dim-2.json", 40),
        ],
        false,
    )
    .await;
}

#[tokio::test]
async fn a_failing_call_goes_back_as_an_error_and_the_model_recovers() {
    let fake = FakeProvider::start(vec![
        Reply::fixture("openai/two-calls-1.sse", 13),
        Reply::fixture("openai/two-calls-2.sse", 13),
    ])
    .await;
    let (executor, pool) = demo_home().await;
    let answer = Agent::new(provider(Dialect::OpenAi, &fake, true), executor)
        .run("is switch one on, and turn on the attic fan")
        .await;
    assert_eq!(answer.reason, DoneReason::Completed);
    assert_eq!(
        answer.text,
        "Switch One is off. There is no device called Attic Fan."
    );
    let messages = fake.bodies()[1]["messages"].as_array().unwrap().clone();
    // One result per call id, in call order; the failure is readable, prefixed `Error:`.
    assert_eq!(messages[2]["tool_call_id"], "call_st1");
    assert!(
        !messages[2]["content"]
            .as_str()
            .unwrap()
            .starts_with("Error:")
    );
    assert_eq!(messages[3]["tool_call_id"], "call_fan");
    let failure = messages[3]["content"].as_str().unwrap();
    assert!(
        failure.starts_with("Error: no Z-Wave device matches \"Attic Fan\""),
        "{failure}"
    );
    assert_eq!(messages.len(), 4);
    pool.shutdown().await;
}

fn fake_server(record: Option<&std::path::Path>) -> ServerConfig {
    let mut config = harness::fake("fake", &["clean"]);
    if let Some(path) = record {
        config
            .command
            .env
            .insert("FAKE_RECORD".into(), path.to_string_lossy().into_owned());
    }
    config
}

#[tokio::test]
async fn two_calls_of_one_turn_run_at_the_same_time() {
    // Each call waits at a barrier that opens only when both are running: run one after the
    // other, the first would time out.
    let turn = r#"data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"a","function":{"name":"meet","arguments":"{}"}},{"index":1,"id":"b","function":{"name":"meet","arguments":"{}"}}]},"finish_reason":"tool_calls"}]}

data: [DONE]

"#;
    let done = "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"both met\"},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n";
    let fake = FakeProvider::start(vec![
        Reply::status(200, turn).header("content-type", "text/event-stream"),
        Reply::status(200, done).header("content-type", "text/event-stream"),
    ])
    .await;
    let mut manager = ToolManager::new();
    manager
        .add(
            mcp_client::tools::definition::parse(
                r#"{"name": "meet", "description": "waits for the other call", "timeout": "10s",
                    "implementation": {"type": "internal", "handler": "meet"},
                    "annotations": {"readOnlyHint": true}}"#,
            )
            .unwrap()
            .remove(0),
        )
        .unwrap();
    let barrier = Arc::new(tokio::sync::Barrier::new(2));
    let executor = ToolExecutor::new(manager).with_internal(
        "meet",
        Arc::new(move |_| {
            let barrier = Arc::clone(&barrier);
            Box::pin(async move {
                barrier.wait().await;
                Ok(json!("met"))
            })
        }),
    );
    let answer = Agent::new(provider(Dialect::OpenAi, &fake, true), executor)
        .run("meet twice")
        .await;
    assert_eq!(answer.text, "both met");
    let texts: Vec<&str> = answer
        .tool_results
        .iter()
        .map(|r| r.result.text.as_str())
        .collect();
    assert_eq!(texts, ["met", "met"]);
}

#[tokio::test]
async fn max_turns_ends_the_loop_with_every_call_answered() {
    let fake = FakeProvider::start(vec![
        Reply::fixture("ollama/dim-1.ndjson", 100),
        Reply::fixture("ollama/dim-1.ndjson", 100),
        Reply::fixture("ollama/dim-1.ndjson", 100),
    ])
    .await;
    let (executor, pool) = demo_home().await;
    let agent =
        Agent::new(provider(Dialect::Ollama, &fake, true), executor).with_options(AgentOptions {
            max_turns: 2,
            ..AgentOptions::default()
        });
    let mut conversation = Conversation::new();
    let (sink, events) = recorder();
    let answer = agent
        .ask(
            &mut conversation,
            QUESTION,
            &sink,
            &CancellationToken::new(),
        )
        .await;
    assert_eq!(answer.reason, DoneReason::MaxTurnsReached);
    assert_eq!(fake.received().len(), 2);
    assert_eq!(answer.tool_calls.len(), 2);
    assert_eq!(answer.tool_results.len(), 2);
    let roles: Vec<&str> = conversation
        .messages
        .iter()
        .map(|m| match m {
            Message::System { .. } => "system",
            Message::User { .. } => "user",
            Message::Assistant { .. } => "assistant",
            Message::ToolResults { .. } => "results",
        })
        .collect();
    assert_eq!(
        roles,
        ["user", "assistant", "results", "assistant", "results"]
    );
    assert!(matches!(
        events.lock().unwrap().last(),
        Some(AgentEvent::Done {
            reason: DoneReason::MaxTurnsReached,
            turns: 2,
            ..
        })
    ));
    pool.shutdown().await;
}

#[tokio::test]
async fn arguments_that_are_not_json_get_an_error_result_and_are_not_run() {
    let fake = FakeProvider::start(vec![
        Reply::fixture("openai/bad-args-1.sse", 17),
        Reply::fixture("openai/bad-args-2.sse", 17),
    ])
    .await;
    let (executor, pool) = demo_home().await;
    let answer = Agent::new(provider(Dialect::OpenAi, &fake, true), executor)
        .run("status of switch one")
        .await;
    assert_eq!(answer.reason, DoneReason::Completed);
    let second = &fake.bodies()[1];
    // The broken arguments go back exactly as the model wrote them, with the error after.
    assert_eq!(
        second["messages"][1]["tool_calls"][0]["function"]["arguments"],
        r#"{"deviceName": "Switch One""#
    );
    assert_eq!(
        second["messages"][2]["content"],
        "Error: the arguments are not valid JSON (EOF while parsing an object at line 1 column 27); call `get_device_status` again with a JSON object of arguments"
    );
    pool.shutdown().await;
}

#[tokio::test]
async fn rate_limits_are_retried_after_the_wait_the_provider_asks_for() {
    harness::capture_logs();
    let fake = FakeProvider::start(vec![
        Reply::status(429, r#"{"error":"too many requests"}"#).header("retry-after-ms", "20"),
        Reply::status(503, r#"{"error":"loading model"}"#),
        Reply::fixture("ollama/dim-1.ndjson", 100),
        Reply::fixture("ollama/dim-2.ndjson", 100),
    ])
    .await;
    let (executor, pool) = demo_home().await;
    let answer = Agent::new(provider(Dialect::Ollama, &fake, true), executor)
        .run(QUESTION)
        .await;
    assert_eq!(answer.reason, DoneReason::Completed, "{answer:?}");
    assert_eq!(fake.received().len(), 4);
    let logs = harness::all_logs();
    assert!(
        logs.iter()
            .any(|l| l.contains("model request failed; retrying")
                && l.contains("wait=20ms")
                && l.contains("Ollama is rate limiting (status 429: too many requests)"))
    );
    pool.shutdown().await;
}

#[tokio::test]
async fn retries_stop_with_a_clear_error() {
    let fake = FakeProvider::start(vec![
        Reply::status(500, r#"{"error":{"message":"overloaded"}}"#),
        Reply::status(500, r#"{"error":{"message":"overloaded"}}"#),
    ])
    .await;
    let mut config = ProviderConfig::new(Dialect::OpenAi, "m");
    config.base_url = format!("{}/v1", fake.url);
    config.http.retry = RetryPolicy {
        attempts: 2,
        base_delay: Duration::from_millis(1),
    };
    let answer = Agent::new(
        Arc::new(HttpProvider::new(config).unwrap()),
        ToolExecutor::new(ToolManager::new()),
    )
    .run("hi")
    .await;
    assert_eq!(answer.reason, DoneReason::Error);
    assert_eq!(
        answer.error.as_deref(),
        Some(
            "the OpenAI-compatible server failed with status 500 (overloaded); gave up after 2 attempts"
        )
    );
}

#[tokio::test]
async fn a_refused_key_names_the_variable_and_never_shows_the_key() {
    let fake = FakeProvider::start(vec![Reply::status(
        401,
        r#"{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}}"#,
    )])
    .await;
    let answer = Agent::new(
        provider(Dialect::Anthropic, &fake, true),
        ToolExecutor::new(ToolManager::new()),
    )
    .run("hi")
    .await;
    assert_eq!(answer.reason, DoneReason::Error);
    let error = answer.error.unwrap();
    assert_eq!(
        error,
        "Anthropic refused the request with status 401 (invalid x-api-key): check the key in ANTHROPIC_API_KEY"
    );
    assert!(!error.contains("sk-test"));
}

#[tokio::test]
async fn a_missing_model_and_a_dead_address_say_what_to_do() {
    let fake = FakeProvider::start(vec![Reply::status(
        404,
        r#"{"error":"model \"test-model\" not found, try pulling it first"}"#,
    )])
    .await;
    let answer = Agent::new(
        provider(Dialect::Ollama, &fake, true),
        ToolExecutor::new(ToolManager::new()),
    )
    .run("hi")
    .await;
    assert_eq!(
        answer.error.as_deref(),
        Some(
            "Ollama has no model `test-model` (model \"test-model\" not found, try pulling it first): pull it with `ollama pull test-model`"
        )
    );
    // A port nobody listens on.
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = closed.local_addr().unwrap().port();
    drop(closed);
    let mut config = ProviderConfig::new(Dialect::Ollama, "qwen3");
    config.base_url = format!("127.0.0.1:{port}");
    let answer = Agent::new(
        Arc::new(HttpProvider::new(config).unwrap()),
        ToolExecutor::new(ToolManager::new()),
    )
    .run("hi")
    .await;
    let error = answer.error.unwrap();
    assert!(
        error.starts_with(&format!(
            "cannot reach Ollama at http://127.0.0.1:{port}/api/chat ("
        )),
        "{error}"
    );
    assert!(
        error.ends_with(&format!("): is Ollama running at http://127.0.0.1:{port}? (start it with `ollama serve`, or set OLLAMA_HOST)")),
        "{error}"
    );
}

#[tokio::test]
async fn a_stream_cut_mid_message_is_an_error_that_keeps_the_text_so_far() {
    let fake = FakeProvider::start(vec![Reply::fixture("ollama/cut.ndjson", 10)]).await;
    let agent = Agent::new(
        provider(Dialect::Ollama, &fake, true),
        ToolExecutor::new(ToolManager::new()),
    );
    let mut conversation = Conversation::new();
    let (sink, events) = recorder();
    let answer = agent
        .ask(&mut conversation, "hi", &sink, &CancellationToken::new())
        .await;
    assert_eq!(answer.reason, DoneReason::Error);
    assert_eq!(
        answer.error.as_deref(),
        Some(
            "the response from Ollama was cut off before the message was complete (no line with \"done\": true arrived)"
        )
    );
    assert_eq!(answer.text, "The light is");
    assert_eq!(
        conversation.messages.last(),
        Some(&Message::Assistant {
            text: "The light is".into(),
            tool_calls: vec![]
        })
    );
    let events = events.lock().unwrap();
    assert!(events.iter().any(|e| matches!(e, AgentEvent::Error { .. })));
}

#[tokio::test]
async fn cancelling_mid_tool_cancels_the_mcp_call_and_answers_every_call() {
    let record = harness::scratch_file("cancel-record");
    let fake = FakeProvider::start(vec![Reply::fixture("openai/hang-1.sse", 20)]).await;
    let (executor, pool) = host(vec![fake_server(Some(&record))]).await;
    // Cancel once the server is working on the call (it has read the request).
    let cancel = CancellationToken::new();
    let watcher = {
        let (cancel, record) = (cancel.clone(), record.clone());
        tokio::spawn(async move {
            wait_for(&record, "\"name\":\"hang\"").await;
            cancel.cancel();
        })
    };
    let sink: EventSink = Arc::new(|_| {});
    let mut conversation = Conversation::new();
    let answer = Agent::new(provider(Dialect::OpenAi, &fake, true), executor)
        .ask(&mut conversation, "wait for it", &sink, &cancel)
        .await;
    assert_eq!(answer.reason, DoneReason::Cancelled);
    let Some(Message::ToolResults { results }) = conversation.messages.last() else {
        panic!("{:?}", conversation.messages)
    };
    assert_eq!(results.len(), 1);
    assert_eq!(results[0].call_id, "call_hang");
    assert_eq!(
        results[0].result.text,
        "Error: the call was cancelled before it finished"
    );
    watcher.await.unwrap();
    // The server hears about it, for the request it was working on.
    wait_for(&record, r#""method":"notifications/cancelled","params":{"reason":"the client stopped waiting for the result","requestId":2}"#).await;
    pool.shutdown().await;
}

/// Waits (up to 10 s) until the file at `path` contains `text`.
async fn wait_for(path: &std::path::Path, text: &str) {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let seen = std::fs::read_to_string(path).unwrap_or_default();
        if seen.contains(text) {
            return;
        }
        assert!(Instant::now() < deadline, "never saw {text} in:\n{seen}");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// Refuses every call, remembering what it was asked.
struct Refuse(Mutex<Vec<String>>);

impl Approver for Refuse {
    fn approve<'a>(
        &'a self,
        call: &'a ToolCall,
        tool: &'a ToolDefinition,
    ) -> std::pin::Pin<Box<dyn std::future::Future<Output = bool> + Send + 'a>> {
        self.0
            .lock()
            .unwrap()
            .push(format!("{} {}", tool.name, call.args));
        Box::pin(async { false })
    }
}

#[tokio::test]
async fn a_refused_approval_tells_the_model_and_leaves_the_device_alone() {
    let fake = FakeProvider::start(vec![
        Reply::fixture("anthropic/dim-1.sse", 30),
        Reply::fixture("anthropic/dim-2.sse", 30),
    ])
    .await;
    let (executor, pool) = demo_home().await;
    let refuse = Arc::new(Refuse(Mutex::new(Vec::new())));
    let agent = Agent::new(provider(Dialect::Anthropic, &fake, true), executor.clone())
        .with_approver(Arc::clone(&refuse) as _);
    agent.run(QUESTION).await;
    assert_eq!(
        *refuse.0.lock().unwrap(),
        [r#"control_zwave_device {"action":"dim","deviceName":"Living Room Light","level":40}"#]
    );
    assert_eq!(
        fake.bodies()[1]["messages"][2]["content"][0],
        json!({"type": "tool_result", "tool_use_id": "toolu_01Xa9", "is_error": true,
               "content": "Error: the user declined to run `control_zwave_device`; it was not executed"})
    );
    assert!(status(&executor, "Living Room Light").await.contains("off"));
    pool.shutdown().await;
}

#[tokio::test]
async fn refinement_allows_one_more_search_then_forces_an_answer_without_tools() {
    harness::capture_logs();
    let fake = FakeProvider::start(vec![
        Reply::fixture("ollama/refine-1.ndjson", 9),
        Reply::fixture("ollama/refine-2.ndjson", 9),
        Reply::fixture("ollama/refine-3.ndjson", 9),
    ])
    .await;
    let (executor, pool) = demo_home().await;
    let agent =
        Agent::new(provider(Dialect::Ollama, &fake, true), executor).with_options(AgentOptions {
            refinement: true,
            ..AgentOptions::default()
        });
    let answer = agent.run("is switch one on?").await;
    assert_eq!(answer.reason, DoneReason::Completed);
    assert_eq!(answer.text, "Switch One is off.");
    let bodies = fake.bodies();
    assert_eq!(bodies.len(), 3);
    let last = |body: &Value| body["messages"].as_array().unwrap().last().unwrap().clone();
    // Iteration 1: the follow-up allows refining and the tools stay bound.
    assert_eq!(
        last(&bodies[1]),
        json!({"role": "user", "content": "If you need more specific info, you may search again."})
    );
    assert_eq!(tool_names(Dialect::Ollama, &bodies[1]).len(), 4);
    // Iteration 2: the follow-up forces an answer and the request has no tools.
    assert_eq!(
        last(&bodies[2]),
        json!({"role": "user", "content": "Answer in 1 sentence based on this information."})
    );
    assert!(bodies[2].get("tools").is_none(), "{}", bodies[2]);
    let logs = harness::all_logs();
    let refinement: Vec<&String> = logs
        .iter()
        .filter(|l| l.contains("Model requesting refinement search"))
        .collect();
    assert!(
        refinement
            .iter()
            .any(|l| l.contains("iteration=2") && l.contains("tool=get_device_status")),
        "{refinement:?}"
    );
    pool.shutdown().await;
}

#[tokio::test]
async fn anthropic_keeps_tools_defined_but_unusable_when_an_answer_is_forced() {
    let turn = std::fs::read_to_string(fixture_path("llm/anthropic/dim-1.sse")).unwrap();
    let fake = FakeProvider::start(vec![
        Reply::status(200, &turn).header("content-type", "text/event-stream"),
        Reply::status(200, &turn).header("content-type", "text/event-stream"),
        Reply::fixture("anthropic/dim-2.sse", 50),
    ])
    .await;
    let (executor, pool) = demo_home().await;
    let answer = Agent::new(provider(Dialect::Anthropic, &fake, true), executor)
        .with_options(AgentOptions {
            refinement: true,
            ..AgentOptions::default()
        })
        .run(QUESTION)
        .await;
    assert_eq!(answer.reason, DoneReason::Completed);
    let bodies = fake.bodies();
    assert_eq!(bodies[2]["tool_choice"], json!({"type": "none"}));
    assert!(bodies[1].get("tool_choice").is_none());
    let last = bodies[2]["messages"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()
        .clone();
    assert_eq!(
        last["content"].as_array().unwrap().last().unwrap(),
        &json!({"type": "text", "text": "Answer in 1 sentence based on this information."})
    );
    pool.shutdown().await;
}
