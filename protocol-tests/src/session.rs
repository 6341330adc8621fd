//! A raw stdio session with a server under test: every byte it writes to stdout is kept and
//! judged, nothing is interpreted by an SDK.

use std::{
    collections::HashMap,
    process::Stdio,
    sync::{Arc, Mutex, PoisonError},
    time::{Duration, Instant},
};

use mcp_client::transport::lines::{Line, LineReader};
use serde_json::{Value, json};
use tokio::{
    io::{AsyncReadExt as _, AsyncWriteExt as _},
    process::{Child, ChildStdin, Command},
    sync::mpsc,
};

/// What the server wrote to stdout that is not a complete JSON-RPC message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Violation {
    /// The session it happened in.
    pub session: String,
    /// What is wrong.
    pub problem: String,
    /// The line, escaped and cut.
    pub line: String,
}

/// Shared record of stdout violations across sessions.
pub type Violations = Arc<Mutex<Vec<Violation>>>;

/// A request the server sent to the client (a message with a `method` and an `id`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerRequest {
    /// Its method.
    pub method: String,
    /// Its id, as JSON text.
    pub id: String,
}

/// One started server.
pub struct Session {
    label: String,
    child: Child,
    stdin: Option<ChildStdin>,
    messages: mpsc::Receiver<Value>,
    /// Messages read but not yet asked for (responses to other ids, notifications).
    backlog: Vec<Value>,
    /// Every request the server sent that the checker has read so far (none is answered).
    server_requests: Vec<ServerRequest>,
    next_id: i64,
    violations: Violations,
}

/// The default time to wait for an answer.
pub const ANSWER_TIMEOUT: Duration = Duration::from_secs(10);
/// Longest stdout line read whole; longer ones are a violation, skipped without buffering.
pub const MAX_LINE: usize = 16 * 1024 * 1024;
/// Messages read ahead of the checker; when full, reading waits (the server's writes block).
const READ_AHEAD: usize = 1024;
/// Messages kept that no check asked for yet; the oldest go first.
const BACKLOG_KEPT: usize = 4096;
/// Longest wait for the server to take a line from its stdin.
pub const WRITE_TIMEOUT: Duration = Duration::from_secs(10);

impl Session {
    /// Starts `command` (program and arguments) for the check `label`.
    ///
    /// # Errors
    /// When the program cannot be started.
    pub fn start(command: &[String], label: &str, violations: Violations) -> std::io::Result<Self> {
        let (program, args) = command
            .split_first()
            .ok_or_else(|| std::io::Error::other("empty server command"))?;
        let mut child = Command::new(program)
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .process_group(0)
            .kill_on_drop(true)
            .spawn()?;
        let stdin = child.stdin.take();
        let stdout = child
            .stdout
            .take()
            .ok_or_else(|| std::io::Error::other("no stdout"))?;
        if let Some(mut stderr) = child.stderr.take() {
            // Drain stderr so a chatty server never blocks on a full pipe.
            tokio::spawn(async move {
                let mut sink = [0_u8; 8192];
                while matches!(stderr.read(&mut sink).await, Ok(n) if n > 0) {}
            });
        }
        let (sender, messages) = mpsc::channel(READ_AHEAD);
        let (label_owned, record) = (label.to_owned(), Arc::clone(&violations));
        tokio::spawn(read_stdout(
            LineReader::new(stdout, MAX_LINE),
            label_owned,
            record,
            sender,
        ));
        Ok(Self {
            label: label.to_owned(),
            child,
            stdin,
            messages,
            backlog: Vec::new(),
            server_requests: Vec::new(),
            next_id: 1,
            violations,
        })
    }

