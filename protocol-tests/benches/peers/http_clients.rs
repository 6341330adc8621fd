//! Our client beside the official TypeScript and Python SDK clients over Streamable HTTP:
//! on each server (ours with `--demo --http`, server-everything's `streamableHttp`), the same
//! tool and arguments, CALLS sequential `tools/call`s in one session, each client timing them
//! itself (`mcp-client bench --url`, `fixtures/peers/*_client_bench.*` with `--url`). Every
//! client gets a server started afresh, so none meets sessions or a heap another left. The
//! revision each agreed is shown: on our server ours speaks 2026-07-28 (no session; rmcp
//! serves each request on its own) and the SDKs 2025-11-25 (a session), so ours runs again
//! pinned to 2025-11-25.

use std::{
    process::{Child, Command, Stdio},
    time::Duration,
};

use test_support::{
    fixture_path,
    peers::{PYTHON_SDK, python_venv, typescript_sdk},
};

use super::{
    CALLS, ClientTiming, client_row,
    http::{self, connect_when_listening},
    mcp_client_bench, micros, thousands,
};

/// A server to measure the clients on.
struct Server {
    label: &'static str,
    /// Its command line, for a port.
    command: Box<dyn Fn(u16) -> Command>,
    tool: &'static str,
    args: &'static str,
    /// Whether the tool is not marked read-only (`mcp-client bench` then wants
    /// `--allow-writes`).
    writes: bool,
    /// Whether its newest revision is 2026-07-28: our client then runs a second time pinned
    /// to 2025-11-25, the SDKs' revision, so each is also compared with its like.
    speaks_2026: bool,
    /// The raw driver's p50 on it, from the servers' table.
    raw_p50: Duration,
}

/// Starts `server` on a free port and waits until it listens; its URL.
fn start(server: &Server) -> (Child, String) {
    let port = http::free_port();
    let mut child = (server.command)(port)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    drop(connect_when_listening(port, &mut child));
    (child, format!("http://127.0.0.1:{port}/mcp"))
}

/// `command` run against `server` started afresh; the client's own timing.
fn timed(
    server: &Server,
    label: Option<&str>,
    command: impl Fn(&str) -> Vec<String>,
) -> ClientTiming {
    let (mut child, url) = start(server);
    let timing = client_row(label, &command(&url));
    let _ = child.kill();
    let _ = child.wait();
    timing
}

/// The three clients on `server`, ours first (only ours with `only_ours`).
fn clients(server: &Server, mcp_client: &str, only_ours: bool) -> Vec<ClientTiming> {
    let calls = CALLS.to_string();
    let mut rows = vec![timed(server, Some("mcp-client bench --url"), |url| {
        mcp_client_bench(
            mcp_client,
            server.tool,
            server.args,
            server.writes,
            &["--url", url],
        )
    })];
    if server.speaks_2026 {
        let label = "mcp-client bench --url --protocol-version 2025-11-25";
        rows.push(timed(server, Some(label), |url| {
            let target = ["--protocol-version", "2025-11-25", "--url", url];
            mcp_client_bench(mcp_client, server.tool, server.args, server.writes, &target)
        }));
    }
    if only_ours {
        return rows;
    }
    let script = |name: &str| {
        fixture_path(&format!("peers/{name}"))
            .to_string_lossy()
            .into_owned()
    };
    let sdk = typescript_sdk().to_string_lossy().into_owned();
    let (tool, args) = (server.tool, server.args);
    let node_script = script("ts_sdk_client_bench.mjs");
    rows.push(timed(server, None, |url| {
        owned(&["node", &node_script, &sdk, &calls, tool, args, "--url", url])
    }));
    let python = python_venv("mcp2", PYTHON_SDK)
        .to_string_lossy()
        .into_owned();
    let python_script = script("python_sdk_client_bench.py");
    rows.push(timed(server, None, |url| {
        owned(&[&python, &python_script, &calls, tool, args, "--url", url])
    }));
    rows
}

fn owned(parts: &[&str]) -> Vec<String> {
    parts.iter().map(|part| (*part).to_owned()).collect()
}

/// Measures and prints the table. `raw_p50s`: the raw driver's p50 on our server and (when
/// `everything` is given) on server-everything, as [`http::compare`] returned them.
pub fn compare(
    binary: &str,
    everything: Option<(String, Vec<String>)>,
    mcp_client: &str,
    raw_p50s: &[Duration],
) {
    let only_ours = everything.is_none();
    let binary = binary.to_owned();
    let mut servers = vec![Server {
        label: "zwave-mcp-server --demo --http",
        command: Box::new(move |port| http::ours(&binary, port)),
        tool: "get_device_status",
        args: r#"{"deviceName": "Switch One"}"#,
        writes: false,
        speaks_2026: true,
        raw_p50: raw_p50s[0],
    }];
    if let Some(everything) = everything {
        servers.push(Server {
            label: "server-everything streamableHttp",
            command: Box::new(move |port| http::everything(everything.clone(), port)),
            tool: "echo",
            args: r#"{"message": "hi"}"#,
            // Not marked read-only; it answers without acting.
            writes: true,
            speaks_2026: false,
            raw_p50: raw_p50s[1],
        });
    }
    println!(
        "\n| client over HTTP (2,000 sequential `tools/call`) | server | revision | p50 | p99 | calls/s | × ours p50, same revision | × raw driver p50 |"
    );
    println!("|---|---|---|---|---|---|---|---|");
    for server in &servers {
        let rows = clients(server, mcp_client, only_ours);
        let raw = server.raw_p50.as_secs_f64() * 1e6;
        for row in &rows {
            // Ours at the same revision, where it spoke it (the first row otherwise).
            let ours = rows
                .iter()
                .take_while(|other| other.label.starts_with("mcp-client"))
                .find(|other| other.protocol == row.protocol)
                .unwrap_or(&rows[0])
                .p50_us;
            println!(
                "| {} | {} | {} | {} | {} | {} | {:.1} | {:.1} |",
                row.label,
                server.label,
                row.protocol.as_deref().unwrap_or("?"),
                micros(Duration::from_secs_f64(row.p50_us / 1e6)),
                micros(Duration::from_secs_f64(row.p99_us / 1e6)),
                thousands(row.per_second.round() as u64),
                row.p50_us / ours,
                row.p50_us / raw
            );
        }
    }
    println!(
        "\nThe raw driver p50 is the servers' table's: one blocking HTTP/1.1 connection, no MCP client, \
         speaking 2025-11-25 (a session). From 2026-07-28 there are no sessions: rmcp serves each \
         request on its own."
    );
}
