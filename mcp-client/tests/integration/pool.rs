//! Several servers together: concurrent start, degraded mode, the tool catalog and
//! normalized calls.

use std::time::{Duration, Instant};

use mcp_client::{McpTools, ServerPool};
use serde_json::json;

use crate::harness::{args, capture_logs, fake, logs_of};

#[tokio::test]
async fn servers_start_concurrently_and_failures_are_reported_not_fatal() {
    capture_logs();
    let mut slow = fake("pool-slow", &["slowstart", "1"]);
    slow.tool_prefix = Some("slow".into());
    let mut disabled = fake("pool-off", &["clean"]);
    disabled.disabled = true;
    let pool = ServerPool::new(vec![
        fake("pool-good", &["clean"]),
        slow,
        fake("pool-bad", &["exit"]),
        disabled,
    ]);
    let started = Instant::now();
    let handle = pool.start();
    assert!(
        started.elapsed() < Duration::from_millis(200),
        "start() does not block"
    );
    let report = handle.await.unwrap();
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "connected concurrently"
    );
    assert_eq!(
        report.connected.keys().collect::<Vec<_>>(),
        ["pool-good", "pool-slow"]
    );
    assert_eq!(report.failed.keys().collect::<Vec<_>>(), ["pool-bad"]);
    assert_eq!(report.disabled, ["pool-off"]);
    let summary = report.summary();
    assert!(
        summary.contains(
            "MCP connection failed after 1 attempt: server `pool-bad`: initialize failed"
        ),
        "{summary}"
    );
    assert!(
        summary.contains("    config error: missing TOKEN"),
        "{summary}"
    );
    assert!(
        summary.ends_with("continuing without the tools of pool-bad"),
        "{summary}"
    );

    let catalog = McpTools::discover(&pool).await;
    let names: Vec<&str> = catalog.all().iter().map(|t| t.name.as_str()).collect();
    assert!(
        names.contains(&"echo") && names.contains(&"slow__echo"),
        "{names:?}"
    );
    let normalizer = McpTools::normalizer(&pool);
    let result = catalog
        .call(
            &pool,
            &normalizer,
            "greet",
            args(json!({"user_name": "Ann"})),
        )
        .await
        .unwrap();
    assert_eq!(result.content[0].as_text().unwrap().text, "Hello, Ann");
    assert!(
        logs_of("pool-good")
            .iter()
            .any(|l| l.contains(r#"normalized arguments: {user_name: "Ann"} → {userName: "Ann"}"#)),
        "{:#?}",
        logs_of("pool-good")
    );
    let err = catalog
        .call(&pool, &normalizer, "nope", args(json!({})))
        .await
        .unwrap_err();
    assert_eq!(err.to_string(), "Tool 'nope' not found");
    pool.shutdown().await;
}

#[tokio::test]
async fn with_every_server_down_the_host_continues_with_local_tools_only() {
    capture_logs();
    let pool = ServerPool::new(vec![fake("down-a", &["exit"]), fake("down-b", &["exit"])]);
    let report = pool.connect_all().await;
    assert!(report.connected.is_empty());
    assert!(
        report
            .summary()
            .ends_with("continuing with local tools only")
    );
    assert!(McpTools::discover(&pool).await.all().is_empty());
}
