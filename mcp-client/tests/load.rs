//! Load: a host makes 100,000 calls through its executor to 8 servers at once. Every call gets
//! its own answer (zero lost, zero mismatched), and the host does not grow: resident memory
//! peaks within 2× of its steady state, and open file descriptors and live tasks are the same
//! after the run as before it. Its own test binary, so no other test shares the process whose
//! memory, descriptors and tasks are counted.
#![expect(
    clippy::unwrap_used,
    reason = "tests: an unexpected error should fail the test with its message"
)]

#[allow(dead_code, reason = "the load test uses only the fake-server helper")]
#[path = "integration/harness.rs"]
mod harness;

use std::{
    sync::{
        Arc,
        atomic::{AtomicU64, Ordering},
    },
    time::{Duration, Instant},
};

use mcp_client::{McpTools, ServerConfig, ServerPool, ToolExecutor, ToolManager};
use serde_json::json;

const SERVERS: usize = 8;
const CALLS: usize = 100_000;
/// Calls in flight at once, spread over the servers.
const IN_FLIGHT: usize = 64;
/// Calls made before the steady state is measured.
const WARM_UP: usize = 5_000;

fn fake_server(n: usize) -> ServerConfig {
    let mut config = harness::fake(&format!("load-{n}"), &["clean"]);
    config.call_timeout = Duration::from_secs(60);
    config
}

/// This process's resident memory in KiB.
fn rss_kib() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches(" kB").trim().parse().ok())
        .unwrap()
}

fn open_fds() -> usize {
    std::fs::read_dir("/proc/self/fd").unwrap().count()
}

/// Runs `calls` echo calls, `IN_FLIGHT` at a time; returns how many answers were wrong or
/// missing. Call `i` goes to server `i % SERVERS` with a message only it carries.
async fn run_calls(executor: &ToolExecutor, range: std::ops::Range<usize>) -> (u64, u64) {
    let next = Arc::new(AtomicU64::new(range.start as u64));
    let end = range.end as u64;
    let failed = Arc::new(AtomicU64::new(0));
    let mismatched = Arc::new(AtomicU64::new(0));
    let mut workers = tokio::task::JoinSet::new();
    for _ in 0..IN_FLIGHT {
        let (executor, next) = (executor.clone(), Arc::clone(&next));
        let (failed, mismatched) = (Arc::clone(&failed), Arc::clone(&mismatched));
        workers.spawn(async move {
            loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                if i >= end {
                    return;
                }
                let tool = format!("load-{}__echo", i % SERVERS as u64);
                let message = format!("call {i}");
                let outcome = executor.execute(&tool, json!({"message": message})).await;
                if !outcome.is_success() {
                    failed.fetch_add(1, Ordering::Relaxed);
                    eprintln!("call {i} failed: {:?}", outcome.error_text());
                    continue;
                }
                let text = outcome
                    .result
                    .as_ref()
                    .ok()
                    .and_then(|r| r.pointer("/content/0/text"))
                    .and_then(serde_json::Value::as_str);
                if text != Some(format!("Echo: {message}").as_str()) {
                    mismatched.fetch_add(1, Ordering::Relaxed);
                    eprintln!("call {i} got {text:?}");
                }
            }
        });
    }
    while workers.join_next().await.is_some() {}
    (
        failed.load(Ordering::Relaxed),
        mismatched.load(Ordering::Relaxed),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hundred_thousand_calls_over_eight_servers_lose_nothing_and_leak_nothing() {
    let pool = ServerPool::new((0..SERVERS).map(fake_server).collect());
    let report = pool.connect_all().await;
    assert_eq!(report.connected.len(), SERVERS, "{}", report.summary());
    let mut manager = ToolManager::new();
    manager.add_mcp(&McpTools::discover(&pool).await);
    let executor = ToolExecutor::new(manager).with_mcp(pool.clone(), McpTools::normalizer(&pool));

    let started = Instant::now();
    let warm = run_calls(&executor, 0..WARM_UP).await;
    assert_eq!(
        warm,
        (0, 0),
        "failed and mismatched answers while warming up"
    );
    let metrics = tokio::runtime::Handle::current().metrics();
    let steady = (rss_kib(), open_fds(), metrics.num_alive_tasks());

    let peak = Arc::new(AtomicU64::new(steady.0));
    let sampler = tokio::spawn({
        let peak = Arc::clone(&peak);
        async move {
            loop {
                peak.fetch_max(rss_kib(), Ordering::Relaxed);
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
        }
    });
    let (failed, mismatched) = run_calls(&executor, WARM_UP..CALLS).await;
    sampler.abort();
    let _ = sampler.await;
    let took = started.elapsed();
    // The last calls' tasks may still be winding down: a leak is what stays, so wait (up to
    // 10 s) for the counts to come back.
    let settled = Instant::now() + Duration::from_secs(10);
    while (open_fds() > steady.1 || metrics.num_alive_tasks() > steady.2)
        && Instant::now() < settled
    {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let after = (rss_kib(), open_fds(), metrics.num_alive_tasks());
    let peak = peak.load(Ordering::Relaxed).max(after.0);
    eprintln!(
        "{CALLS} calls over {SERVERS} servers, {IN_FLIGHT} in flight: {took:?} ({:.0} calls/s); RSS steady {} KiB, peak {peak} KiB, after {} KiB; fds {} → {}; tasks {} → {}",
        CALLS as f64 / took.as_secs_f64(),
        steady.0,
        after.0,
        steady.1,
        after.1,
        steady.2,
        after.2,
    );
    assert_eq!(failed, 0, "calls that failed");
    assert_eq!(mismatched, 0, "answers that were not the call's own");
    assert!(
        peak <= 2 * steady.0,
        "RSS peaked at {peak} KiB, over twice the steady {} KiB",
        steady.0
    );
    assert!(after.1 <= steady.1, "open file descriptors grew");
    assert!(after.2 <= steady.2, "live tasks grew");
    pool.shutdown().await;
}
