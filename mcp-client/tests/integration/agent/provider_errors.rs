//! What the agent does when the provider fails: waits out rate limits, gives up with a clear
//! error, names the key variable without showing the key, keeps a cut stream's text.

use super::*;

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
        logs.iter().any(|l| l
            .contains("model request 1 of 4 failed; retrying in 20ms provider=\"Ollama\" error=status 429: too many requests")
            && !l.contains("gave up")),
        "{logs:#?}"
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

/// An OpenAI-compatible provider at `fake` that retries up to four times, quickly.
fn patient(fake: &FakeProvider) -> Arc<HttpProvider> {
    let mut config = ProviderConfig::new(Dialect::OpenAi, "m");
    config.base_url = format!("{}/v1", fake.url);
    config.http.retry = RetryPolicy {
        attempts: 4,
        base_delay: Duration::from_millis(1),
    };
    Arc::new(HttpProvider::new(config).unwrap())
}

#[tokio::test]
async fn a_500_that_is_a_validation_error_is_not_retried_and_says_which_field() {
    // What llama.cpp's server answered to an assistant turn with `"content": null`.
    let body = test_support::fixture_text("llm/openai/llamacpp-validation-500.json");
    let fake =
        FakeProvider::start(vec![Reply::status(500, &body), Reply::status(500, &body)]).await;
    let answer = Agent::new(patient(&fake), ToolExecutor::new(ToolManager::new()))
        .run("hi")
        .await;
    assert_eq!(answer.reason, DoneReason::Error);
    assert_eq!(
        fake.received().len(),
        1,
        "the same request fails the same way"
    );
    let error = answer.error.unwrap();
    assert!(
        error.starts_with("the OpenAI-compatible server failed with status 500 (7 validation errors: messages.1.role: Input should be 'system'; ")
            && error.contains("messages.1.content: Input should be a valid string")
            && error.ends_with("); gave up after 1 attempt"),
        "{error}"
    );
}

