//! Our server beside third-party MCP servers and the pipe floor (`mcp-floor`, a std-only line
//! responder), all driven the same raw way in one run: start → initialize, round trip of
//! sequential `tools/call`s, calls per second, peak memory. Then our client beside the
//! official TypeScript and Python SDK clients, each making sequential `tools/call`s of the
//! floor and timing them itself. Between the two, the servers over Streamable HTTP (`http`);
//! last, the three clients over Streamable HTTP on each HTTP server (`http_clients`).
//! Run: `cargo build --release --workspace --bins && cargo bench -p protocol-tests --bench peers`.
#![expect(
    clippy::unwrap_used,
    clippy::print_stdout,
    reason = "a benchmark: a failed setup should stop it loudly, and it prints its tables"
)]

#[path = "peers/http.rs"]
mod http;
#[path = "peers/http_clients.rs"]
mod http_clients;

use std::time::{Duration, Instant};

use serde_json::{Value, json};
use test_support::peers::{
    PYTHON_FASTMCP, PYTHON_SDK, python_venv, server_everything, typescript_sdk,
};
use test_support::{fixture_path, mosquitto::Mosquitto, target_dir};

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
    status_kib(pid, "VmHWM:")
}

/// A memory line (`VmHWM:`, `VmRSS:`) of `/proc/<pid>/status`, in KiB; 0 when unreadable.
fn status_kib(pid: u32, key: &str) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()
        .and_then(|status| {
            status
                .lines()
                .find(|l| l.starts_with(key))
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

/// A client's own timing of CALLS sequential calls.
struct ClientTiming {
    label: String,
    /// The protocol revision the client agreed with the server, when it says.
    protocol: Option<String>,
    p50_us: f64,
    p99_us: f64,
    per_second: f64,
}

/// Runs a client that times itself and prints its report: `mcp-client bench --json` (its
/// first phase) or an SDK script's one object. `label` overrides the one the report gives.
fn client_row(label: Option<&str>, command: &[String]) -> ClientTiming {
    let output = std::process::Command::new(&command[0])
        .args(&command[1..])
        .stderr(std::process::Stdio::inherit())
        .output()
        .unwrap();
    assert!(output.status.success(), "{command:?} failed");
    let report: Value = serde_json::from_slice(&output.stdout).unwrap();
    // `mcp-client bench --json` reports phases; the SDK drivers report one object.
    let timing = report
        .get("phases")
        .and_then(|phases| phases.get(0))
        .unwrap_or(&report);
    ClientTiming {
        label: label.map_or_else(
            || report["client"].as_str().unwrap().to_owned(),
            str::to_owned,
        ),
        protocol: report
            .get("protocol_version")
            .or_else(|| report.get("protocol"))
            .and_then(Value::as_str)
            .map(str::to_owned),
        p50_us: timing["p50_us"].as_f64().unwrap(),
        p99_us: timing["p99_us"].as_f64().unwrap(),
        per_second: timing["calls_per_second"].as_f64().unwrap(),
    }
}

/// `mcp-client bench` making CALLS sequential calls of `tool` after 100 unmeasured ones;
/// `target` ends the command line (`--url URL`, or `--` and a command line, after any other
/// flags).
fn mcp_client_bench(
    mcp_client: &str,
    tool: &str,
    args: &str,
    allow_writes: bool,
    target: &[&str],
) -> Vec<String> {
    let calls = CALLS.to_string();
    let mut command = [
        mcp_client,
        "bench",
        "--json",
        "--tool",
        tool,
        "--args",
        args,
        "--calls",
        &calls,
        "--warmup",
        "100",
        "--concurrency",
        "1",
    ]
    .map(str::to_owned)
    .to_vec();
    if allow_writes {
        command.push("--allow-writes".to_owned());
    }
    command.extend(target.iter().map(|part| (*part).to_owned()));
    command
}

fn compare_clients(floor: &str, mcp_client: &str, floor_p50: Duration) {
    let calls = CALLS.to_string();
    let mut rows = vec![client_row(
        Some("mcp-client (ServerConnection::call_tool)"),
        // The floor's one tool is not marked read-only, and answers without acting.
        &mcp_client_bench(mcp_client, "any", "{}", true, &["--", floor]),
    )];
    if std::env::var_os("BENCH_ONLY_OURS").is_none() {
        let sdk = typescript_sdk().to_string_lossy().into_owned();
        let script = |name: &str| {
            fixture_path(&format!("peers/{name}"))
                .to_string_lossy()
                .into_owned()
        };
        rows.push(client_row(
            None,
            &[
                "node".to_owned(),
                script("ts_sdk_client_bench.mjs"),
                sdk,
                calls.clone(),
                "any".into(),
                "{}".into(),
                "--".into(),
                floor.to_owned(),
            ],
        ));
        let python = python_venv("mcp2", PYTHON_SDK)
            .to_string_lossy()
            .into_owned();
        rows.push(client_row(
            None,
            &[
                python,
                script("python_sdk_client_bench.py"),
                calls.clone(),
                "any".into(),
                "{}".into(),
                floor.to_owned(),
            ],
        ));
    }
    println!();
    println!(
        "| client (2,000 sequential `tools/call` of `mcp-floor`) | p50 | p99 | × floor p50 | × ours p50 |"
    );
    println!("|---|---|---|---|---|");
    let ours = rows[0].p50_us;
    let floor_us = floor_p50.as_secs_f64() * 1e6;
    for ClientTiming {
        label,
        p50_us: p50,
        p99_us: p99,
        ..
    } in rows
    {
        println!(
            "| {label} | {} | {} | {:.1} | {:.1} |",
            micros(Duration::from_secs_f64(p50 / 1e6)),
            micros(Duration::from_secs_f64(p99 / 1e6)),
            p50 / floor_us,
            p50 / ours
        );
    }
    println!(
        "\nThe floor p50 is the raw driver's round trip to `mcp-floor` in the servers' table."
    );
}

/// A duration in µs, with a thousands separator past 1 ms.
fn micros(duration: Duration) -> String {
    let us = duration.as_secs_f64() * 1e6;
    if us >= 1000.0 {
        let whole = us.round() as u64;
        format!("{},{:03} µs", whole / 1000, whole % 1000)
    } else {
        format!("{us:.1} µs")
    }
}

/// `12345` as `12,345`.
fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, digit) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(digit);
    }
    out
}

