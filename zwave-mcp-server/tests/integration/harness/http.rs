//! The real binary serving MCP over Streamable HTTP (`--http`), and what the tests reach it
//! with: [`Mcp`], a well-behaved client on reqwest (sessions, tool calls, SSE answers read as
//! they come), and [`Raw`], bytes on a TCP connection for what no well-behaved client sends.
//! It asserts nothing of its own: a server that does not start or answer fails the test.

use std::{net::SocketAddr, process::Output, time::Duration};

use serde_json::{Value, json};
use tokio::{
    io::{AsyncBufReadExt as _, AsyncReadExt as _, AsyncWriteExt as _, BufReader},
    net::TcpStream,
    process::Child,
    sync::watch,
};

use super::{GatewayHome, binary};

/// A token long enough to be accepted, in the file `--http-token-file` names.
pub const TOKEN: &str = "6f1d0c9a4e2b7f3855aa01c4d9e8b7a6";

/// The line the server logs once it listens; its `url=` field is where.
const LISTENING: &str = "serving MCP over Streamable HTTP";

/// The HTTP variables a developer's shell may hold: each test says what it gives.
const HTTP_ENV: [&str; 8] = [
    "ZWAVE_MCP_HTTP",
    "ZWAVE_MCP_HTTP_TOKEN",
    "ZWAVE_MCP_HTTP_TOKEN_FILE",
    "ZWAVE_MCP_HTTP_ALLOWED_HOST",
    "ZWAVE_MCP_HTTP_ALLOWED_ORIGIN",
    "ZWAVE_MCP_HTTP_MAX_SESSIONS",
    "ZWAVE_MCP_OAUTH_ISSUER",
    "ZWAVE_MCP_STATE_DIR",
];

/// The binary with `args` and none of the HTTP variables of the environment.
pub fn http_command(args: &[&str]) -> std::process::Command {
    without_http_env(binary::command(args))
}

/// `command` without the HTTP variables of the environment.
pub fn without_http_env(mut command: std::process::Command) -> std::process::Command {
    for name in HTTP_ENV {
        command.env_remove(name);
    }
    command
}

/// The binary serving `home` over HTTP on a free loopback port, with `args` besides.
pub async fn serve_home(home: &GatewayHome, args: &[&str]) -> HttpServer {
    let mut all = vec!["--http", "127.0.0.1:0"];
    all.extend_from_slice(args);
    HttpServer::start(without_http_env(home.command(&all))).await
}

/// The binary serving the demo home over HTTP on a free loopback port, with `args` besides.
pub async fn serve_demo(args: &[&str]) -> HttpServer {
    let mut all = vec!["--demo", "--http", "127.0.0.1:0"];
    all.extend_from_slice(args);
    HttpServer::start(http_command(&all)).await
}

/// A file holding `token` on its first line, removed with its directory when dropped.
pub struct TokenFile {
    dir: test_support::mosquitto::ScratchDir,
}

impl TokenFile {
    /// A file holding `token` and a newline.
    pub fn new(token: &str) -> Self {
        let dir = test_support::mosquitto::ScratchDir::new();
        std::fs::write(dir.path().join("token"), format!("{token}\n")).unwrap();
        Self { dir }
    }

    /// Its path, as the flag takes it.
    pub fn path(&self) -> String {
        self.dir.path().join("token").to_str().unwrap().to_owned()
    }

    /// The directory it is in (a place for a log directory too).
    pub fn dir(&self) -> &std::path::Path {
        self.dir.path()
    }
}

/// The binary serving HTTP; killed if dropped before [`HttpServer::stop`].
pub struct HttpServer {
    child: Child,
    /// Where it serves MCP: `http://127.0.0.1:PORT/mcp`, from its start line.
    pub url: String,
    /// The address it listens on.
    pub addr: SocketAddr,
    /// Everything written on stderr so far.
    stderr: watch::Receiver<String>,
    stdout: tokio::task::JoinHandle<Vec<u8>>,
}

