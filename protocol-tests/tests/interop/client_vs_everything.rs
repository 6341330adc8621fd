//! mcp-client → `@modelcontextprotocol/server-everything` (the TypeScript reference server).

use std::{
    sync::{Arc, Mutex},
    time::Duration,
};

use mcp_client::{ServerCommand, ServerConfig, ServerConnection, connection::ProgressFn};
use serde_json::json;
use test_support::peers::server_everything;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_client_calls_echo_get_sum_and_receives_progress_from_server_everything() {
    let (command, args) = server_everything();
    let mut config = ServerConfig::new(ServerCommand::new("everything", command, args));
    config.init_timeout = Duration::from_secs(60);
    let server = ServerConnection::new(config);
    let info = server.connect().await.unwrap();
    assert_eq!(info.protocol_version, "2025-11-25");

    let tools: Vec<String> = server
        .tools()
        .await
        .unwrap()
        .iter()
        .map(|t| t.name.to_string())
        .collect();
    for expected in ["echo", "get-sum", "trigger-long-running-operation"] {
        assert!(
            tools.contains(&expected.to_owned()),
            "{expected} missing from {tools:?}"
        );
    }
    let echo = server
        .call_tool("echo", crate::support::args(json!({"message": "hello"})))
        .await
        .unwrap();
    assert_eq!(echo.content[0].as_text().unwrap().text, "Echo: hello");
    let sum = server
        .call_tool("get-sum", crate::support::args(json!({"a": 2, "b": 40})))
        .await
        .unwrap();
    assert!(
        sum.content[0].as_text().unwrap().text.contains("42"),
        "{sum:?}"
    );

    let seen = Arc::new(Mutex::new(Vec::new()));
    let sink = Arc::clone(&seen);
    let callback: ProgressFn = Arc::new(move |p| sink.lock().unwrap().push(p.progress));
    let result = server
        .call_tool_with_progress(
            "trigger-long-running-operation",
            crate::support::args(json!({"duration": 1, "steps": 3})),
            Some(callback),
        )
        .await
        .unwrap();
    assert_ne!(result.is_error, Some(true), "{result:?}");
    let seen = seen.lock().unwrap().clone();
    assert_eq!(
        seen.len(),
        3,
        "one progress notification per step: {seen:?}"
    );
    assert!(seen.windows(2).all(|w| w[0] < w[1]), "{seen:?}");

    server.shutdown().await;
    crate::support::assert_exited(info.pid.unwrap());
}