    /// Writes one raw line (a newline is added).
    ///
    /// # Errors
    /// When stdin is closed or broken, or the server does not take the line within
    /// [`WRITE_TIMEOUT`] (it stopped reading stdin).
    pub async fn send_raw(&mut self, line: &str) -> std::io::Result<()> {
        let stdin = self
            .stdin
            .as_mut()
            .ok_or_else(|| std::io::Error::other("stdin is closed"))?;
        let write = async {
            stdin.write_all(line.as_bytes()).await?;
            stdin.write_all(b"\n").await?;
            stdin.flush().await
        };
        tokio::time::timeout(WRITE_TIMEOUT, write)
            .await
            .unwrap_or_else(|_| {
                Err(std::io::Error::new(
                    std::io::ErrorKind::TimedOut,
                    format!(
                        "the server did not read a {} byte line from its stdin within {WRITE_TIMEOUT:?}",
                        line.len() + 1
                    ),
                ))
            })
    }

    /// Notes `message` when it is a request from the server; every message read passes here.
    fn note(&mut self, message: &Value) {
        if let (Some(method), Some(id)) = (message.get("method"), message.get("id")) {
            self.server_requests.push(ServerRequest {
                method: method
                    .as_str()
                    .map_or_else(|| method.to_string(), str::to_owned),
                id: id.to_string(),
            });
        }
    }

    /// Keeps a message no check has asked for yet (bounded: the oldest go first).
    fn keep(&mut self, message: Value) {
        if self.backlog.len() == BACKLOG_KEPT {
            self.backlog.remove(0);
        }
        self.backlog.push(message);
    }

    /// Sends a request and returns its id.
    ///
    /// # Errors
    /// As [`Session::send_raw`].
    pub async fn send_request(
        &mut self,
        method: &str,
        params: Option<Value>,
    ) -> std::io::Result<i64> {
        let id = self.next_id;
        self.next_id += 1;
        let mut message = json!({"jsonrpc": "2.0", "id": id, "method": method});
        if let Some(params) = params {
            message["params"] = params;
        }
        self.send_raw(&message.to_string()).await?;
        Ok(id)
    }

    /// Sends a notification.
    ///
    /// # Errors
    /// As [`Session::send_raw`].
    pub async fn notify(&mut self, method: &str, params: Option<Value>) -> std::io::Result<()> {
        let mut message = json!({"jsonrpc": "2.0", "method": method});
        if let Some(params) = params {
            message["params"] = params;
        }
        self.send_raw(&message.to_string()).await
    }

    /// Waits for the response with `id`.
    pub async fn response(&mut self, id: i64, timeout: Duration) -> Option<Value> {
        if let Some(at) = self
            .backlog
            .iter()
            .position(|m| m.get("id") == Some(&json!(id)) && m.get("method").is_none())
        {
            return Some(self.backlog.remove(at));
        }
        let deadline = tokio::time::Instant::now() + timeout;
        loop {
            let message = tokio::time::timeout_at(deadline, self.messages.recv())
                .await
                .ok()??;
            self.note(&message);
            if message.get("id") == Some(&json!(id)) && message.get("method").is_none() {
                return Some(message);
            }
            self.keep(message);
        }
    }

    /// Sends a request and waits for its response.
    pub async fn request(
        &mut self,
        method: &str,
        params: Option<Value>,
        timeout: Duration,
    ) -> Option<Value> {
        let id = self.send_request(method, params).await.ok()?;
        self.response(id, timeout).await
    }

    /// Messages that arrive within `window` (and any already waiting), without waiting longer.
    pub async fn drain(&mut self, window: Duration) -> Vec<Value> {
        let mut out = std::mem::take(&mut self.backlog);
        let deadline = tokio::time::Instant::now() + window;
        while let Ok(Some(message)) = tokio::time::timeout_at(deadline, self.messages.recv()).await
        {
            self.note(&message);
            if out.len() == BACKLOG_KEPT {
                out.remove(0);
            }
            out.push(message);
        }
        out
    }

    /// The requests the server has sent so far, including those read but not yet asked for.
    pub fn server_requests(&mut self) -> &[ServerRequest] {
        while let Ok(message) = self.messages.try_recv() {
            self.note(&message);
            self.keep(message);
        }
        &self.server_requests
    }

