//! The agent's policies and the provider errors not covered by the end-to-end tests: token
//! budget, retries of idempotent tools, MCP progress as events, a silent provider, a rejected
//! request.

use std::{
    sync::{
        Arc, Mutex,
        atomic::{AtomicU32, Ordering},
    },
    time::Duration,
};

use mcp_client::{
    agent::{Agent, AgentEvent, AgentOptions, Conversation, DoneReason, EventSink, ToolRetry},
    llm::{Dialect, HttpProvider, Message},
    tools::{definition, executor::ToolExecutor, manager::ToolManager},
};
use serde_json::json;
use tokio_util::sync::CancellationToken;

use crate::{
    fake_provider::{FakeProvider, Reply},
    harness,
};

fn provider(dialect: Dialect, fake: &FakeProvider) -> Arc<HttpProvider> {
    let mut config = fake.provider_config(dialect);
    config.http.idle_timeout = Duration::from_millis(300);
    Arc::new(HttpProvider::new(config).unwrap())
}

/// One local tool named `control_zwave_device` (what the recordings call), defined by `json`.
fn one_tool(json: &str) -> ToolManager {
    let mut manager = ToolManager::new();
    manager
        .add(definition::parse(json).unwrap().remove(0))
        .unwrap();
    manager
}

#[tokio::test]
async fn the_token_budget_stops_before_a_turn_that_would_exceed_it() {
    let fake = FakeProvider::start(vec![
        Reply::fixture("ollama/dim-1.ndjson", 64),
        Reply::fixture("ollama/dim-2.ndjson", 64),
    ])
    .await;
    let manager = one_tool(
        r#"{"name": "control_zwave_device", "description": "d", "implementation": {"type": "mock", "mock_response": "dimmed"}}"#,
    );
    let agent = Agent::new(provider(Dialect::Ollama, &fake), ToolExecutor::new(manager))
        .with_options(AgentOptions {
            // The first turn reports 412 + 38 tokens; the next reads all of that again.
            token_budget: Some(800),
            ..AgentOptions::default()
        });
    let mut conversation = Conversation::new();
    let sink: EventSink = Arc::new(|_| {});
    let answer = agent
        .ask(
            &mut conversation,
            "dim it",
            &sink,
            &CancellationToken::new(),
        )
        .await;
    assert_eq!(answer.reason, DoneReason::TokenBudgetReached);
    assert_eq!(fake.received().len(), 1);
    assert_eq!(answer.usage.map(|u| u.total()), Some(450));
    assert!(
        matches!(conversation.messages.last(), Some(Message::ToolResults { results }) if results.len() == 1)
    );
}

/// A tool that times out on its first call and answers on the second.
fn flaky(idempotent: bool) -> (ToolExecutor, Arc<AtomicU32>) {
    let manager = one_tool(&format!(
        r#"{{"name": "control_zwave_device", "description": "d", "timeout": "200ms",
            "implementation": {{"type": "internal", "handler": "flaky"}},
            "annotations": {{"readOnlyHint": false, "idempotentHint": {idempotent}}}}}"#
    ));
    let calls = Arc::new(AtomicU32::new(0));
    let counted = Arc::clone(&calls);
    let executor = ToolExecutor::new(manager).with_internal(
        "flaky",
        Arc::new(move |_| {
            let first = counted.fetch_add(1, Ordering::SeqCst) == 0;
            Box::pin(async move {
                if first {
                    std::future::pending::<()>().await;
                }
                Ok(json!("dimmed"))
            })
        }),
    );
    (executor, calls)
}

#[tokio::test]
async fn failed_calls_of_idempotent_tools_are_retried_when_asked() {
    harness::capture_logs();
    let fake = FakeProvider::start(vec![
        Reply::fixture("ollama/dim-1.ndjson", 64),
        Reply::fixture("ollama/dim-2.ndjson", 64),
    ])
    .await;
    let (executor, calls) = flaky(true);
    let retry = ToolRetry {
        attempts: 3,
        base_delay: Duration::from_millis(1),
    };
    let answer = Agent::new(provider(Dialect::Ollama, &fake), executor)
        .with_options(AgentOptions {
            tool_retry: Some(retry),
            ..AgentOptions::default()
        })
        .run("dim it")
        .await;
    assert_eq!(calls.load(Ordering::SeqCst), 2);
    assert_eq!(answer.tool_results[0].result.text, "dimmed");
    assert!(
        harness::all_logs()
            .iter()
            .any(|l| l.contains("retrying an idempotent tool call")
                && l.contains("tool=control_zwave_device")
                && l.contains("attempt=1"))
    );
}

