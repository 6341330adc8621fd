//! ToolExecutor: every scenario of the requirements with its exact text, timeouts, panics, batches.

use std::{
    sync::Arc,
    time::{Duration, Instant},
};

use mcp_client::tools::{
    ToolCall, ToolError, ToolOutcome,
    definition::{self, Implementation, ToolDefinition},
    executor::{InternalHandler, ToolExecutor},
    manager::ToolManager,
};
use serde_json::{Value, json};

use crate::harness::fixture_path;

fn local_tools() -> ToolManager {
    let mut manager = ToolManager::new();
    for tool in definition::load_file(&fixture_path("tools/local-tools.json")).unwrap() {
        manager.add(tool).unwrap();
    }
    manager
}

fn internal(
    f: impl Fn(rmcp::model::JsonObject) -> Result<Value, String> + Send + Sync + 'static,
) -> InternalHandler {
    let f = Arc::new(f);
    Arc::new(move |params| {
        let f = Arc::clone(&f);
        Box::pin(async move { f(params) })
    })
}

fn executor() -> ToolExecutor {
    ToolExecutor::new(local_tools()).with_internal(
        "set_volume",
        internal(|params| Ok(json!({"volume": params["level"]}))),
    )
}

fn error_of(outcome: &ToolOutcome) -> String {
    assert!(!outcome.is_success(), "expected a failure: {outcome:?}");
    outcome.error_text().unwrap()
}

// Successful tool execution / Success result structure
#[tokio::test]
async fn a_successful_call_has_the_spec_shape() {
    let outcome = executor().execute("echo", json!({"message": "hi"})).await;
    let json = serde_json::to_value(&outcome).unwrap();
    assert_eq!(json["success"], true);
    assert_eq!(json["result"], json!({"echo": {"message": "hi"}}));
    assert_eq!(json["tool_name"], "echo");
    assert!(json["execution_time_ms"].is_u64());
    assert!(json.get("error").is_none());
}

// Tool not found / Error result structure
#[tokio::test]
async fn an_unknown_tool_is_an_error_outcome_not_an_exception() {
    let outcome = executor().execute("teleport", json!({})).await;
    let json = serde_json::to_value(&outcome).unwrap();
    assert_eq!(
        json,
        json!({"success": false, "error": "Tool 'teleport' not found", "tool_name": "teleport", "execution_time_ms": json["execution_time_ms"]})
    );
    assert!(matches!(outcome.result, Err(ToolError::UnknownTool { .. })));
}

// Parameter validation failure, Type checking, Enum validation, Allow extra parameters
#[tokio::test]
async fn parameters_are_validated_against_the_schema() {
    let executor = executor();
    let cases = [
        (
            "math_eval",
            json!({}),
            "Invalid parameters: missing 'expression'",
        ),
        (
            "get_weather",
            json!({"city": "Oslo", "days": 2.5}),
            "Invalid parameters: 'days' must be an integer (a whole number), got 2.5",
        ),
        (
            "get_weather",
            json!({"city": 5}),
            "Invalid parameters: 'city' must be a string, got 5",
        ),
        (
            "get_weather",
            json!({"city": "Oslo", "unit": "kelvin"}),
            "Invalid parameters: 'unit' must be one of \"celsius\", \"fahrenheit\", got \"kelvin\"",
        ),
        (
            "echo",
            json!([1, 2]),
            "Invalid parameters: expected an object of named parameters, got an array",
        ),
    ];
    for (tool, args, expected) in cases {
        let outcome = executor.execute(tool, args).await;
        assert_eq!(error_of(&outcome), expected);
    }
    let extra = executor
        .execute(
            "get_weather",
            json!({"city": "Oslo", "days": 3, "mood": "happy"}),
        )
        .await;
    assert!(
        extra.is_success(),
        "extra parameters are ignored: {extra:?}"
    );
}

