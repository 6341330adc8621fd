//! Calls the user declines, and refinement ending in an answer forced without tools.

use super::*;

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
    assert_eq!(tool_names(Dialect::Ollama, &bodies[1]).len(), 5);
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

/// Approves everything, noting how many calls had been said to run when it was asked.
struct Witness {
    events: Arc<Mutex<Vec<AgentEvent>>>,
    running_when_asked: Mutex<Vec<usize>>,
}

impl Approver for Witness {
    fn approve<'a>(
        &'a self,
        _call: &'a ToolCall,
        _tool: &'a ToolDefinition,
    ) -> std::pin::Pin<Box<dyn std::future::Future<Output = bool> + Send + 'a>> {
        let running = self
            .events
            .lock()
            .unwrap()
            .iter()
            .filter(|e| matches!(e, AgentEvent::ToolCall { .. }))
            .count();
        self.running_when_asked.lock().unwrap().push(running);
        Box::pin(async { true })
    }
}

#[tokio::test]
async fn no_call_is_said_to_run_before_every_call_of_its_turn_is_approved() {
    let turn = r#"{"id":"c","object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":"","tool_calls":[{"id":"call_a","type":"function","function":{"name":"control_zwave_device","arguments":"{\"deviceName\":\"Switch One\",\"action\":\"on\"}"}},{"id":"call_b","type":"function","function":{"name":"control_zwave_device","arguments":"{\"deviceName\":\"Garage Light\",\"action\":\"on\"}"}}]},"finish_reason":"tool_calls"}],"usage":{"prompt_tokens":5,"completion_tokens":5}}"#;
    let fake = FakeProvider::start(vec![
        Reply::status(200, turn),
        Reply::fixture("openai/dim-2.json", 50),
    ])
    .await;
    let (executor, pool) = demo_home().await;
    let (sink, events) = recorder();
    let witness = Arc::new(Witness {
        events: Arc::clone(&events),
        running_when_asked: Mutex::new(Vec::new()),
    });
    let agent = Agent::new(provider(Dialect::OpenAi, &fake, false), executor)
        .with_approver(Arc::clone(&witness) as _);
    let mut conversation = Conversation::new();
    let answer = agent
        .ask(
            &mut conversation,
            "switch both",
            &sink,
            &CancellationToken::new(),
        )
        .await;
    assert_eq!(answer.reason, DoneReason::Completed, "{answer:?}");
    assert_eq!(*witness.running_when_asked.lock().unwrap(), [0, 0]);
    pool.shutdown().await;
}
