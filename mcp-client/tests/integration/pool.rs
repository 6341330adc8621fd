//! Several servers together: concurrent start, degraded mode, the tool catalog and
//! normalized calls.

use std::time::{Duration, Instant};

use mcp_client::{
    ConnectionStatus, McpTools, ServerConnection, ServerPool, ToolError, ToolExecutor, ToolManager,
};
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
    // `pool-slow` sleeps a second before answering: start() returned before that.
    assert!(!handle.is_finished(), "start() does not block");
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
    let mut manager = ToolManager::new();
    manager.add_mcp(&catalog);
    let executor = ToolExecutor::new(manager).with_mcp(pool.clone(), McpTools::normalizer(&pool));
    let outcome = executor.execute("greet", json!({"user_name": "Ann"})).await;
    assert!(outcome.is_success(), "{outcome:?}");
    assert_eq!(outcome.result.unwrap()["content"][0]["text"], "Hello, Ann");
    assert!(
        logs_of("pool-good")
            .iter()
            .any(|l| l.contains(r#"normalized arguments: {user_name: "Ann"} → {userName: "Ann"}"#)),
        "{:#?}",
        logs_of("pool-good")
    );
    let outcome = executor.execute("nope", json!({})).await;
    assert!(
        matches!(outcome.result, Err(ToolError::UnknownTool { .. })),
        "{outcome:?}"
    );
    assert_eq!(
        outcome.error_text().as_deref(),
        Some("Tool 'nope' not found")
    );
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

/// Waits (polling, up to 20 s) until `server`'s status satisfies `wanted`.
async fn wait_for_status(server: &ServerConnection, wanted: impl Fn(&ConnectionStatus) -> bool) {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let status = server.status().await;
        if wanted(&status) {
            return;
        }
        assert!(Instant::now() < deadline, "still {status:?}");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

#[tokio::test]
async fn calls_fail_fast_while_the_server_is_connecting_and_shutdown_stops_the_attempt() {
    let mut config = fake("connecting-srv", &["slowstart", "30"]);
    config.init_timeout = Duration::from_millis(500);
    config.retry.attempts = 3;
    let server = std::sync::Arc::new(ServerConnection::new(config));
    let connecting = tokio::spawn({
        let server = std::sync::Arc::clone(&server);
        async move { server.connect().await }
    });
    wait_for_status(&server, |s| {
        matches!(s, ConnectionStatus::Connecting { attempt: 2, of: 3 })
    })
    .await;
    let err = server
        .call_tool("echo", args(json!({"message": "hi"})))
        .await
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "MCP server `connecting-srv` is connecting, attempt 2 of 3; try again in a moment"
    );
    assert!(err.is_retryable());
    let err = server.connect().await.unwrap_err();
    assert!(
        matches!(err, mcp_client::ClientError::Connecting { .. }),
        "{err}"
    );

    server.shutdown().await;
    let err = connecting.await.unwrap().unwrap_err();
    assert_eq!(
        err.to_string(),
        "MCP connection failed after 1 attempt: server `connecting-srv`: the connection was shut down while the server was starting"
    );
    assert_eq!(server.status().await, ConnectionStatus::Idle);
}

#[tokio::test]
async fn the_executor_sees_servers_that_connect_late_and_tools_that_change() {
    let pool = ServerPool::new(vec![
        fake("early-srv", &["clean"]),
        fake("late-srv", &["clean"]),
    ]);
    pool.get("early-srv").unwrap().connect().await.unwrap();
    let mut manager = ToolManager::new();
    manager.add_mcp(&McpTools::discover(&pool).await);
    let executor = ToolExecutor::new(manager).with_mcp(pool.clone(), McpTools::normalizer(&pool));
    let names = |executor: &ToolExecutor| -> Vec<String> {
        executor
            .manager()
            .all()
            .iter()
            .map(|t| t.definition.name.clone())
            .collect()
    };
    assert!(names(&executor).contains(&"echo".to_owned()));
    assert!(!names(&executor).iter().any(|n| n.starts_with("late-srv__")));

    // A server that connects after the executor was built.
    pool.get("late-srv").unwrap().connect().await.unwrap();
    assert!(executor.refresh().await, "a new session is a change");
    assert!(
        names(&executor).contains(&"late-srv__echo".to_owned()),
        "{:?}",
        names(&executor)
    );
    let outcome = executor
        .execute("late-srv__echo", json!({"message": "late"}))
        .await;
    assert!(outcome.is_success(), "{outcome:?}");
    assert!(!executor.refresh().await, "nothing changed since");

    // `notify` makes early-srv announce a new tool, `added` (a unique name: no prefix), with
    // notifications/tools/list_changed.
    let outcome = executor.execute("early-srv__notify", json!({})).await;
    assert!(outcome.is_success(), "{outcome:?}");
    assert!(executor.refresh().await);
    assert!(
        names(&executor).contains(&"added".to_owned()),
        "{:?}",
        names(&executor)
    );
    pool.shutdown().await;
}

/// Two hosts in one program: each stops only the servers it started (no registry shared by
/// the whole process decides for them).
#[tokio::test]
async fn two_hosts_each_stop_only_their_own_servers() {
    let first = mcp_client::Host::builder()
        .server(fake("host-one", &["clean"]))
        .connect()
        .await
        .unwrap();
    let second = mcp_client::Host::builder()
        .server(fake("host-two", &["clean"]))
        .connect()
        .await
        .unwrap();
    assert_eq!(first.processes().len(), 1);
    assert_eq!(second.processes().len(), 1);

    // What a signal handler of the first host does.
    first.processes().shutdown_all().await;
    let one = first
        .pool()
        .get("host-one")
        .unwrap()
        .process()
        .await
        .unwrap();
    assert!(one.exit().is_some(), "the first host's server was stopped");
    let two = second
        .pool()
        .get("host-two")
        .unwrap()
        .process()
        .await
        .unwrap();
    assert!(two.exit().is_none(), "the second host's server still runs");
    let outcome = second
        .executor()
        .execute("echo", json!({"message": "still here"}))
        .await;
    assert!(outcome.is_success(), "{outcome:?}");
    second.shutdown().await;
    assert!(two.exit().is_some());
}

/// A host's shutdown is final: an executor or agent kept past it never starts its servers
/// again, and its calls say why, nothing sent.
#[tokio::test]
async fn a_host_shut_down_never_starts_its_servers_again() {
    let host = mcp_client::Host::builder()
        .server(fake("host-final", &["clean"]))
        .connect()
        .await
        .unwrap();
    let executor = host.executor().clone();
    let processes = host.processes().clone();
    let server = std::sync::Arc::clone(host.pool().get("host-final").unwrap());
    host.shutdown().await;

    // What an agent does at each turn, then a call.
    executor.refresh().await;
    let outcome = executor.execute("echo", json!({"message": "late"})).await;
    assert!(!outcome.is_success(), "{outcome:?}");
    let err = server
        .call_tool("echo", args(json!({"message": "late"})))
        .await;
    assert_eq!(
        err.unwrap_err().to_string(),
        "MCP server `host-final` was shut down with its host; nothing was sent"
    );
    let Err(mcp_client::ClientError::ShutDown { .. }) = server.connect().await else {
        panic!("a connection shut down connected again");
    };
    assert!(server.process().await.is_none(), "no server was started");
    assert!(processes.is_empty(), "{} processes", processes.len());
}

#[tokio::test]
async fn two_servers_of_one_name_are_refused_before_either_starts() {
    let Err(err) = mcp_client::Host::builder()
        .server(fake("twin", &["clean"]))
        .server(fake("twin", &["exit"]))
        .connect()
        .await
    else {
        panic!("two servers named twin were accepted");
    };
    let text = err.to_string();
    assert!(
        text.starts_with("two MCP servers are named `twin` (`")
            && text.ends_with("): give each server its own name"),
        "{text}"
    );
}