// Execute mock tool
#[tokio::test]
async fn mock_tools_answer_their_mock_response() {
    // How fast is for the benchmarks (`cargo bench -p mcp-client --bench agent`); here only
    // that nothing waits: well under a second even on a loaded machine.
    let started = Instant::now();
    let outcome = executor()
        .execute("get_weather", json!({"city": "Anywhere"}))
        .await;
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "mock answered in {:?}",
        started.elapsed()
    );
    assert_eq!(
        outcome.result.unwrap(),
        json!({"city": "Berlin", "temperature": 21, "condition": "sunny"})
    );
}

// Builtin handler not found, Internal handler not found, Execute internal tool
#[tokio::test]
async fn handlers_are_looked_up_by_name() {
    let executor = executor();
    assert_eq!(
        error_of(&executor.execute("broken_builtin", json!({})).await),
        "Builtin handler 'no_such_handler' not found"
    );
    assert_eq!(
        error_of(&executor.execute("broken_internal", json!({})).await),
        "Internal handler 'never_registered' not found"
    );
    let volume = executor.execute("set_volume", json!({"level": 30})).await;
    assert_eq!(volume.result.unwrap(), json!({"volume": 30}));
}

// Math evaluation handler, Include time in error results
#[tokio::test]
async fn math_eval_answers_and_refuses_with_descriptions() {
    let executor = executor();
    assert_eq!(
        executor
            .execute("math_eval", json!({"expression": "2+2"}))
            .await
            .result
            .unwrap(),
        json!({"result": 4})
    );
    let failed = executor
        .execute("math_eval", json!({"expression": "1/0"}))
        .await;
    assert_eq!(error_of(&failed), "division by zero at position 1");
    assert!(serde_json::to_value(&failed).unwrap()["execution_time_ms"].is_u64());
}

/// A 1 MB expression, 100,000 nested parentheses, `print(1)`, division by zero and unknown
/// names, on a 256 KiB stack: refused cleanly, no crash.
#[test]
fn math_eval_survives_hostile_input_on_a_small_stack() {
    let handle = std::thread::Builder::new()
        .stack_size(256 * 1024)
        .spawn(|| {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .unwrap();
            runtime.block_on(async {
                let executor = executor();
                let megabyte = "1+".repeat(512 * 1024) + "1";
                let nested = format!("{}1{}", "(".repeat(100_000), ")".repeat(100_000));
                let mut errors = Vec::new();
                for expression in [
                    megabyte,
                    nested,
                    "print(1)".into(),
                    "5/0".into(),
                    "foo * 2".into(),
                ] {
                    let outcome = executor
                        .execute("math_eval", json!({"expression": expression}))
                        .await;
                    errors.push(outcome.error_text().unwrap());
                }
                errors
            })
        })
        .unwrap();
    let errors = handle.join().expect("no stack overflow, no panic");
    assert_eq!(
        errors[0],
        "expression is 1048577 characters long; the limit is 10000"
    );
    assert_eq!(
        errors[1],
        "expression is 200001 characters long; the limit is 10000"
    );
    assert!(
        errors[2].starts_with("unknown function 'print' at position 0: available functions are "),
        "{}",
        errors[2]
    );
    assert_eq!(errors[3], "division by zero at position 1");
    assert_eq!(
        errors[4],
        "unknown name 'foo' at position 0: only the constants pi and e can be used"
    );
}

fn slow_tool(name: &str, timeout: Option<Duration>) -> ToolDefinition {
    ToolDefinition {
        name: name.into(),
        description: "sleeps".into(),
        parameters: json!({"type": "object"}).as_object().unwrap().clone(),
        implementation: Implementation::Internal {
            handler: "sleep".into(),
        },
        timeout,
        hints: Default::default(),
    }
}

fn sleeping() -> InternalHandler {
    Arc::new(|params| {
        Box::pin(async move {
            let ms = params.get("ms").and_then(Value::as_u64).unwrap_or(0);
            tokio::time::sleep(Duration::from_millis(ms)).await;
            Ok(json!({"slept_ms": ms}))
        })
    })
}