#[tokio::test]
async fn a_bare_500_is_retried_once_and_a_busy_server_as_often_as_the_policy_says() {
    let fake = FakeProvider::start(vec![
        Reply::status(500, r#"{"error":{"message":"boom"}}"#),
        Reply::status(500, r#"{"error":{"message":"boom"}}"#),
        Reply::status(500, r#"{"error":{"message":"boom"}}"#),
    ])
    .await;
    let answer = Agent::new(patient(&fake), ToolExecutor::new(ToolManager::new()))
        .run("hi")
        .await;
    assert_eq!(fake.received().len(), 2);
    assert_eq!(
        answer.error.as_deref(),
        Some(
            "the OpenAI-compatible server failed with status 500 (boom); gave up after 2 attempts"
        )
    );
    let busy = r#"{"error":{"message":"loading"}}"#;
    let fake = FakeProvider::start(vec![
        Reply::status(503, busy),
        Reply::status(502, busy),
        Reply::status(504, busy),
        Reply::status(503, busy),
    ])
    .await;
    let answer = Agent::new(patient(&fake), ToolExecutor::new(ToolManager::new()))
        .run("hi")
        .await;
    assert_eq!(fake.received().len(), 4);
    assert!(answer.error.unwrap().ends_with("gave up after 4 attempts"));
}

#[tokio::test]
async fn a_refused_key_names_the_variable_and_never_shows_the_key() {
    let fake = FakeProvider::start(vec![Reply::status(
        401,
        // A server that quotes the key back.
        r#"{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key sk-test-key-123"}}"#,
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
        "Anthropic refused the request with status 401 (invalid x-api-key [API key]): check the key in ANTHROPIC_API_KEY"
    );
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
async fn an_answer_cut_off_at_the_token_limit_is_truncated_not_completed() {
    let cut = r#"{"id":"c1","object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":"The living room light is now dim"},"finish_reason":"length"}],"usage":{"prompt_tokens":40,"completion_tokens":8}}"#;
    let fake = FakeProvider::start(vec![Reply::status(200, cut)]).await;
    let answer = Agent::new(
        provider(Dialect::OpenAi, &fake, false),
        ToolExecutor::new(ToolManager::new()),
    )
    .run("hi")
    .await;
    assert_eq!(answer.reason, DoneReason::Truncated, "{answer:?}");
    assert_eq!(answer.reason.as_str(), "truncated");
    assert_eq!(answer.text, "The living room light is now dim");
}

#[tokio::test]
async fn a_tool_call_cut_off_at_the_token_limit_is_not_run_and_the_model_is_told() {
    let cut = r#"{"id":"c1","object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":"","tool_calls":[{"id":"call_1","type":"function","function":{"name":"control_zwave_device","arguments":"{\"deviceName\": \"Switch On"}}]},"finish_reason":"length"}],"usage":{"prompt_tokens":40,"completion_tokens":8}}"#;
    let done = r#"{"id":"c2","object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":"I could not finish that call."},"finish_reason":"stop"}],"usage":{"prompt_tokens":60,"completion_tokens":8}}"#;
    let fake = FakeProvider::start(vec![Reply::status(200, cut), Reply::status(200, done)]).await;
    let (executor, pool) = demo_home().await;
    let answer = Agent::new(provider(Dialect::OpenAi, &fake, false), executor)
        .run("switch one on")
        .await;
    assert_eq!(answer.reason, DoneReason::Completed, "{answer:?}");
    let result = &answer.tool_results[0];
    assert!(result.result.is_error);
    assert!(
        result.result.text.contains(
            "its arguments were cut off at the output token limit (max_tokens), so it was not run"
        ),
        "{}",
        result.result.text
    );
    let second = &fake.received()[1].body;
    assert!(
        second
            .to_string()
            .contains("cut off at the output token limit"),
        "{second}"
    );
    pool.shutdown().await;
}

#[tokio::test]
async fn a_token_budget_that_cannot_be_counted_is_refused_never_ignored() {
    // llama.cpp's server streams no usage, even with stream_options.include_usage.
    let fake = FakeProvider::start(vec![Reply::fixture("openai/no-usage.sse", 64)]).await;
    let answer = Agent::new(
        provider(Dialect::OpenAi, &fake, true),
        ToolExecutor::new(ToolManager::new()),
    )
    .with_options(AgentOptions {
        token_budget: Some(10_000),
        ..AgentOptions::default()
    })
    .run("hi")
    .await;
    assert_eq!(answer.reason, DoneReason::Error, "{answer:?}");
    assert_eq!(
        answer.error.as_deref(),
        Some(
            "the model server did not say how many tokens it used, so --token-budget cannot be kept: use --no-stream with --token-budget (servers report usage for whole responses), or leave the budget out"
        )
    );
    // Without a budget the same answer is just an answer.
    let fake = FakeProvider::start(vec![Reply::fixture("openai/no-usage.sse", 64)]).await;
    let answer = Agent::new(
        provider(Dialect::OpenAi, &fake, true),
        ToolExecutor::new(ToolManager::new()),
    )
    .run("hi")
    .await;
    assert_eq!(answer.reason, DoneReason::Completed);
    assert_eq!(answer.text, "Hello there");
}

#[tokio::test]
async fn a_server_that_refuses_tool_choice_none_gets_the_answer_only_request_without_tools() {
    use mcp_client::{
        llm::{ChatRequest, Message, Provider, StreamEvent, ToolChoice, ToolResult},
        tools::{ToolCall, results::ModelResult},
    };
    // What LiteLLM answers to Anthropic's tool_choice {"type": "none"}.
    let fake = FakeProvider::start(vec![
        Reply::status(
            500,
            r#"{"error":{"message":"Incompatible tool choice param: none"}}"#,
        ),
        Reply::status(
            500,
            r#"{"error":{"message":"Incompatible tool choice param: none"}}"#,
        ),
        Reply::fixture("anthropic/dim-2.json", 64),
    ])
    .await;
    let messages = vec![
        Message::user("dim the living room light to 40%"),
        Message::Assistant {
            text: String::new(),
            tool_calls: vec![ToolCall {
                id: "toolu_1".into(),
                name: "control_zwave_device".into(),
                args: json!({"deviceName": "Living Room Light", "action": "dim", "level": 40}),
            }],
        },
        Message::ToolResults {
            results: vec![ToolResult {
                call_id: "toolu_1".into(),
                tool_name: "control_zwave_device".into(),
                result: ModelResult {
                    text: "Living Room Light dimmed to 40%".into(),
                    is_error: false,
                    artifacts: Vec::new(),
                },
            }],
        },
    ];
    let tools = crate::formats::tools();
    let request = ChatRequest {
        messages: &messages,
        tools: &tools,
        tool_choice: ToolChoice::None,
    };
    let provider = provider(Dialect::Anthropic, &fake, false);
    let mut stream = provider.chat(&request);
    let mut events: Vec<StreamEvent> = Vec::new();
    while let Some(event) = stream.next().await {
        events.push(event.unwrap());
    }
    assert!(
        events
            .iter()
            .any(|e| matches!(e, StreamEvent::TextDelta(text) if text.contains("40%"))),
        "{events:?}"
    );
    let received = fake.received();
    let last = &received.last().unwrap().body;
    assert_eq!(received[0].body["tool_choice"], json!({"type": "none"}));
    assert!(
        last.get("tools").is_none() && last.get("tool_choice").is_none(),
        "{last}"
    );
    let text = last["messages"].to_string();
    assert!(
        !text.contains("tool_use") && !text.contains("tool_result"),
        "{text}"
    );
    assert!(
        text.contains("(I called the tool control_zwave_device with {")
            && text.contains("Result of control_zwave_device: Living Room Light dimmed to 40%"),
        "{text}"
    );
}

/// The error a question ends with when `reply` answers it, with `turn_timeout` per response.
async fn error_of(dialect: Dialect, reply: Reply, turn_timeout: Duration) -> String {
    let fake = FakeProvider::start(vec![reply]).await;
    let mut config = fake.provider_config(dialect);
    config.http.turn_timeout = turn_timeout;
    let answer = Agent::new(
        Arc::new(HttpProvider::new(config).unwrap()),
        ToolExecutor::new(ToolManager::new()),
    )
    .run("hi")
    .await;
    assert_eq!(answer.reason, DoneReason::Error, "{answer:?}");
    answer.error.unwrap()
}

#[tokio::test]
async fn one_endless_line_is_abandoned_at_16_mib_not_buffered() {
    let line = vec![b'x'; 64 * 1024];
    let message = error_of(
        Dialect::OpenAi,
        Reply::status(200, r#"data: {"choices":[{"delta":{"content":""#)
            .then_endless(&line, Duration::ZERO),
        Duration::from_secs(600),
    )
    .await;
    assert_eq!(
        message,
        "the OpenAI-compatible server sent something that is not its API's format (one line or event of the response is longer than 16 MiB; the response was abandoned)"
    );
    let message = error_of(
        Dialect::Ollama,
        Reply::status(200, r#"{"message":{"content":""#).then_endless(&line, Duration::ZERO),
        Duration::from_secs(600),
    )
    .await;
    assert_eq!(
        message,
        "Ollama sent something that is not its API's format (one line or event of the response is longer than 16 MiB; the response was abandoned)"
    );
}

#[tokio::test]
async fn a_response_that_never_ends_is_abandoned_at_64_mib_or_at_the_turn_timeout() {
    let keep_alives = b": keep-alive\n\n".repeat(4096);
    let message = error_of(
        Dialect::OpenAi,
        Reply::status(200, "").then_endless(&keep_alives, Duration::ZERO),
        Duration::from_secs(600),
    )
    .await;
    assert_eq!(
        message,
        "the OpenAI-compatible server sent something that is not its API's format (the response is longer than 64 MiB; it was abandoned)"
    );
    // A model that keeps talking, slowly: each piece well within the idle limit.
    let message = error_of(
        Dialect::OpenAi,
        Reply::status(200, "").then_endless(
            br#"data: {"choices":[{"delta":{"content":"la "}}]}

"#,
            Duration::from_millis(5),
        ),
        Duration::from_millis(300),
    )
    .await;
    assert_eq!(
        message,
        "the OpenAI-compatible server did not finish its response within 300ms (see --turn-timeout)"
    );
}

#[tokio::test]
async fn a_byte_order_mark_before_the_first_event_is_read_past() {
    let body = std::fs::read_to_string(fixture_path("llm/openai/no-usage.sse")).unwrap();
    let fake = FakeProvider::start(vec![Reply::status(200, &format!("\u{feff}{body}"))]).await;
    let answer = Agent::new(
        provider(Dialect::OpenAi, &fake, true),
        ToolExecutor::new(ToolManager::new()),
    )
    .run("hi")
    .await;
    assert_eq!(answer.reason, DoneReason::Completed, "{answer:?}");
    assert_eq!(answer.text, "Hello there");
}

#[tokio::test]
async fn an_ollama_stream_cut_mid_line_is_a_cut_stream() {
    let message = error_of(
        Dialect::Ollama,
        Reply::status(
            200,
            "{\"model\":\"qwen3:8b\",\"message\":{\"role\":\"assistant\",\"content\":\"Hel\"},\"done\":false}\n{\"model\":\"qwen3:8b\",\"message\":{\"role\":\"assistant\",\"content\":\"lo",
        ),
        Duration::from_secs(600),
    )
    .await;
    assert_eq!(
        message,
        "the response from Ollama was cut off before the message was complete (the stream ended in the middle of a line (63 bytes of it came))"
    );
}

/// Found by the third hostile review: a provider address answering 307 to another port made
/// `--provider anthropic` send `x-api-key` and the whole conversation there, twice. A redirect
/// to another origin is now never followed, for any provider, and the other server receives
/// nothing; one within the origin is followed with the key.
#[tokio::test]
async fn a_redirect_to_another_origin_is_refused_and_the_other_server_gets_nothing() {
    for dialect in [Dialect::Ollama, Dialect::OpenAi, Dialect::Anthropic] {
        let elsewhere = FakeProvider::start(vec![Reply::status(200, "{}")]).await;
        for status in [307, 302, 308] {
            let to = format!("{}/stolen", elsewhere.url);
            let fake =
                FakeProvider::start(vec![Reply::status(status, "").header("location", &to)]).await;
            let provider = Arc::new(HttpProvider::new(fake.provider_config(dialect)).unwrap());
            let answer = Agent::new(provider, ToolExecutor::new(ToolManager::new()))
                .run("hi")
                .await;
            assert_eq!(answer.reason, DoneReason::Error, "{dialect:?} {status}");
            let asked = &fake.received()[0].path;
            let error = answer.error.unwrap();
            let (name, env) = match dialect {
                Dialect::Ollama => ("Ollama", "OLLAMA_HOST"),
                Dialect::OpenAi => ("the OpenAI-compatible server", "OPENAI_BASE_URL"),
                Dialect::Anthropic => ("Anthropic", "ANTHROPIC_BASE_URL"),
            };
            assert_eq!(
                error,
                format!(
                    "{name} at {}{} redirected the request to {to}, another address: it was not followed, and nothing was sent there (the API key and the conversation go only to the address given). If the provider moved, give its new address with --base-url (or {env})",
                    fake.url, asked
                ),
                "{dialect:?} {status}"
            );
            assert_eq!(
                fake.received().len(),
                1,
                "not retried: {dialect:?} {status}"
            );
        }
        assert!(
            elsewhere.received().is_empty(),
            "{dialect:?}: {:?}",
            elsewhere.received()
        );
    }
    // Within the origin a redirect is followed, the key with it.
    let fake = FakeProvider::start(vec![
        Reply::status(307, "").header("location", "/api/chat-moved"),
        Reply::fixture("ollama/dim-1.ndjson", 100),
    ])
    .await;
    let provider = Arc::new(HttpProvider::new(fake.provider_config(Dialect::Ollama)).unwrap());
    let answer = Agent::new(provider, ToolExecutor::new(ToolManager::new()))
        .run("hi")
        .await;
    let received = fake.received();
    assert!(received.len() >= 2, "{answer:?}");
    assert_eq!(received[1].path, "/api/chat-moved");
    assert_eq!(received[1].body, received[0].body);
    assert_eq!(
        answer.turns, 2,
        "the model's first answer was read: {answer:?}"
    );
}
