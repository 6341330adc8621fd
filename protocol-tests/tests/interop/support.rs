//! Small helpers shared by the interop tests.

use mcp_client::ServerPool;
use rmcp::model::JsonObject;
use serde_json::Value;

/// Tool arguments from a `json!` object.
pub fn args(value: Value) -> JsonObject {
    match value {
        Value::Object(map) => map,
        other => panic!("tool arguments must be an object, got {other}"),
    }
}

/// Stops every server of `pool` and checks that `server`'s process is gone.
pub async fn shut_down_and_check(pool: &ServerPool, server: &str) {
    let pid = pool
        .get(server)
        .unwrap()
        .session()
        .await
        .unwrap()
        .pid
        .unwrap();
    pool.shutdown().await;
    assert_exited(pid);
}

/// The process `pid` no longer exists.
pub fn assert_exited(pid: u32) {
    assert!(
        !std::path::Path::new(&format!("/proc/{pid}")).exists(),
        "process {pid} is still there"
    );
}