// Tool execution timeout
#[tokio::test]
async fn a_slow_tool_is_cut_off_at_its_timeout() {
    let mut manager = ToolManager::new();
    manager
        .add(slow_tool("nap", Some(Duration::from_millis(100))))
        .unwrap();
    let executor = ToolExecutor::new(manager).with_internal("sleep", sleeping());
    let started = Instant::now();
    // The handler would sleep a minute: finishing in well under that proves the cut-off,
    // without a tight wall-clock bound.
    let outcome = executor.execute("nap", json!({"ms": 60_000})).await;
    assert!(started.elapsed() < Duration::from_secs(30));
    assert_eq!(
        error_of(&outcome),
        "Tool 'nap' timed out after 100ms and was cancelled; try again, or ask for less"
    );
}

#[tokio::test]
async fn a_panicking_handler_becomes_an_error_and_the_host_goes_on() {
    let mut manager = ToolManager::new();
    manager.add(slow_tool("boom", None)).unwrap();
    let executor =
        ToolExecutor::new(manager).with_internal("sleep", internal(|_| panic!("kaboom")));
    let outcome = executor.execute("boom", json!({})).await;
    assert_eq!(
        error_of(&outcome),
        "Tool 'boom' failed: its handler panicked (kaboom)"
    );
    let again = executor.execute("boom", json!({})).await;
    assert!(!again.is_success(), "still answering after a panic");
}

#[tokio::test]
async fn a_batch_runs_concurrently_and_answers_in_call_order() {
    let mut manager = ToolManager::new();
    manager.add(slow_tool("nap", None)).unwrap();
    // Each call waits at a rendezvous of three: run one at a time, the first would wait
    // there until its 30 s timeout. Concurrency is shown without timing anything.
    let rendezvous = Arc::new(tokio::sync::Barrier::new(3));
    let handler: InternalHandler = Arc::new(move |params| {
        let rendezvous = Arc::clone(&rendezvous);
        Box::pin(async move {
            rendezvous.wait().await;
            Ok(json!({"slept_ms": params["ms"]}))
        })
    });
    let executor = ToolExecutor::new(manager)
        .with_internal("sleep", handler)
        .with_default_timeout(Duration::from_secs(30));
    let calls: Vec<ToolCall> = [300, 200, 100]
        .iter()
        .enumerate()
        .map(|(i, ms)| ToolCall {
            id: format!("call-{i}"),
            name: "nap".into(),
            args: json!({"ms": ms}),
        })
        .chain(std::iter::once(ToolCall {
            id: "call-3".into(),
            name: "missing".into(),
            args: json!({}),
        }))
        .collect();
    let outcomes = executor.execute_all(&calls).await;
    assert_eq!(outcomes.len(), 4, "one outcome per call");
    assert!(
        outcomes[..3].iter().all(|o| o.is_success()),
        "all three met at the rendezvous: {outcomes:?}"
    );
    let slept: Vec<Value> = outcomes[..3]
        .iter()
        .map(|o| o.result.clone().unwrap()["slept_ms"].clone())
        .collect();
    assert_eq!(slept, [json!(300), json!(200), json!(100)]);
    assert_eq!(error_of(&outcomes[3]), "Tool 'missing' not found");
}

