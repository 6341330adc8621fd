//! mcp-client → a FastMCP server (the Python SDK 1.x line): its tools, and what it offers
//! besides (resources, a template, a prompt, completions).

use std::{collections::BTreeMap, time::Duration};

use mcp_client::{
    McpTools, ServerCommand, ServerConfig, ServerConnection, ServerPool, ToolExecutor, ToolManager,
};
use rmcp::model::{Reference, ResourceContents};
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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fastmcp_server_offers_resources_a_prompt_and_completions_but_no_subscriptions() {
    let python = python_venv("mcp1", PYTHON_FASTMCP)
        .to_string_lossy()
        .into_owned();
    let script = fixture_path("peers/fastmcp_offers.py")
        .to_string_lossy()
        .into_owned();
    let mut config = ServerConfig::new(ServerCommand::new("offers", python, [script]));
    config.init_timeout = Duration::from_secs(60);
    let server = ServerConnection::new(config);
    server.connect().await.unwrap();
    let resources = server.resources().await.unwrap();
    assert_eq!(resources.len(), 1, "{resources:?}");
    assert_eq!(resources[0].uri, "notes://today");
    let templates = server.resource_templates().await.unwrap();
    assert_eq!(templates[0].uri_template, "notes://day/{day}");
    let read = server.read_resource("notes://day/friday").await.unwrap();
    let ResourceContents::TextResourceContents { text, .. } = &read.contents[0] else {
        panic!("{read:?}");
    };
    assert_eq!(text, "the note of friday");
    let prompts = server.prompts().await.unwrap();
    assert_eq!(prompts[0].name, "review");
    let topic = BTreeMap::from([("topic".to_owned(), "locks".to_owned())]);
    let got = server.get_prompt("review", &topic).await.unwrap();
    let said = serde_json::to_string(&got.messages).unwrap();
    assert!(said.contains("Review the locks of the home."), "{said}");
    let completion = server
        .complete(
            Reference::for_prompt("review"),
            "topic",
            "l",
            &BTreeMap::new(),
        )
        .await
        .unwrap();
    assert_eq!(completion.values, ["lighting", "locks"]);
    let days = server
        .complete(
            Reference::for_resource("notes://day/{day}"),
            "day",
            "t",
            &BTreeMap::new(),
        )
        .await
        .unwrap();
    assert_eq!(days.values, ["tuesday"]);
    // FastMCP 1.x announces `resources` without `subscribe`: nothing is sent.
    assert_eq!(
        server
            .subscribe("notes://today")
            .await
            .unwrap_err()
            .to_string(),
        "MCP server `offers`: `resources/subscribe` was not sent: the server does not offer subscriptions to resources (its `resources` capability has no `subscribe`)"
    );
    server.shutdown().await;
}
