//! The agent end to end: a fake provider on loopback replaying recorded responses, the real
//! `zwave-mcp-server --demo` (or a fake MCP server) running the tools, and assertions on the
//! request bodies the provider received, the events, the conversation and the device state.
//!
//! | module | proves |
//! |---|---|
//! | `dialects` | the same question dims the demo light through each provider, streamed or not |
//! | `turns` | a turn's calls run together, every call is answered, the loop stops when told |
//! | `provider_errors` | rate limits, retries, refused keys, missing models, cut streams |
//! | `approval` | declined calls, refinement, and an answer forced without tools |
//! | `quirks` | what llama.cpp and LiteLLM really send, replayed from their captures |

mod approval;
mod dialects;
mod provider_errors;
mod quirks;
mod turns;

use std::{
    sync::{Arc, Mutex},
    time::{Duration, Instant},
};

use mcp_client::{
    McpTools, ServerCommand, ServerConfig, ServerPool,
    agent::{Agent, AgentEvent, AgentOptions, Approver, Conversation, DoneReason, EventSink},
    connection::RetryPolicy,
    llm::{Dialect, HttpProvider, Message, ProviderConfig, ToolChoice},
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
        test_support::workspace_bin("zwave-mcp-server").to_string_lossy(),
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

fn fake_server(record: Option<&std::path::Path>) -> ServerConfig {
    let mut config = harness::fake("fake", &["clean"]);
    if let Some(path) = record {
        config
            .command_mut()
            .unwrap()
            .env
            .insert("FAKE_RECORD".into(), path.to_string_lossy().into_owned());
    }
    config
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
