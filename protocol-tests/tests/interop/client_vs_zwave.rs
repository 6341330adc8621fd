//! mcp-client → the real `zwave-mcp-server --demo` binary.

use std::time::Duration;

use mcp_client::{McpTools, ServerCommand, ServerConfig, ServerPool, ToolExecutor, ToolManager};
use rmcp::model::ProtocolVersion;
use serde_json::json;
use test_support::workspace_bin;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_client_lists_and_calls_the_zwave_tools_with_normalized_arguments() {
    // Unpinned, both speak the newest revision: server/discover, no handshake.
    lists_and_calls(None, "2026-07-28").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_same_at_2025_11_25_with_the_initialize_handshake() {
    lists_and_calls(Some(ProtocolVersion::V_2025_11_25), "2025-11-25").await;
}

/// Lists the demo home's tools and calls them through the executor, with the configuration
/// pinning `pinned`; the session must speak `expected`.
async fn lists_and_calls(pinned: Option<ProtocolVersion>, expected: &str) {
    let binary = workspace_bin("zwave-mcp-server")
        .to_string_lossy()
        .into_owned();
    // A switch reports its new state ~1.1 s after a command (the real driver's delay, which
    // the demo home keeps): waiting up to 3 s lets the device confirm it.
    let mut config = ServerConfig::new(ServerCommand::new(
        "zwave",
        binary,
        ["--demo", "--confirm-timeout", "3s"],
    ));
    config.init_timeout = Duration::from_secs(20);
    config.protocol_version = pinned;
    let pool = ServerPool::new(vec![config]);
    let report = pool.connect_all().await;
    assert!(report.failed.is_empty(), "{}", report.summary());
    assert_eq!(report.connected["zwave"].protocol_version, expected);
    assert_eq!(report.connected["zwave"].server, "zwave-mcp-server 0.1.0");

    let catalog = McpTools::discover(&pool).await;
    let mut names: Vec<&str> = catalog.all().iter().map(|t| t.name.as_str()).collect();
    names.sort_unstable();
    assert_eq!(
        names,
        [
            "control_zwave_device",
            "get_device_sensor_data",
            "get_device_status",
            "get_zwave_health",
            "list_zwave_devices"
        ]
    );

    // The model's snake_case arguments reach the server as camelCase, through the
    // executor every call takes (validation after normalization, timeout, timing).
    let mut manager = ToolManager::new();
    manager.add_mcp(&catalog);
    let executor = ToolExecutor::new(manager).with_mcp(pool.clone(), McpTools::normalizer(&pool));
    let outcome = executor
        .execute(
            "control_zwave_device",
            json!({"device_name": "Switch One", "command": "on"}),
        )
        .await;
    assert!(outcome.is_success(), "{outcome:?}");
    assert_eq!(
        outcome.result.unwrap()["structuredContent"]["confirmed"],
        true
    );

    // A server-side refusal comes back with the server's own words.
    let outcome = executor
        .execute(
            "control_zwave_device",
            json!({"device_name": "Switch One", "command": "dim", "brightness": 50}),
        )
        .await;
    assert!(!outcome.is_success(), "{outcome:?}");
    assert_eq!(
        outcome.error_text().as_deref(),
        Some(
            "\"Switch One\" (node 2, Kitchen) is a switch and cannot take action \"dim\": use \"on\" or \"off\""
        )
    );
    crate::support::shut_down_and_check(&pool, "zwave").await;
}