#[tokio::test]
async fn tools_that_might_act_twice_are_never_retried() {
    let fake = FakeProvider::start(vec![
        Reply::fixture("ollama/dim-1.ndjson", 64),
        Reply::fixture("ollama/dim-2.ndjson", 64),
    ])
    .await;
    let (executor, calls) = flaky(false);
    let answer = Agent::new(provider(Dialect::Ollama, &fake), executor)
        .with_options(AgentOptions {
            tool_retry: Some(ToolRetry::default()),
            ..AgentOptions::default()
        })
        .run("dim it")
        .await;
    assert_eq!(calls.load(Ordering::SeqCst), 1);
    assert_eq!(
        answer.tool_results[0].result.text,
        "Error: Tool 'control_zwave_device' timed out after 200ms and was cancelled; try again, or ask for less"
    );
}

#[tokio::test]
async fn mcp_progress_reaches_the_host_as_events() {
    let turn = "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"call_p\",\"function\":{\"name\":\"progress\",\"arguments\":\"{}\"}}]},\"finish_reason\":\"tool_calls\"}]}\n\ndata: [DONE]\n\n";
    let done = "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"done\"},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n";
    let fake = FakeProvider::start(vec![
        Reply::status(200, turn).header("content-type", "text/event-stream"),
        Reply::status(200, done).header("content-type", "text/event-stream"),
    ])
    .await;
    let pool = mcp_client::ServerPool::new(vec![harness::fake("progress-events", &["clean"])]);
    pool.connect_all().await;
    let mut manager = ToolManager::new();
    manager.add_mcp(&mcp_client::McpTools::discover(&pool).await);
    let executor =
        ToolExecutor::new(manager).with_mcp(pool.clone(), mcp_client::McpTools::normalizer(&pool));
    let events = Arc::new(Mutex::new(Vec::new()));
    let sink: EventSink = {
        let events = Arc::clone(&events);
        Arc::new(move |event| {
            if let AgentEvent::ToolProgress {
                id,
                progress,
                total,
                message,
            } = event
            {
                events.lock().unwrap().push((id, progress, total, message));
            }
        })
    };
    let mut conversation = Conversation::new();
    let answer = Agent::new(provider(Dialect::OpenAi, &fake), executor)
        .ask(&mut conversation, "go", &sink, &CancellationToken::new())
        .await;
    assert_eq!(answer.tool_results[0].result.text, "progressed");
    assert_eq!(
        *events.lock().unwrap(),
        (1..=3)
            .map(|step| (
                "call_p".to_owned(),
                f64::from(step),
                Some(3.0),
                Some(format!("step {step}"))
            ))
            .collect::<Vec<_>>()
    );
    pool.shutdown().await;
}

#[tokio::test]
async fn a_provider_that_goes_silent_times_out() {
    let fake =
        FakeProvider::start(vec![Reply::fixture("ollama/cut.ndjson", 200).then_stall()]).await;
    let answer = Agent::new(
        provider(Dialect::Ollama, &fake),
        ToolExecutor::new(ToolManager::new()),
    )
    .run("hi")
    .await;
    assert_eq!(answer.reason, DoneReason::Error);
    assert_eq!(
        answer.error.as_deref(),
        Some("Ollama did not send more of its response within 300ms (see --request-timeout)")
    );
    assert_eq!(answer.text, "The light is");
}

