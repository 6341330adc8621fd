//! mcp-client → a FastMCP server (the Python SDK 1.x line).

use std::time::Duration;

use mcp_client::{McpTools, ServerCommand, ServerConfig, ServerPool, ToolExecutor, ToolManager};
use serde_json::json;
use test_support::fixture_path;
use test_support::peers::{PYTHON_FASTMCP, python_venv};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_client_calls_a_fastmcp_server_and_leaves_its_snake_case_alone() {
    let python = python_venv("mcp1", PYTHON_FASTMCP)
        .to_string_lossy()
        .into_owned();
    let script = fixture_path("peers/fastmcp_server.py")
        .to_string_lossy()
        .into_owned();
    let mut config = ServerConfig::new(ServerCommand::new("fastmcp", python, [script]));
    config.init_timeout = Duration::from_secs(60);
    let pool = ServerPool::new(vec![config]);
    let report = pool.connect_all().await;
    assert!(report.failed.is_empty(), "{}", report.summary());
    let info = &report.connected["fastmcp"];
    assert!(info.server.starts_with("fastmcp-peer "), "{}", info.server);

    let catalog = McpTools::discover(&pool).await;
    let mut names: Vec<&str> = catalog.all().iter().map(|t| t.name.as_str()).collect();
    names.sort_unstable();
    assert_eq!(names, ["add", "count", "favourite", "shout"]);
    let mut manager = ToolManager::new();
    manager.add_mcp(&catalog);
    let executor = ToolExecutor::new(manager).with_mcp(pool.clone(), McpTools::normalizer(&pool));
    let sum = executor.execute("add", json!({"a": 2, "b": 40})).await;
    assert!(sum.is_success(), "{sum:?}");
    assert_eq!(sum.result.unwrap()["content"][0]["text"], "42");
    // The server's own parameter is `user_name`: the heuristic must not turn it into `userName`
    // (and the schema check after normalization would refuse it if it did).
    let shout = executor.execute("shout", json!({"user_name": "ann"})).await;
    assert!(shout.is_success(), "{shout:?}");
    assert_eq!(shout.result.unwrap()["content"][0]["text"], "HELLO, ANN!");
    crate::support::shut_down_and_check(&pool, "fastmcp").await;
}
