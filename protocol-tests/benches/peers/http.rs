//! The same comparison over MCP Streamable HTTP on loopback: our server (`--http`) beside
//! server-everything's `streamableHttp` mode, each driven by one plain blocking HTTP/1.1
//! connection kept alive (a POST per call, the answer read whole whether JSON or SSE), so the
//! driver adds as little as possible. Then each server's resident memory with 100 sessions
//! open (99 left idle).

use std::{
    io::{BufRead as _, BufReader, Read as _, Write as _},
    net::TcpStream,
    process::{Child, Command, Stdio},
    time::{Duration, Instant},
};

use serde_json::{Value, json};

use super::{CALLS, micros, peak_rss_kib, status_kib, thousands};

/// One server's figures over HTTP.
pub struct HttpRow {
    label: String,
    init: Duration,
    p50: Duration,
    p99: Duration,
    per_second: f64,
    peak_rss_kib: u64,
    idle_sessions_rss_kib: u64,
}

/// A kept-alive HTTP/1.1 connection to `/mcp`.
struct Connection {
    reader: BufReader<TcpStream>,
    writer: TcpStream,
    port: u16,
}

/// A connection to `port` once the server `child` listens there (waiting at most a minute).
pub fn connect_when_listening(port: u16, child: &mut Child) -> TcpStream {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        if let Ok(stream) = TcpStream::connect(("127.0.0.1", port)) {
            return stream;
        }
        assert!(
            child.try_wait().unwrap().is_none(),
            "the server on port {port} exited before listening"
        );
        assert!(Instant::now() < deadline, "nothing listens on port {port}");
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// Our server, `--demo --http` on `port` (loopback, so no token is needed).
pub fn ours(binary: &str, port: u16) -> Command {
    let mut command = Command::new(binary);
    command.args(["--demo", "--http", &format!("127.0.0.1:{port}")]);
    command
}

/// server-everything in its `streamableHttp` mode on `port`, from its stdio command line.
pub fn everything((node, mut args): (String, Vec<String>), port: u16) -> Command {
    args.pop(); // "stdio"
    args.push("streamableHttp".to_owned());
    let mut command = Command::new(node);
    command.args(args).env("PORT", port.to_string());
    command
}

/// A port free now (bound, then let go).
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

impl Connection {
    /// Connects, waiting (bounded) for the server to listen.
    fn open(port: u16, child: &mut Child) -> Self {
        let stream = connect_when_listening(port, child);
        stream.set_nodelay(true).unwrap();
        Self {
            reader: BufReader::new(stream.try_clone().unwrap()),
            writer: stream,
            port,
        }
    }

    /// POSTs `body`; returns the session id the answer carries, if any, and the answer's body.
    fn post(&mut self, session: Option<&str>, body: &str) -> (Option<String>, String) {
        let session = session.map_or(String::new(), |id| format!("Mcp-Session-Id: {id}\r\n"));
        write!(
            self.writer,
            "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2025-11-25\r\n{session}Content-Length: {}\r\n\r\n{body}",
            self.port,
            body.len()
        )
        .unwrap();
        self.writer.flush().unwrap();
        self.read_answer()
    }

    fn read_answer(&mut self) -> (Option<String>, String) {
        let mut line = String::new();
        let (mut length, mut chunked, mut session) = (None, false, None);
        self.reader.read_line(&mut line).unwrap();
        assert!(line.starts_with("HTTP/1.1 2"), "answered {line:?}");
        loop {
            line.clear();
            self.reader.read_line(&mut line).unwrap();
            let header = line.trim_end();
            if header.is_empty() {
                break;
            }
            let (name, value) = header.split_once(':').unwrap();
            let value = value.trim();
            match name.to_ascii_lowercase().as_str() {
                "content-length" => length = Some(value.parse::<usize>().unwrap()),
                "transfer-encoding" => chunked = value.eq_ignore_ascii_case("chunked"),
                "mcp-session-id" => session = Some(value.to_owned()),
                _ => {}
            }
        }
        let mut body = Vec::new();
        if chunked {
            loop {
                line.clear();
                self.reader.read_line(&mut line).unwrap();
                let size = usize::from_str_radix(line.trim_end(), 16).unwrap();
                let mut chunk = vec![0; size + 2];
                self.reader.read_exact(&mut chunk).unwrap();
                if size == 0 {
                    break;
                }
                body.extend_from_slice(&chunk[..size]);
            }
        } else {
            let mut fixed = vec![0; length.unwrap_or(0)];
            self.reader.read_exact(&mut fixed).unwrap();
            body = fixed;
        }
        (session, String::from_utf8(body).unwrap())
    }
}

/// Opens a session: initialize, then the initialized notification.
fn open_session(connection: &mut Connection) -> String {
    let initialize = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "bench", "version": "0"}}});
    let (session, answer) = connection.post(None, &initialize.to_string());
    assert!(answer.contains("\"result\""), "initialize: {answer}");
    let session = session.expect("a session id");
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    connection.post(Some(&session), &initialized.to_string());
    session
}