impl HttpServer {
    /// Starts `command` (the binary with `--http ADDR:0` among its flags) and waits, at most
    /// 20 s, for the line saying where it listens.
    pub async fn start(command: std::process::Command) -> Self {
        let shown = format!("{command:?}");
        let mut command = tokio::process::Command::from(command);
        let mut child = command
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .unwrap_or_else(|err| panic!("cannot start {shown}: {err}"));
        let (sender, stderr) = watch::channel(String::new());
        let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
        tokio::spawn(async move {
            while let Ok(Some(line)) = lines.next_line().await {
                sender.send_modify(|text| {
                    text.push_str(&line);
                    text.push('\n');
                });
            }
        });
        let mut pipe = child.stdout.take().unwrap();
        let stdout = tokio::spawn(async move {
            let mut bytes = Vec::new();
            let _ = pipe.read_to_end(&mut bytes).await;
            bytes
        });
        let mut server = Self {
            child,
            url: String::new(),
            addr: SocketAddr::from(([127, 0, 0, 1], 0)),
            stderr,
            stdout,
        };
        let line = server
            .log_line(LISTENING, Duration::from_secs(20))
            .await
            .unwrap_or_else(|| {
                panic!(
                    "{shown} did not say it listens within 20 s:\n{}",
                    server.stderr()
                )
            });
        let url = line
            .split_whitespace()
            .find_map(|field| field.strip_prefix("url="))
            .unwrap_or_else(|| panic!("no url= in {line:?}"));
        server.url = url.to_owned();
        server.addr = url
            .trim_start_matches("http://")
            .trim_end_matches("/mcp")
            .parse()
            .unwrap_or_else(|err| panic!("{url} is not http://ADDR/mcp: {err}"));
        server
    }

    /// The first stderr line containing `text`, waiting for it at most `within`.
    pub async fn log_line(&mut self, text: &str, within: Duration) -> Option<String> {
        let found = |all: &String| {
            all.lines()
                .find(|line| line.contains(text))
                .map(str::to_owned)
        };
        let waited = tokio::time::timeout(within, self.stderr.wait_for(|all| found(all).is_some()))
            .await
            .ok()
            .and_then(Result::ok)
            .and_then(|all| found(&all));
        // Timed out, or stderr ended without it: what there is.
        waited.or_else(|| found(&self.stderr.borrow()))
    }

    /// Everything written on stderr so far.
    pub fn stderr(&self) -> String {
        self.stderr.borrow().clone()
    }

    /// The process id (its `/proc/<pid>/status`).
    pub fn pid(&self) -> u32 {
        self.child.id().expect("running until stopped")
    }

    /// Stops it as a service manager does (SIGTERM), and returns what it wrote once it
    /// exited, at most 20 s later.
    pub async fn stop(mut self) -> Output {
        let pid = rustix::process::Pid::from_raw(i32::try_from(self.pid()).unwrap()).unwrap();
        rustix::process::kill_process(pid, rustix::process::Signal::TERM).unwrap();
        let status = tokio::time::timeout(Duration::from_secs(20), self.child.wait())
            .await
            .unwrap_or_else(|_| panic!("the server did not stop within 20 s of SIGTERM"))
            .unwrap();
        let stdout = (&mut self.stdout).await.unwrap();
        // stderr's reader ends with the process: wait for its end, not for a time.
        let _ = tokio::time::timeout(Duration::from_secs(5), self.stderr.wait_for(|_| false)).await;
        Output {
            status,
            stdout,
            stderr: self.stderr().into_bytes(),
        }
    }
}

/// The `initialize` request of a client of revision 2025-11-25 (with `capabilities`).
pub fn initialize(capabilities: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": capabilities,
        "clientInfo": {"name": "hostile", "version": "1"}}})
}

/// A `tools/call` of `tool` with request id `id`.
pub fn tool_call(id: u64, tool: &str, args: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
        "params": {"name": tool, "arguments": args}})
}

/// An answer read whole.
#[derive(Debug)]
pub struct Reply {
    /// The status code.
    pub status: u16,
    /// The headers.
    pub headers: reqwest::header::HeaderMap,
    /// The body as text.
    pub body: String,
}

impl Reply {
    /// A header's value, or "" without it.
    pub fn header(&self, name: &str) -> &str {
        self.headers
            .get(name)
            .map_or("", |value| value.to_str().unwrap())
    }

    /// The JSON-RPC messages of the body: its SSE events' data, or the body as JSON.
    pub fn messages(&self) -> Vec<Value> {
        if self.header("content-type").starts_with("application/json") {
            return vec![serde_json::from_str(&self.body).unwrap()];
        }
        sse_messages(&self.body)
    }

