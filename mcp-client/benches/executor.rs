//! How long a call through the ToolExecutor takes (validation + execution + outcome), for a
//! mock tool, the echo builtin and math_eval. Run: `cargo bench -p mcp-client --bench executor`.
#![expect(
    clippy::unwrap_used,
    clippy::print_stdout,
    reason = "a benchmark: a failed setup should stop it loudly, and it prints its table"
)]

use std::time::Instant;

use mcp_client::{
    bench::latency::Latencies,
    tools::{definition, executor::ToolExecutor, manager::ToolManager},
};
use serde_json::{Value, json};

const CALLS: usize = 20_000;

fn main() {
    let path = test_support::fixture_path("tools/local-tools.json");
    let mut manager = ToolManager::new();
    for tool in definition::load_file(&path).unwrap() {
        manager.add(tool).unwrap();
    }
    let executor = ToolExecutor::new(manager);
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    println!(
        "{:<24} {:>10} {:>10} {:>10} {:>12}",
        "call (20,000 each)", "p50", "p99", "max", "calls/s"
    );
    let cases: [(&str, &str, Value); 3] = [
        (
            "mock get_weather",
            "get_weather",
            json!({"city": "Oslo", "days": 3}),
        ),
        ("builtin echo", "echo", json!({"message": "hello"})),
        (
            "builtin math_eval",
            "math_eval",
            json!({"expression": "2 * (3 + 4) ^ 2 / sqrt(16)"}),
        ),
    ];
    for (label, tool, args) in cases {
        let mut samples = Vec::with_capacity(CALLS);
        let started = Instant::now();
        runtime.block_on(async {
            for _ in 0..CALLS {
                let call = Instant::now();
                let outcome = executor.execute(tool, args.clone()).await;
                samples.push(call.elapsed());
                assert!(outcome.is_success(), "{outcome:?}");
            }
        });
        let total = started.elapsed();
        let samples = Latencies::new(samples);
        println!(
            "{label:<24} {:>10.1?} {:>10.1?} {:>10.1?} {:>12.0}",
            samples.percentile(50.0),
            samples.percentile(99.0),
            samples.max(),
            CALLS as f64 / total.as_secs_f64()
        );
    }
    println!("a mock tool should answer in < 10 ms");
}
