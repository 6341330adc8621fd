//! Our server beside third-party MCP servers and the pipe floor (`mcp-floor`, a std-only line
//! responder), all driven the same raw way in one run: start → initialize, round trip of
//! sequential `tools/call`s, calls per second, peak memory.
//! Run: `cargo build --release --workspace --bins && cargo bench -p protocol-tests --bench peers`.
#![allow(clippy::unwrap_used, clippy::print_stdout, missing_docs)]

use std::time::{Duration, Instant};

use protocol_tests::peers::{
    PYTHON_FASTMCP, python_venv, server_everything, target_dir, workspace_root,
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

/// Drives one server with plain blocking pipe I/O on this thread (no async runtime, no JSON
/// parsing of the answers beyond finding the id), so the driver adds as little as possible
/// to every server's figures.
fn measure(label: &str, command: Vec<String>, tool: &str, args: Value) -> Row {
    use std::io::{BufRead as _, Write as _};
    let started = Instant::now();
    let mut child = std::process::Command::new(&command[0])
        .args(&command[1..])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = std::io::BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    let mut round_trip = |id: u64, request: &str| {
        stdin.write_all(request.as_bytes()).unwrap();
        stdin.flush().unwrap();
        let wanted = format!("\"id\":{id}");
        loop {
            line.clear();
            assert!(
                stdout.read_line(&mut line).unwrap() > 0,
                "{label} closed stdout"
            );
            if line.contains(&wanted) && !line.contains("\"method\"") {
                assert!(line.contains("\"result\""), "{label}: {line}");
                return;
            }
        }
    };
    let initialize = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "bench", "version": "0"}}});
    round_trip(0, &format!("{initialize}\n"));
    let init_time = started.elapsed();
    round_trip(
        999_999,
        &format!(
            "{}\n{}\n",
            json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
            json!({"jsonrpc": "2.0", "id": 999_999, "method": "ping"})
        ),
    );
    let request = |id: u64| {
        format!(
            "{}\n",
            json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": tool, "arguments": args}})
        )
    };
    for id in 1..=100 {
        round_trip(id, &request(id));
    }
    let requests: Vec<String> = (1_000..1_000 + CALLS as u64).map(request).collect();
    let mut samples = Vec::with_capacity(CALLS);
    let run = Instant::now();
    for (n, text) in requests.iter().enumerate() {
        let call = Instant::now();
        round_trip(1_000 + n as u64, text);
        samples.push(call.elapsed());
    }
    let total = run.elapsed();
    samples.sort();
    let row = Row {
        label: label.to_owned(),
        init: init_time,
        p50: samples[CALLS / 2],
        p99: samples[CALLS * 99 / 100],
        per_second: CALLS as f64 / total.as_secs_f64(),
        peak_rss_kib: peak_rss_kib(child.id()),
    };
    drop(stdin);
    let _ = child.wait();
    row
}

fn main() {
    let built = |name: &str| {
        let release = target_dir().join("release").join(name);
        if release.is_file() {
            release
        } else {
            target_dir().join("debug").join(name)
        }
    };
    let ours = built("zwave-mcp-server");
    let floor = built("mcp-floor").to_string_lossy().into_owned();
    let label = format!(
        "zwave-mcp-server --demo ({})",
        if ours.ends_with("release/zwave-mcp-server") {
            "release"
        } else {
            "debug!"
        }
    );
    let ours = ours.to_string_lossy().into_owned();
    let mut rows = vec![
        measure(
            "floor: mcp-floor (std, not MCP)",
            vec![floor],
            "any",
            json!({}),
        ),
        measure(
            &label,
            vec![ours.clone(), "--demo".into()],
            "get_device_status",
            json!({"deviceName": "Switch One"}),
        ),
        measure(
            "  the same, list_zwave_devices",
            vec![ours, "--demo".into()],
            "list_zwave_devices",
            json!({}),
        ),
    ];
    // BENCH_ONLY_OURS=1: the floor and our server only, for quick before/after comparisons.
    if std::env::var_os("BENCH_ONLY_OURS").is_none() {
        let (node, everything) = server_everything();
        let python = python_venv("mcp1", PYTHON_FASTMCP)
            .to_string_lossy()
            .into_owned();
        let fastmcp = workspace_root()
            .join("fixtures/peers/fastmcp_server.py")
            .to_string_lossy()
            .into_owned();
        rows.push(measure(
            "server-everything (Node)",
            std::iter::once(node).chain(everything).collect(),
            "echo",
            json!({"message": "hi"}),
        ));
        rows.push(measure(
            "FastMCP (Python, mcp 1.30)",
            vec![python, fastmcp],
            "add",
            json!({"a": 1, "b": 2}),
        ));
    }
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