/// The CPUs this process may run on (`taskset` narrows them), from `/proc/self/status`.
fn allowed_cpus() -> String {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|status| {
            status
                .lines()
                .find_map(|line| line.strip_prefix("Cpus_allowed_list:"))
                .map(|list| list.trim().to_owned())
        })
        .unwrap_or_else(|| "unknown".into())
}

/// Our server alone: connected to a real broker (Mosquitto) with the simulated gateway (the
/// demo home) in a process of its own, so its start-up and peak RSS are the server's, without
/// the embedded broker and simulator that --demo carries.
fn on_mosquitto(ours: &str) -> Row {
    use std::io::BufRead as _;
    let broker = Mosquitto::start(None);
    let url = broker.url();
    let mut simulator = std::process::Command::new(ours)
        .args(["--mqtt-url", &url, "simulate"])
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let log = std::io::BufReader::new(simulator.stderr.take().unwrap());
    let mut lines = log.lines();
    assert!(
        lines.any(|line| line.is_ok_and(|line| line.contains("simulated gateway connected"))),
        "the simulated gateway never connected to {url}"
    );
    // It publishes its home right after connecting; the broker retains it (as scale.py).
    std::thread::sleep(Duration::from_millis(1_500));
    // Its log is drained from here on, so a full pipe never blocks it.
    let drain = std::thread::spawn(move || lines.for_each(drop));
    let row = measure(
        "the same server on Mosquitto, simulated gateway in its own process",
        vec![ours.to_owned(), "--mqtt-url".into(), url],
        "get_device_status",
        json!({"deviceName": "Switch One"}),
    );
    let _ = simulator.kill();
    let _ = simulator.wait();
    let _ = drain.join();
    drop(broker);
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
    let mcp_client = built("mcp-client").to_string_lossy().into_owned();
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
            vec![floor.clone()],
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
            "the same server, list_zwave_devices",
            vec![ours.clone(), "--demo".into()],
            "list_zwave_devices",
            json!({}),
        ),
        on_mosquitto(&ours),
    ];
    // BENCH_ONLY_OURS=1: the floor and our server only, for quick before/after comparisons.
    if std::env::var_os("BENCH_ONLY_OURS").is_none() {
        let (node, everything) = server_everything();
        let python = python_venv("mcp1", PYTHON_FASTMCP)
            .to_string_lossy()
            .into_owned();
        let fastmcp = fixture_path("peers/fastmcp_server.py")
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
    println!("CPUs: {}\n", allowed_cpus());
    println!(
        "| server (2,000 sequential `tools/call`) | start → initialize | p50 | p99 | calls/s | peak RSS |"
    );
    println!("|---|---|---|---|---|---|");
    let floor_p50 = rows[0].p50;
    for row in rows {
        println!(
            "| {} | {:.1} ms | {} | {} | {} | {:.1} MiB |",
            row.label,
            row.init.as_secs_f64() * 1e3,
            micros(row.p50),
            micros(row.p99),
            thousands(row.per_second.round() as u64),
            row.peak_rss_kib as f64 / 1024.0
        );
    }
    println!(
        "\nOur server's --demo figures include its embedded MQTT broker and simulated gateway; on \
         Mosquitto, the same home is published by `zwave-mcp-server simulate` in a process of its \
         own, and the figures are the server's alone."
    );
    let everything = std::env::var_os("BENCH_ONLY_OURS")
        .is_none()
        .then(server_everything);
    let raw_p50s = http::compare(&ours, everything.clone());
    compare_clients(&floor, &mcp_client, floor_p50);
    http_clients::compare(&ours, everything, &mcp_client, &raw_p50s);
}