    /// A `tools/call` result's first text and whether it is an error; panics on anything
    /// else.
    pub fn tool_text(&self) -> (bool, String) {
        let messages = self.messages();
        let result = messages
            .iter()
            .find_map(|message| message.get("result"))
            .unwrap_or_else(|| panic!("no result in {self:?}"));
        super::session::result_text(result)
    }
}

/// The data of each SSE event in `text` that holds some (priming events hold none).
fn sse_messages(text: &str) -> Vec<Value> {
    text.split("\n\n")
        .filter_map(|event| {
            let data: Vec<&str> = event
                .lines()
                .filter_map(|line| line.strip_prefix("data:"))
                .map(str::trim_start)
                .collect();
            let data = data.join("\n");
            (!data.trim().is_empty()).then(|| serde_json::from_str(&data).unwrap())
        })
        .collect()
}

/// A client of the MCP endpoint with a fixed `Authorization` header (or none).
pub struct Mcp {
    http: reqwest::Client,
    /// The endpoint.
    pub url: String,
    authorization: Option<String>,
}

impl Mcp {
    /// A client sending `Authorization: Bearer <token>`, or nothing without a token.
    pub fn new(url: &str, token: Option<&str>) -> Self {
        Self::authorized(url, token.map(|token| format!("Bearer {token}")).as_deref())
    }

    /// A client sending this `Authorization` header, or none.
    pub fn authorized(url: &str, authorization: Option<&str>) -> Self {
        // reqwest is built without a crypto provider of its own; ring is the workspace's.
        let _ = rustls::crypto::ring::default_provider().install_default();
        Self {
            http: reqwest::Client::builder()
                .no_proxy()
                .timeout(Duration::from_secs(30))
                .build()
                .unwrap(),
            url: url.to_owned(),
            authorization: authorization.map(str::to_owned),
        }
    }

    /// This client sending from the loopback address `ip` (`127.0.0.2`, …): the server
    /// counts wrong keys by address.
    pub fn sending_from(mut self, ip: &str) -> Self {
        self.http = reqwest::Client::builder()
            .no_proxy()
            .timeout(Duration::from_secs(30))
            .local_address(ip.parse::<std::net::IpAddr>().unwrap())
            .build()
            .unwrap();
        self
    }

    /// A POST of `body` as MCP's HTTP binding wants it, in `session` if given.
    pub fn post(&self, session: Option<&str>, body: &Value) -> reqwest::RequestBuilder {
        let mut request = self
            .http
            .post(&self.url)
            .header("accept", "application/json, text/event-stream")
            .header("content-type", "application/json")
            .body(body.to_string());
        if let Some(value) = &self.authorization {
            request = request.header("authorization", value);
        }
        if let Some(session) = session {
            request = request.header("mcp-session-id", session);
        }
        request
    }

    /// Another method on the endpoint, with this client's `Authorization`.
    pub fn request(
        &self,
        method: reqwest::Method,
        session: Option<&str>,
    ) -> reqwest::RequestBuilder {
        let mut request = self
            .http
            .request(method, &self.url)
            .header("accept", "text/event-stream");
        if let Some(value) = &self.authorization {
            request = request.header("authorization", value);
        }
        if let Some(session) = session {
            request = request.header("mcp-session-id", session);
        }
        request
    }

    /// A request of the 2026-07-28 lifecycle, which opens no session: the revision and the
    /// client in `_meta`, the method (and a tool's name) in headers too.
    pub fn stateless(&self, id: u64, method: &str, params: Value) -> reqwest::RequestBuilder {
        self.stateless_with(id, method, params, json!({}))
    }

    /// [`Mcp::stateless`] from a client declaring `capabilities` (e.g. elicitation).
    pub fn stateless_with(
        &self,
        id: u64,
        method: &str,
        params: Value,
        capabilities: Value,
    ) -> reqwest::RequestBuilder {
        let mut params = params;
        params["_meta"] = json!({
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": capabilities,
            "io.modelcontextprotocol/clientInfo": {"name": "hostile", "version": "1"}});
        let name = params["name"].as_str().map(str::to_owned);
        let body = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        let mut request = self
            .post(None, &body)
            .header("mcp-protocol-version", "2026-07-28")
            .header("mcp-method", method);
        if let Some(name) = name {
            request = request.header("mcp-name", name);
        }
        request
    }

