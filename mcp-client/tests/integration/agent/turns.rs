//! One turn's calls: run together, each answered once, stopped by a turn limit or a
//! cancellation, refused when their arguments are not JSON.

use super::*;

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
    // The server hears about it, for the request it was working on (server/discover 0,
    // initialize 1, tools/list 2, tools/call 3).
    wait_for(&record, r#""method":"notifications/cancelled","params":{"reason":"the client stopped waiting for the result","requestId":3}"#).await;
    pool.shutdown().await;
}

#[tokio::test]
async fn duplicate_call_ids_are_made_unique_and_each_result_reaches_its_call() {
    let whole = |calls: &str| {
        format!(
            r#"{{"id":"c","object":"chat.completion","choices":[{{"index":0,"message":{{"role":"assistant","content":"","tool_calls":[{calls}]}},"finish_reason":"tool_calls"}}],"usage":{{"prompt_tokens":5,"completion_tokens":5}}}}"#
        )
    };
    let status = |id: &str, device: &str| {
        format!(
            r#"{{"id":"{id}","type":"function","function":{{"name":"get_device_status","arguments":"{{\"deviceName\":\"{device}\"}}"}}}}"#
        )
    };
    let fake = FakeProvider::start(vec![
        // The same id twice in one turn...
        Reply::status(
            200,
            &whole(&format!(
                "{},{}",
                status("call_1", "Switch One"),
                status("call_1", "Living Room Light")
            )),
        ),
        // ...and again in the next turn.
        Reply::status(200, &whole(&status("call_1", "Garage Light"))),
        Reply::fixture("openai/dim-2.json", 50),
    ])
    .await;
    let (executor, pool) = demo_home().await;
    let answer = Agent::new(provider(Dialect::OpenAi, &fake, false), executor)
        .run("how are the switch and the lights?")
        .await;
    assert_eq!(answer.reason, DoneReason::Completed, "{answer:?}");
    let ids: Vec<&str> = answer.tool_calls.iter().map(|c| c.id.as_str()).collect();
    assert_eq!(ids, ["call_1", "call_1_2", "call_1_3"]);
    // What the model reads back: each call with its own result, by id.
    let last = &fake.bodies()[2]["messages"];
    let calls: Vec<(&str, &str)> = last
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "assistant")
        .flat_map(|m| m["tool_calls"].as_array().unwrap())
        .map(|c| {
            (
                c["id"].as_str().unwrap(),
                c["function"]["arguments"].as_str().unwrap(),
            )
        })
        .collect();
    let results: Vec<(&str, &str)> = last
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "tool")
        .map(|m| {
            (
                m["tool_call_id"].as_str().unwrap(),
                m["content"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(calls.len(), 3);
    for ((call_id, arguments), (result_id, content)) in calls.iter().zip(&results) {
        assert_eq!(call_id, result_id);
        let device = serde_json::from_str::<Value>(arguments).unwrap()["deviceName"]
            .as_str()
            .unwrap()
            .to_owned();
        assert!(
            content.starts_with(&format!("\"{device}\" (")),
            "{device}: {content}"
        );
    }
    pool.shutdown().await;
}

#[tokio::test]
async fn a_call_that_finished_before_a_cancel_keeps_its_result() {
    let turn = r#"data: {"id":"c","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"role":"assistant","tool_calls":[{"index":0,"id":"call_echo","type":"function","function":{"name":"echo","arguments":"{\"message\":\"done\"}"}},{"index":1,"id":"call_hang","type":"function","function":{"name":"hang","arguments":"{}"}}]},"finish_reason":"tool_calls"}]}

data: [DONE]

"#;
    let fake = FakeProvider::start(vec![Reply::status(200, turn)]).await;
    let (executor, pool) = host(vec![fake_server(None)]).await;
    // Cancel as soon as the quick call's result is in: the other never answers.
    let cancel = CancellationToken::new();
    let sink: EventSink = {
        let cancel = cancel.clone();
        Arc::new(move |event| {
            if matches!(&event, AgentEvent::ToolResult { id, .. } if id == "call_echo") {
                cancel.cancel();
            }
        })
    };
    let mut conversation = Conversation::new();
    let answer = Agent::new(provider(Dialect::OpenAi, &fake, true), executor)
        .ask(&mut conversation, "echo and wait", &sink, &cancel)
        .await;
    assert_eq!(answer.reason, DoneReason::Cancelled);
    let Some(Message::ToolResults { results }) = conversation.messages.last() else {
        panic!("{:?}", conversation.messages)
    };
    let texts: Vec<(&str, &str)> = results
        .iter()
        .map(|r| (r.call_id.as_str(), r.result.text.as_str()))
        .collect();
    assert_eq!(
        texts,
        [
            ("call_echo", "Echo: done"),
            (
                "call_hang",
                "Error: the call was cancelled before it finished"
            )
        ]
    );
    pool.shutdown().await;
}