/// Drives the server `command` starts (listening on `port`) as the stdio comparison does.
fn measure(label: &str, mut command: Command, port: u16, tool: &str, args: &Value) -> HttpRow {
    let started = Instant::now();
    let mut child = command
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut connection = Connection::open(port, &mut child);
    let session = open_session(&mut connection);
    let init = started.elapsed();
    let mut call = |id: u64| {
        let request = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": {"name": tool, "arguments": args}});
        let (_, answer) = connection.post(Some(&session), &request.to_string());
        assert!(
            answer.contains(&format!("\"id\":{id}")) && answer.contains("\"result\""),
            "{label}: {answer}"
        );
    };
    for id in 1..=100 {
        call(id);
    }
    let mut samples = Vec::with_capacity(CALLS);
    let run = Instant::now();
    for id in 1_000..1_000 + CALLS as u64 {
        let one = Instant::now();
        call(id);
        samples.push(one.elapsed());
    }
    let total = run.elapsed();
    samples.sort();
    let peak = peak_rss_kib(child.id());
    // 100 sessions in all, the default cap: the one measured and 99 left idle.
    let mut idle = Vec::new();
    for _ in 0..99 {
        let mut other = Connection::open(port, &mut child);
        open_session(&mut other);
        idle.push(other);
    }
    let idle_sessions_rss_kib = status_kib(child.id(), "VmRSS:");
    drop(idle);
    let _ = child.kill();
    let _ = child.wait();
    HttpRow {
        label: label.to_owned(),
        init,
        p50: samples[CALLS / 2],
        p99: samples[CALLS * 99 / 100],
        per_second: CALLS as f64 / total.as_secs_f64(),
        peak_rss_kib: peak,
        idle_sessions_rss_kib,
    }
}

/// Our server and (when given) server-everything over HTTP; prints the table and returns
/// each server's p50 in the order of the rows.
pub fn compare(binary: &str, everything_command: Option<(String, Vec<String>)>) -> Vec<Duration> {
    let port = free_port();
    let mut rows = vec![measure(
        "zwave-mcp-server --demo --http",
        ours(binary, port),
        port,
        "get_device_status",
        &json!({"deviceName": "Switch One"}),
    )];
    if let Some(command) = everything_command {
        let port = free_port();
        rows.push(measure(
            "server-everything streamableHttp (Node)",
            everything(command, port),
            port,
            "echo",
            &json!({"message": "hi"}),
        ));
    }
    let p50s = rows.iter().map(|row| row.p50).collect();
    println!(
        "\n| server over HTTP (2,000 sequential `tools/call`, one kept-alive connection) | start → initialize | p50 | p99 | calls/s | peak RSS | RSS, 100 sessions open |"
    );
    println!("|---|---|---|---|---|---|---|");
    for row in rows {
        println!(
            "| {} | {:.1} ms | {} | {} | {} | {:.1} MiB | {:.1} MiB |",
            row.label,
            row.init.as_secs_f64() * 1e3,
            micros(row.p50),
            micros(row.p99),
            thousands(row.per_second.round() as u64),
            row.peak_rss_kib as f64 / 1024.0,
            row.idle_sessions_rss_kib as f64 / 1024.0,
        );
    }
    p50s
}
