//! The LiteLLM proxy in front of llama.cpp: Anthropic's `/v1/messages` and
//! `/v1/chat/completions`.

use std::{
    io::{Read as _, Write as _},
    net::TcpStream,
    sync::Arc,
    time::Duration,
};

use mcp_client::{
    agent::policy::ANSWER_PROMPT,
    llm::{
        ChatRequest, Dialect, HttpProvider, Message, Provider, ProviderConfig, StreamEvent,
        ToolChoice, ToolResult,
    },
    tools::{ToolCall, results::ModelResult},
};
use serde_json::json;
use test_support::llm::{MODEL, ModelServer};

use super::{Home, TOOL, shim::ContentShim};

#[test]
fn both_dialects_round_trip_and_a_refused_tool_choice_none_is_answered_without_tools() {
    let upstream = ModelServer::llama_cpp(Some("chatml-function-calling"));
    let shim = ContentShim::start(&upstream.url);
    let proxy = ModelServer::litellm(&shim.url);
    let home = Home::new();

    // Anthropic's Messages API, streamed (an empty text block comes before the tool_use
    // block) and whole.
    home.chat("anthropic", &proxy.url, &["--tool-choice", TOOL])
        .assert_round_trip();
    home.chat(
        "anthropic",
        &proxy.url,
        &["--tool-choice", TOOL, "--no-stream"],
    )
    .assert_round_trip();
    // The OpenAI dialect through the same proxy.
    home.chat(
        "openai",
        &format!("{}/v1", proxy.url),
        &["--tool-choice", TOOL],
    )
    .assert_round_trip();

    // The answer-only request of refinement: LiteLLM refuses Anthropic's tool_choice none...
    let messages = answered_call();
    let tools = tools();
    let refused = post(
        &proxy.url,
        "/v1/messages",
        &json!({
            "model": MODEL,
            "max_tokens": 64,
            "messages": [
                {"role": "user", "content": "Turn on Switch One."},
                {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_1", "name": TOOL, "input": {"deviceName": "Switch One", "action": "on"}}]},
                {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "Switch One: on"}]},
            ],
            "tools": [{"name": TOOL, "description": "Switch a device", "input_schema": {"type": "object"}}],
            "tool_choice": {"type": "none"},
        }),
    );
    assert!(
        refused.starts_with("HTTP/1.1 500") && refused.contains("tool choice"),
        "LiteLLM now takes tool_choice none? {refused}"
    );
    // ...so the provider asks again without tools, and gets an answer.
    let events = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
        .block_on(async {
            let mut config = ProviderConfig::new(Dialect::Anthropic, MODEL);
            config.base_url = proxy.url.clone();
            config.api_key = Some("sk-test".into());
            config.max_tokens = Some(64);
            config.http.retry.base_delay = Duration::from_millis(10);
            let provider: Arc<dyn Provider> = Arc::new(HttpProvider::new(config).unwrap());
            let request = ChatRequest {
                messages: &messages,
                tools: &tools,
                tool_choice: ToolChoice::None,
            };
            let mut stream = provider.chat(&request);
            let mut events = Vec::new();
            while let Some(event) = stream.next().await {
                events.push(event.unwrap_or_else(|err| panic!("{err}\n{}", proxy.log())));
            }
            events
        });
    assert!(
        events
            .iter()
            .any(|event| matches!(event, StreamEvent::Finished(_))),
        "{events:?}"
    );
    assert!(
        !events
            .iter()
            .any(|event| matches!(event, StreamEvent::ToolCall(_))),
        "{events:?}"
    );
}

/// A question whose tool call was answered, then the refinement's last prompt.
fn answered_call() -> Vec<Message> {
    vec![
        Message::user("Turn on Switch One."),
        Message::Assistant {
            text: String::new(),
            tool_calls: vec![ToolCall {
                id: "toolu_1".into(),
                name: TOOL.into(),
                args: json!({"deviceName": "Switch One", "action": "on"}),
            }],
        },
        Message::ToolResults {
            results: vec![ToolResult {
                call_id: "toolu_1".into(),
                tool_name: TOOL.into(),
                result: ModelResult {
                    text: "Switch One: the command to turn on was sent and confirmed".into(),
                    is_error: false,
                    artifacts: Vec::new(),
                },
            }],
        },
        Message::user(ANSWER_PROMPT),
    ]
}

fn tools() -> Vec<mcp_client::tools::definition::ToolDefinition> {
    crate::formats::tools()
}

/// A raw HTTP/1.1 POST with the proxy's key; the whole response as text.
fn post(base: &str, path: &str, body: &serde_json::Value) -> String {
    let authority = base.trim_start_matches("http://");
    let mut stream = TcpStream::connect(authority).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(120)))
        .unwrap();
    let body = body.to_string();
    write!(
        stream,
        "POST {path} HTTP/1.1\r\nHost: {authority}\r\nx-api-key: sk-test\r\nanthropic-version: 2023-06-01\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    let mut response = String::new();
    stream.read_to_string(&mut response).unwrap();
    response
}