// Log slow tools / Log tool execution (arguments with secrets redacted)
#[tokio::test]
async fn slow_calls_warn_and_every_call_logs_redacted_arguments() {
    crate::harness::capture_logs();
    let mut manager = ToolManager::new();
    manager.add(slow_tool("sluggish_tool", None)).unwrap();
    let executor = ToolExecutor::new(manager).with_internal("sleep", sleeping());
    let outcome = executor
        .execute(
            "sluggish_tool",
            json!({"ms": 1100, "api_key": "sk-live-123"}),
        )
        .await;
    assert!(outcome.is_success());
    let logs = crate::harness::all_logs();
    let slow = logs
        .iter()
        .find(|l| l.contains("slow tool call") && l.contains("tool=sluggish_tool"))
        .expect("a slow-call warning");
    let took: u64 = slow
        .split("duration_ms=")
        .nth(1)
        .and_then(|rest| rest.split(|c: char| !c.is_ascii_digit()).next())
        .and_then(|ms| ms.parse().ok())
        .expect("duration_ms in the warning");
    assert!(slow.contains("WARN") && took >= 1100, "{slow}");
    let done = logs
        .iter()
        .find(|l| l.contains("tool call succeeded") && l.contains("tool=sluggish_tool"))
        .unwrap();
    assert!(
        done.contains(r#"\"api_key\":\"***\""#) && !done.contains("sk-live-123"),
        "{done}"
    );
}

// Network error / a dead server, through the executor
#[tokio::test]
async fn a_dead_mcp_server_is_an_error_outcome_with_its_exit_and_its_stderr_only_in_the_log() {
    crate::harness::capture_logs();
    let pool = mcp_client::ServerPool::new(vec![crate::harness::fake("exec-crash", &["clean"])]);
    pool.connect_all().await;
    let mut manager = ToolManager::new();
    manager.add_mcp(&mcp_client::McpTools::discover(&pool).await);
    let executor =
        ToolExecutor::new(manager).with_mcp(pool.clone(), mcp_client::Normalizer::with_builtins());
    let outcome = executor.execute("crash", json!({})).await;
    // The model reads one line: what happened and how the process ended.
    assert_eq!(
        error_of(&outcome),
        "MCP server died during `tools/call crash`: server `exec-crash`: the server exited before answering (exit status: 3)"
    );
    // The host's log keeps the server's stderr.
    assert!(
        crate::harness::logs_of("exec-crash")
            .iter()
            .any(|l| l.contains("MCP tool call failed")
                && l.contains("fatal: simulated crash in the middle of a call")),
        "{:?}",
        crate::harness::logs_of("exec-crash")
    );
    let echo = executor.execute("echo", json!({"message": "after"})).await;
    assert_eq!(
        echo.result.unwrap()["content"][0]["text"],
        "Echo: after",
        "restarted on the next call"
    );
    pool.shutdown().await;
}

// Built-in tools are not affected (local tools are never normalized)
#[tokio::test]
async fn local_tools_are_never_normalized() {
    let mut manager = ToolManager::new();
    manager
        .add(ToolDefinition {
            name: "greet_local".into(),
            description: "greets".into(),
            parameters: json!({"type": "object", "properties": {"userName": {"type": "string"}}, "required": ["userName"]})
                .as_object()
                .unwrap()
                .clone(),
            implementation: Implementation::Builtin { handler: "echo".into() },
            timeout: None,
            hints: Default::default(),
        })
        .unwrap();
    let executor = ToolExecutor::new(manager).with_mcp(
        mcp_client::ServerPool::new(vec![]),
        mcp_client::Normalizer::with_builtins(),
    );
    let outcome = executor
        .execute("greet_local", json!({"user_name": "Ann"}))
        .await;
    assert_eq!(error_of(&outcome), "Invalid parameters: missing 'userName'");
}

#[tokio::test]
async fn a_handler_that_panics_before_returning_its_future_is_an_error_too() {
    let mut manager = ToolManager::new();
    manager.add(slow_tool("early", None)).unwrap();
    let handler: mcp_client::tools::executor::InternalHandler =
        std::sync::Arc::new(|_| panic!("bad arguments, no future"));
    let executor = ToolExecutor::new(manager).with_internal("sleep", handler);
    let outcome = executor.execute("early", json!({})).await;
    assert_eq!(
        error_of(&outcome),
        "Tool 'early' failed: its handler panicked (bad arguments, no future)"
    );
    assert!(!executor.execute("early", json!({})).await.is_success());
}