    /// Sends `request` and reads its answer whole.
    pub async fn send(&self, request: reqwest::RequestBuilder) -> Reply {
        let response = request.send().await.unwrap();
        let status = response.status().as_u16();
        let headers = response.headers().clone();
        let body = response.text().await.unwrap();
        Reply {
            status,
            headers,
            body,
        }
    }

    /// `initialize` with these client capabilities; the answer.
    pub async fn initialize(&self, capabilities: Value) -> Reply {
        self.send(self.post(None, &initialize(capabilities))).await
    }

    /// A session opened (`initialize`, then `notifications/initialized`); its id. Panics
    /// unless both are accepted.
    pub async fn open(&self, capabilities: Value) -> String {
        let reply = self.initialize(capabilities).await;
        assert_eq!(reply.status, 200, "initialize: {reply:?}");
        let session = reply.header("mcp-session-id").to_owned();
        let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
        let done = self.send(self.post(Some(&session), &initialized)).await;
        assert_eq!(done.status, 202, "notifications/initialized: {done:?}");
        session
    }

    /// The names of the tools `tools/list` gives in `session`.
    pub async fn tool_names(&self, session: &str) -> Vec<String> {
        let listed = self
            .send(self.post(
                Some(session),
                &json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}),
            ))
            .await;
        listed.messages()[0]["result"]["tools"]
            .as_array()
            .unwrap_or_else(|| panic!("no tools in {listed:?}"))
            .iter()
            .map(|tool| tool["name"].as_str().unwrap().to_owned())
            .collect()
    }

    /// Calls `tool` in `session`; the answer.
    pub async fn call(&self, session: &str, id: u64, tool: &str, args: Value) -> Reply {
        self.send(self.post(Some(session), &tool_call(id, tool, args)))
            .await
    }

    /// Calls `tool` in `session` and returns its answer's events as they come.
    pub async fn call_streaming(&self, session: &str, id: u64, tool: &str, args: Value) -> Events {
        let response = self
            .post(Some(session), &tool_call(id, tool, args))
            .send()
            .await
            .unwrap();
        assert_eq!(response.status().as_u16(), 200, "{response:?}");
        Events {
            response,
            buffer: String::new(),
        }
    }
}

/// An SSE answer read event by event.
pub struct Events {
    response: reqwest::Response,
    buffer: String,
}

impl Events {
    /// The events of `response`, an SSE answer.
    pub fn of(response: reqwest::Response) -> Self {
        Self {
            response,
            buffer: String::new(),
        }
    }

    /// The next message, waiting at most `within`; `None` once the stream ended.
    pub async fn next(&mut self, within: Duration) -> Option<Value> {
        let read = async {
            loop {
                while let Some(end) = self.buffer.find("\n\n") {
                    let event: String = self.buffer.drain(..end + 2).collect();
                    if let Some(message) = sse_messages(&event).pop() {
                        return Some(message);
                    }
                }
                let chunk = self.response.chunk().await.ok()??;
                self.buffer.push_str(std::str::from_utf8(&chunk).unwrap());
            }
        };
        tokio::time::timeout(within, read)
            .await
            .unwrap_or_else(|_| panic!("no SSE event within {within:?}"))
    }
}

/// A TCP connection to the server, written and read byte by byte.
pub struct Raw {
    stream: BufReader<TcpStream>,
}

/// An answer read off a [`Raw`] connection.
#[derive(Debug)]
pub struct RawReply {
    /// The status code.
    pub status: u16,
    /// The status line and headers.
    pub head: String,
    /// The body (chunks joined).
    pub body: String,
}

impl RawReply {
    /// A header's value (name in any case), if present.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.head.lines().skip(1).find_map(|line| {
            let (key, value) = line.split_once(':')?;
            key.eq_ignore_ascii_case(name).then(|| value.trim())
        })
    }
}

/// A request in HTTP/1.1 bytes, with `Host: 127.0.0.1` unless `headers` name one, and the
/// body's `Content-Length`.
/// What a refusal's body says: the message of the JSON-RPC error the gate answers with, or
/// the body itself when it is not one (rmcp's own refusals are plain text).
pub fn said(body: &str) -> String {
    serde_json::from_str::<Value>(body)
        .ok()
        .and_then(|error| error["error"]["message"].as_str().map(str::to_owned))
        .unwrap_or_else(|| body.to_owned())
}

