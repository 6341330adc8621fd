//! What real servers send beyond what their formats document, replayed from their captures
//! (`fixtures/llm/*/llamacpp-*`, `litellm-*`): llama.cpp repeats a call's id and name in every
//! argument chunk beside a legacy `function_call` delta, streams no usage, and says
//! `tool_calls` also when the limit cut the arguments; LiteLLM's Anthropic stream opens an
//! empty text block before the `tool_use` block.

use super::*;
use mcp_client::llm::{ChatRequest, Provider, StreamEvent, ToolChoice};

/// Every event of one request answered with `reply`.
async fn events_of(dialect: Dialect, reply: Reply) -> Vec<StreamEvent> {
    let fake = FakeProvider::start(vec![reply]).await;
    let messages = vec![Message::user("Turn on Switch One.")];
    let tools = crate::formats::tools();
    let provider = provider(dialect, &fake, true);
    let request = ChatRequest {
        messages: &messages,
        tools: &tools,
        tool_choice: ToolChoice::Auto,
    };
    let mut stream = provider.chat(&request);
    let mut events = Vec::new();
    while let Some(event) = stream.next().await {
        events.push(event.unwrap());
    }
    events
}

fn calls(events: &[StreamEvent]) -> Vec<&mcp_client::llm::ToolCallRequest> {
    events
        .iter()
        .filter_map(|event| match event {
            StreamEvent::ToolCall(call) => Some(call),
            _ => None,
        })
        .collect()
}

#[tokio::test]
async fn llama_cpp_repeating_id_and_name_in_every_chunk_is_one_call() {
    let events = events_of(
        Dialect::OpenAi,
        Reply::fixture("openai/llamacpp-tool-call.sse", 29),
    )
    .await;
    let calls = calls(&events);
    assert_eq!(calls.len(), 1, "{events:?}");
    assert_eq!(
        calls[0].call.id,
        "call__0_control_zwave_device_cmpl-6be45e4e-1c92-4bcf-a5e0-df3b4c05cdbb"
    );
    assert_eq!(calls[0].call.name, "control_zwave_device");
    assert_eq!(
        calls[0].call.args,
        json!({"deviceName": "Timer2_3", "action": "on", "level": 4})
    );
    assert_eq!(calls[0].invalid_arguments, None);
    // No text, and no usage: it is unknown, not zero.
    assert!(
        !events
            .iter()
            .any(|e| matches!(e, StreamEvent::TextDelta(_) | StreamEvent::Usage(_))),
        "{events:?}"
    );
    assert!(matches!(events.last(), Some(StreamEvent::Finished(_))));
}

#[tokio::test]
async fn arguments_cut_off_under_finish_reason_tool_calls_are_not_run() {
    let fake = FakeProvider::start(vec![
        Reply::fixture("openai/llamacpp-cut-args.sse", 31),
        Reply::fixture("openai/dim-2.sse", 64),
    ])
    .await;
    let (executor, pool) = demo_home().await;
    let answer = Agent::new(provider(Dialect::OpenAi, &fake, true), executor)
        .run("Turn on Switch One.")
        .await;
    assert_eq!(answer.reason, DoneReason::Completed, "{answer:?}");
    let result = &answer.tool_results[0];
    assert!(result.result.is_error);
    assert_eq!(
        result.result.text,
        "Error: the arguments are not valid JSON (EOF while parsing a string at line 1 column 24); call `control_zwave_device` again with a JSON object of arguments"
    );
    // What the model wrote goes back as it came, so it sees what it cut.
    assert_eq!(
        fake.bodies()[1]["messages"][1]["tool_calls"][0]["function"]["arguments"],
        r#"{ "deviceName": "Timer2_"#
    );
    pool.shutdown().await;
}

#[tokio::test]
async fn litellm_s_empty_text_block_before_tool_use_shows_no_text() {
    let events = events_of(
        Dialect::Anthropic,
        Reply::fixture("anthropic/litellm-tool-use.sse", 23),
    )
    .await;
    let calls = calls(&events);
    assert_eq!(calls.len(), 1, "{events:?}");
    assert_eq!(
        calls[0].call.args,
        json!({"deviceName": "ZWave Device 12", "action": "on", "level": 0})
    );
    assert!(
        events
            .iter()
            .all(|e| !matches!(e, StreamEvent::TextDelta(text) if !text.is_empty())),
        "{events:?}"
    );
    assert!(
        events.iter().any(|e| matches!(
            e,
            StreamEvent::Usage(usage) if usage.input_tokens == 11 && usage.output_tokens == 111
        )),
        "{events:?}"
    );
}

#[tokio::test]
async fn usage_reported_twice_counts_once_the_last_report() {
    let stream = [
        r#"data: {"choices":[{"index":0,"delta":{"content":"Hi"},"finish_reason":null}],"usage":{"prompt_tokens":10,"completion_tokens":1}}"#,
        r#"data: {"choices":[{"index":0,"delta":{},"finish_reason":"stop"}],"usage":{"prompt_tokens":10,"completion_tokens":7}}"#,
        "data: [DONE]",
    ]
    .join("\n\n")
        + "\n\n";
    let fake = FakeProvider::start(vec![Reply::status(200, &stream)]).await;
    let answer = Agent::new(
        provider(Dialect::OpenAi, &fake, true),
        ToolExecutor::new(ToolManager::new()),
    )
    .run("hi")
    .await;
    assert_eq!(answer.text, "Hi");
    assert_eq!(
        answer.usage,
        Some(mcp_client::llm::Usage {
            input_tokens: 10,
            output_tokens: 7
        })
    );
}
