//! Our server beside third-party MCP servers, driven the same raw way: start → initialize,
//! round trip of sequential `tools/call`s, calls per second, peak memory.
//! Run: `cargo build --release --workspace --bins && cargo bench -p protocol-tests --bench peers`.
#![allow(clippy::unwrap_used, clippy::print_stdout, missing_docs)]

use std::time::{Duration, Instant};

use protocol_tests::{
    peers::{PYTHON_FASTMCP, python_venv, server_everything, target_dir, workspace_root},
    session::Session,
};
use serde_json::{Value, json};

const CALLS: usize = 2_000;

struct Row {
    label: String,
    init: Duration,
    p50: Duration,
    p99: Duration,
    per_second: f64,
    peak_rss_kib: u64,
}

fn peak_rss_kib(pid: u32) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()
        .and_then(|status| {
            status
                .lines()
                .find(|l| l.starts_with("VmHWM:"))
                .and_then(|l| l.split_whitespace().nth(1)?.parse().ok())
        })
        .unwrap_or(0)
}

async fn measure(label: &str, command: Vec<String>, tool: &str, args: Value) -> Row {
    let violations = std::sync::Arc::default();
    let started = Instant::now();
    let mut session = Session::start(&command, label, violations).unwrap();
    let init = session
        .initialize("2025-11-25")
        .await
        .expect("initialize answered");
    assert!(init.get("result").is_some(), "{init}");
    let init_time = started.elapsed();
    let params = json!({"name": tool, "arguments": args});
    for _ in 0..100 {
        session
            .request("tools/call", Some(params.clone()), Duration::from_secs(10))
            .await
            .unwrap();
    }
    let mut samples = Vec::with_capacity(CALLS);
    let run = Instant::now();
    for _ in 0..CALLS {
        let call = Instant::now();
        let response = session
            .request("tools/call", Some(params.clone()), Duration::from_secs(10))
            .await
            .unwrap();
        samples.push(call.elapsed());
        assert!(response.get("result").is_some(), "{response}");
    }
    let total = run.elapsed();
    samples.sort();
    let pid = session.pid().unwrap_or_default();
    let row = Row {
        label: label.to_owned(),
        init: init_time,
        p50: samples[CALLS / 2],
        p99: samples[CALLS * 99 / 100],
        per_second: CALLS as f64 / total.as_secs_f64(),
        peak_rss_kib: peak_rss_kib(pid),
    };
    session.close_and_wait(Duration::from_secs(2)).await;
    row
}

fn main() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let release = target_dir().join("release/zwave-mcp-server");
    let ours = if release.is_file() {
        release
    } else {
        target_dir().join("debug/zwave-mcp-server")
    };
    let (node, everything) = server_everything();
    let python = python_venv("mcp1", PYTHON_FASTMCP)
        .to_string_lossy()
        .into_owned();
    let fastmcp = workspace_root()
        .join("fixtures/peers/fastmcp_server.py")
        .to_string_lossy()
        .into_owned();
    let rows = runtime.block_on(async {
        vec![
            measure(
                &format!(
                    "zwave-mcp-server --demo ({})",
                    if ours.ends_with("release/zwave-mcp-server") {
                        "release"
                    } else {
                        "debug!"
                    }
                ),
                vec![ours.to_string_lossy().into_owned(), "--demo".into()],
                "get_device_status",
                json!({"deviceName": "Switch One"}),
            )
            .await,
            measure(
                "server-everything (Node)",
                std::iter::once(node).chain(everything).collect(),
                "echo",
                json!({"message": "hi"}),
            )
            .await,
            measure(
                "FastMCP (Python, mcp 1.30)",
                vec![python, fastmcp],
                "add",
                json!({"a": 1, "b": 2}),
            )
            .await,
        ]
    });
    println!(
        "{:<34} {:>12} {:>10} {:>10} {:>10} {:>12}",
        "server (2,000 sequential tools/call)", "start→init", "p50", "p99", "calls/s", "peak RSS"
    );
    for row in rows {
        println!(
            "{:<34} {:>12.1?} {:>10.1?} {:>10.1?} {:>10.0} {:>9.1} MiB",
            row.label,
            row.init,
            row.p50,
            row.p99,
            row.per_second,
            row.peak_rss_kib as f64 / 1024.0
        );
    }
    println!(
        "our server's figures include its embedded MQTT broker and simulated gateway (--demo)"
    );
}
