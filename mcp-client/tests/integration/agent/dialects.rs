//! The same question through each provider dialect, streamed and not, and a failing call
//! the model recovers from.

use super::*;

/// "dim the living room light to 40%": the model calls `control_zwave_device` with
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
    let usage = answer.usage.expect("the server reports usage");
    assert!(usage.input_tokens > 0 && usage.output_tokens > 0);
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
            "get_zwave_health",
            "list_zwave_devices"
        ]
    );
    let result = &answer.tool_results[0];
    assert!(!result.result.is_error, "{result:?}");
    assert!(
        result.result.text.starts_with(
            "Living Room Light: the command to dim to 40% was sent and acknowledged at "
        ),
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
            // "", never null: llama.cpp's server refuses null with HTTP 500.
            assert_eq!(messages[1]["content"], "");
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

/// `tool_choice` naming a tool: each dialect's own form on the question's first request, and
/// `auto` after it, so the model can answer.
async fn forces_the_named_tool_first(dialect: Dialect, turns: [Reply; 2]) {
    let fake = FakeProvider::start(turns.to_vec()).await;
    let (executor, pool) = demo_home().await;
    let agent = Agent::new(provider(dialect, &fake, false), executor).with_options(AgentOptions {
        tool_choice: ToolChoice::Tool("control_zwave_device".into()),
        ..AgentOptions::default()
    });
    let answer = agent.run(QUESTION).await;
    assert_eq!(answer.reason, DoneReason::Completed, "{answer:?}");
    let received = fake.received();
    let (first, second) = (&received[0].body, &received[1].body);
    match dialect {
        Dialect::OpenAi => assert_eq!(
            first["tool_choice"],
            json!({"type": "function", "function": {"name": "control_zwave_device"}})
        ),
        Dialect::Anthropic => assert_eq!(
            first["tool_choice"],
            json!({"type": "tool", "name": "control_zwave_device"})
        ),
        // No tool_choice in Ollama's API: the named tool is offered alone.
        Dialect::Ollama => {
            assert_eq!(first.get("tool_choice"), None);
            assert_eq!(tool_names(dialect, first), ["control_zwave_device"]);
        }
    }
    assert_eq!(second.get("tool_choice"), None, "{second}");
    assert_eq!(tool_names(dialect, second).len(), 5);
    pool.shutdown().await;
}

#[tokio::test]
async fn a_named_tool_choice_is_sent_in_each_dialect_on_the_first_request_only() {
    forces_the_named_tool_first(
        Dialect::OpenAi,
        [
            Reply::fixture("openai/dim-1.json", 50),
            Reply::fixture("openai/dim-2.json", 50),
        ],
    )
    .await;
    forces_the_named_tool_first(
        Dialect::Anthropic,
        [
            Reply::fixture("anthropic/dim-1.json", 40),
            Reply::fixture("anthropic/dim-2.json", 40),
        ],
    )
    .await;
    forces_the_named_tool_first(
        Dialect::Ollama,
        [
            Reply::fixture("ollama/dim-1.json", 64),
            Reply::fixture("ollama/dim-2.json", 64),
        ],
    )
    .await;
}

#[tokio::test]
async fn required_and_none_take_each_dialects_form_and_an_unknown_name_sends_nothing() {
    // required: OpenAI "required", Anthropic {"type": "any"}.
    for (dialect, turns, expected) in [
        (
            Dialect::OpenAi,
            [
                Reply::fixture("openai/dim-1.json", 50),
                Reply::fixture("openai/dim-2.json", 50),
            ],
            json!("required"),
        ),
        (
            Dialect::Anthropic,
            [
                Reply::fixture("anthropic/dim-1.json", 40),
                Reply::fixture("anthropic/dim-2.json", 40),
            ],
            json!({"type": "any"}),
        ),
    ] {
        let fake = FakeProvider::start(turns.to_vec()).await;
        let (executor, pool) = demo_home().await;
        let agent =
            Agent::new(provider(dialect, &fake, false), executor).with_options(AgentOptions {
                tool_choice: ToolChoice::Required,
                ..AgentOptions::default()
            });
        let answer = agent.run(QUESTION).await;
        assert_eq!(answer.reason, DoneReason::Completed, "{answer:?}");
        assert_eq!(fake.received()[0].body["tool_choice"], expected);
        pool.shutdown().await;
    }
    // none: no tools at all (OpenAI).
    let fake = FakeProvider::start(vec![Reply::fixture("openai/dim-2.json", 50)]).await;
    let (executor, pool) = demo_home().await;
    let answer = Agent::new(provider(Dialect::OpenAi, &fake, false), executor)
        .with_options(AgentOptions {
            tool_choice: ToolChoice::None,
            ..AgentOptions::default()
        })
        .run(QUESTION)
        .await;
    assert_eq!(answer.reason, DoneReason::Completed, "{answer:?}");
    assert_eq!(fake.received()[0].body.get("tools"), None);
    pool.shutdown().await;
    // A name no server offers: an error naming what is offered, and no request.
    let fake = FakeProvider::start(vec![Reply::fixture("openai/dim-1.json", 50)]).await;
    let (executor, pool) = demo_home().await;
    let answer = Agent::new(provider(Dialect::OpenAi, &fake, false), executor)
        .with_options(AgentOptions {
            tool_choice: ToolChoice::Tool("control_device".into()),
            ..AgentOptions::default()
        })
        .run(QUESTION)
        .await;
    assert_eq!(answer.reason, DoneReason::Error);
    assert_eq!(
        answer.error.as_deref(),
        Some(
            "--tool-choice names \"control_device\", which no server offers; the tools offered: control_zwave_device, get_device_sensor_data, get_device_status, get_zwave_health, list_zwave_devices"
        )
    );
    assert!(fake.received().is_empty());
    pool.shutdown().await;
}