#[tokio::test]
async fn a_rejected_request_shows_the_providers_reason() {
    let fake = FakeProvider::start(vec![Reply::status(
        400,
        r#"{"error":{"message":"Invalid schema for function 'x': 'object' is not valid","type":"invalid_request_error","param":"tools[0]","code":null}}"#,
    )])
    .await;
    let answer = Agent::new(
        provider(Dialect::OpenAi, &fake),
        ToolExecutor::new(ToolManager::new()),
    )
    .run("hi")
    .await;
    assert_eq!(
        answer.error.as_deref(),
        Some(
            "the OpenAI-compatible server rejected the request with status 400: Invalid schema for function 'x': 'object' is not valid"
        )
    );
}

#[tokio::test]
async fn cancelling_mid_stream_stops_the_model_and_keeps_what_was_shown() {
    let fake =
        FakeProvider::start(vec![Reply::fixture("ollama/cut.ndjson", 200).then_stall()]).await;
    let cancel = CancellationToken::new();
    let sink: EventSink = {
        let cancel = cancel.clone();
        Arc::new(move |event| {
            if let AgentEvent::TextDelta { text } = event
                && text == " is"
            {
                cancel.cancel();
            }
        })
    };
    let mut conversation = Conversation::new();
    let answer = Agent::new(
        provider(Dialect::Ollama, &fake),
        ToolExecutor::new(ToolManager::new()),
    )
    .with_options(AgentOptions::default())
    .ask(&mut conversation, "hi", &sink, &cancel)
    .await;
    assert_eq!(answer.reason, DoneReason::Cancelled);
    assert_eq!(answer.error, None);
    assert_eq!(
        conversation.messages.last(),
        Some(&Message::Assistant {
            text: "The light is".into(),
            tool_calls: vec![]
        })
    );
}

/// An OpenAI stream of one answer calling `count` `n` times.
fn many_calls(n: usize) -> Reply {
    let calls: Vec<serde_json::Value> = (0..n)
        .map(|i| json!({"index": i, "id": format!("call_{i}"), "function": {"name": "count", "arguments": "{}"}}))
        .collect();
    let chunk = json!({"choices": [{"index": 0, "delta": {"tool_calls": calls}, "finish_reason": "tool_calls"}]});
    Reply::status(200, &format!("data: {chunk}\n\ndata: [DONE]\n\n"))
        .header("content-type", "text/event-stream")
}

#[tokio::test]
async fn one_answer_runs_at_most_its_bound_of_calls_and_the_rest_are_told_so() {
    let done = "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"done\"},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n";
    for (bound, expected) in [(None, 16), (Some(3), 3)] {
        let fake = FakeProvider::start(vec![
            many_calls(40),
            Reply::status(200, done).header("content-type", "text/event-stream"),
        ])
        .await;
        let manager = one_tool(
            r#"{"name": "count", "description": "d", "implementation": {"type": "internal", "handler": "count"},
                "annotations": {"readOnlyHint": true}}"#,
        );
        let runs = Arc::new(AtomicU32::new(0));
        let counted = Arc::clone(&runs);
        let executor = ToolExecutor::new(manager).with_internal(
            "count",
            Arc::new(move |_| {
                counted.fetch_add(1, Ordering::SeqCst);
                Box::pin(async { Ok(json!("counted")) })
            }),
        );
        let mut options = AgentOptions::default();
        if let Some(bound) = bound {
            options.max_calls_per_answer = bound;
        }
        let answer = Agent::new(provider(Dialect::OpenAi, &fake), executor)
            .with_options(options)
            .run("count")
            .await;
        assert_eq!(answer.reason, DoneReason::Completed, "{:?}", answer.error);
        assert_eq!(runs.load(Ordering::SeqCst), expected, "calls run");
        // Every call is answered once, in order: the first ones ran, the rest are told why not.
        let texts: Vec<&str> = answer
            .tool_results
            .iter()
            .map(|r| r.result.text.as_str())
            .collect();
        assert_eq!(texts.len(), 40);
        let not_run = format!(
            "Error: not run: at most {expected} tool calls per answer; ask again for the rest"
        );
        for (n, text) in texts.iter().enumerate() {
            let want = if n < expected as usize {
                "counted"
            } else {
                not_run.as_str()
            };
            assert_eq!(*text, want, "result {n}");
        }
        let next = &fake.bodies()[1];
        let results = next["messages"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|m| m["role"] == "tool")
            .count();
        assert_eq!(results, 40, "{next}");
    }
}