    /// The legacy handshake: `initialize` for `version`, then `notifications/initialized`.
    pub async fn initialize(&mut self, version: &str) -> Option<Value> {
        let params = json!({
            "protocolVersion": version,
            "capabilities": {},
            "clientInfo": {"name": "mcp-conformance", "version": env!("CARGO_PKG_VERSION")},
        });
        let response = self
            .request("initialize", Some(params), ANSWER_TIMEOUT)
            .await?;
        if response.get("result").is_some() {
            let _ = self.notify("notifications/initialized", None).await;
        }
        Some(response)
    }

    /// The server's process id.
    pub fn pid(&self) -> Option<u32> {
        self.child.id()
    }

    /// Closes stdin and waits at most `grace` for the process to exit. Returns how long it
    /// took, or `None` if it did not exit (it is then killed, with its process group).
    pub async fn close_and_wait(&mut self, grace: Duration) -> Option<Duration> {
        self.stdin.take();
        let started = Instant::now();
        let exited = tokio::time::timeout(grace, self.child.wait()).await.is_ok();
        if exited {
            Some(started.elapsed())
        } else {
            self.kill();
            None
        }
    }

    /// Kills the server's process group.
    pub fn kill(&mut self) {
        if let Some(pid) = self
            .child
            .id()
            .and_then(|p| i32::try_from(p).ok())
            .and_then(rustix::process::Pid::from_raw)
        {
            let _ = rustix::process::kill_process_group(pid, rustix::process::Signal::KILL);
        }
        let _ = self.child.start_kill();
    }

    /// Stdout violations recorded by this session so far.
    pub fn violations(&self) -> Vec<Violation> {
        self.violations
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .iter()
            .filter(|v| v.session == self.label)
            .cloned()
            .collect()
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        self.kill();
    }
}

/// Reads stdout to its end: whole lines only, each a JSON-RPC 2.0 message, else a violation.
async fn read_stdout(
    mut reader: LineReader<tokio::process::ChildStdout>,
    label: String,
    violations: Violations,
    sender: mpsc::Sender<Value>,
) {
    let record = |problem: &str, body: &[u8]| {
        violations
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(Violation {
                session: label.clone(),
                problem: problem.to_owned(),
                line: mcp_client::transport::preview(body, 120),
            });
    };
    loop {
        let line = match reader.next_line().await {
            Ok(Some(Line::Complete(line))) => line,
            Ok(Some(Line::Oversized { len, head })) => {
                record(
                    &format!("a line of {len} bytes, over the {MAX_LINE} byte limit"),
                    &head,
                );
                continue;
            }
            Ok(None) | Err(_) => return,
        };
        let body = line.strip_suffix(b"\r").unwrap_or(&line);
        if reader.last_line_was_cut() {
            record("the last line has no newline (a cut-off message)", body);
        }
        let Ok(text) = std::str::from_utf8(body) else {
            record("not UTF-8", body);
            continue;
        };
        match serde_json::from_str::<Value>(text) {
            Err(_) => record("not JSON", body),
            Ok(message) if !is_jsonrpc(&message) => {
                record("JSON but not a JSON-RPC 2.0 message", body);
            }
            Ok(message) => {
                if sender.send(message).await.is_err() {
                    return;
                }
            }
        }
    }
}

/// A JSON-RPC 2.0 message, or a batch of them (a non-empty array: the answer to a batch).
fn is_jsonrpc(message: &Value) -> bool {
    if let Some(batch) = message.as_array() {
        return !batch.is_empty()
            && batch
                .iter()
                .all(|item| !item.is_array() && is_jsonrpc(item));
    }
    message.get("jsonrpc") == Some(&json!("2.0"))
        && (message.get("method").is_some()
            || message.get("result").is_some()
            || message.get("error").is_some())
}

/// Counts of a batch of responses by id, for the concurrency check.
pub fn ids(messages: &[Value]) -> HashMap<i64, usize> {
    let mut counts = HashMap::new();
    for message in messages {
        if let Some(id) = message.get("id").and_then(Value::as_i64) {
            *counts.entry(id).or_default() += 1;
        }
    }
    counts
}