pub fn raw_request(method: &str, headers: &[(&str, &str)], body: &str) -> Vec<u8> {
    let mut text = format!("{method} /mcp HTTP/1.1\r\n");
    if !headers
        .iter()
        .any(|(name, _)| name.eq_ignore_ascii_case("host"))
    {
        text.push_str("Host: 127.0.0.1\r\n");
    }
    for (name, value) in headers {
        text.push_str(&format!("{name}: {value}\r\n"));
    }
    text.push_str(&format!("Content-Length: {}\r\n\r\n{body}", body.len()));
    text.into_bytes()
}

/// The headers a POST of JSON-RPC needs, with `Authorization: Bearer <token>`.
pub fn json_headers(token: &str) -> Vec<(&'static str, String)> {
    vec![
        ("Accept", "application/json, text/event-stream".to_owned()),
        ("Content-Type", "application/json".to_owned()),
        ("Authorization", format!("Bearer {token}")),
    ]
}

impl Raw {
    /// A new connection to `addr`.
    pub async fn connect(addr: SocketAddr) -> Self {
        Self {
            stream: BufReader::new(TcpStream::connect(addr).await.unwrap()),
        }
    }

    /// Writes `bytes`.
    ///
    /// # Errors
    /// The server closed the connection.
    pub async fn send(&mut self, bytes: &[u8]) -> std::io::Result<()> {
        self.stream.get_mut().write_all(bytes).await
    }

    /// The write half, for a writer task of its own.
    pub fn split(
        self,
    ) -> (
        tokio::net::tcp::OwnedReadHalf,
        tokio::net::tcp::OwnedWriteHalf,
    ) {
        self.stream.into_inner().into_split()
    }

    /// The next answer, read whole within 20 s.
    pub async fn reply(&mut self) -> RawReply {
        tokio::time::timeout(Duration::from_secs(20), read_reply(&mut self.stream))
            .await
            .unwrap_or_else(|_| panic!("no whole answer within 20 s"))
    }

    /// What the server sends before it closes the connection, if it closes it within
    /// `within`.
    pub async fn rest_until_closed(&mut self, within: Duration) -> Option<Vec<u8>> {
        let mut rest = Vec::new();
        let read_to_end = self.stream.read_to_end(&mut rest);
        let closed = tokio::time::timeout(within, read_to_end).await.is_ok();
        closed.then_some(rest)
    }

    /// Whether the server closes the connection within `within` (anything it sends first is
    /// read and dropped).
    pub async fn closed_within(&mut self, within: Duration) -> bool {
        self.rest_until_closed(within).await.is_some()
    }
}

/// Reads one answer off `stream`: head, then a body by `Content-Length`, chunks, or to the end.
pub async fn read_reply<R: tokio::io::AsyncBufRead + Unpin>(stream: &mut R) -> RawReply {
    let mut head = String::new();
    loop {
        let mut line = String::new();
        assert!(
            stream.read_line(&mut line).await.unwrap() > 0,
            "closed in the head: {head:?}"
        );
        if line == "\r\n" {
            break;
        }
        head.push_str(&line);
    }
    let status = head
        .split_whitespace()
        .nth(1)
        .and_then(|code| code.parse().ok())
        .unwrap_or_else(|| panic!("no status in {head:?}"));
    let mut reply = RawReply {
        status,
        head,
        body: String::new(),
    };
    let mut body = Vec::new();
    if let Some(length) = reply.header("content-length") {
        body.resize(length.parse().unwrap(), 0);
        stream.read_exact(&mut body).await.unwrap();
    } else if reply
        .header("transfer-encoding")
        .is_some_and(|coding| coding.eq_ignore_ascii_case("chunked"))
    {
        loop {
            let mut size = String::new();
            stream.read_line(&mut size).await.unwrap();
            let size = usize::from_str_radix(size.trim(), 16).unwrap();
            let mut chunk = vec![0; size + 2];
            stream.read_exact(&mut chunk).await.unwrap();
            if size == 0 {
                break;
            }
            body.extend_from_slice(&chunk[..size]);
        }
    } else if status != 204 && status != 304 {
        stream.read_to_end(&mut body).await.unwrap();
    }
    reply.body = String::from_utf8(body).unwrap();
    reply
}
