//! Our own stdio transport to an MCP server we spawn: rmcp's `Transport<RoleClient>` over a
//! child process, made to survive whatever the server writes.
//!
//! | part | what it does |
//! |---|---|
//! | [`spawn`] | starts `command args` with `env` and `cwd` in its own process group |
//! | [`ChildTransport`] | sends JSON-RPC lines to stdin; reads stdout with [`lines::LineReader`], drops (and reports) what is not JSON-RPC, never answers it |
//! | [`stderr::StderrTail`] | stderr drained all the time into the last N lines |
//! | [`ServerProcess`] | exit status, stderr tail, dropped-line counters, and shutdown: close stdin, wait, SIGTERM to the group, SIGKILL; safe reaping and parent-death (`process.rs`) |
//!
//! Why not rmcp's child-process transport: it logs bad lines only at debug without content,
//! answers JSON that is not JSON-RPC with -32600 into the server's stdin, drops a response
//! containing one invalid UTF-8 byte, and reports a crash as a bare "Transport closed".

mod decode;
pub mod lines;
pub mod process;
pub mod stderr;

use std::{
    borrow::Cow,
    collections::BTreeMap,
    path::PathBuf,
    process::Stdio,
    sync::{
        Arc,
        atomic::{AtomicU64, Ordering},
    },
};

use rmcp::{
    RoleClient,
    service::{RxJsonRpcMessage, TxJsonRpcMessage},
};
use serde_json::Value;
use tokio::{
    io::AsyncWriteExt as _,
    process::{ChildStdin, ChildStdout, Command},
    sync::Mutex,
};
use tracing::{error, warn};

pub use decode::to_message;
use lines::{Line, LineReader};
pub use process::{Exit, SHUTDOWN_GRACE, ServerProcess, shutdown_all};
pub use stderr::StderrTail;

/// Default limit of one stdout line (one JSON-RPC message).
pub const DEFAULT_MAX_LINE: usize = 16 * 1024 * 1024;
/// Stderr lines kept for error messages.
pub const STDERR_TAIL_LINES: usize = 40;
/// Longest stderr line kept.
pub const STDERR_LINE_CAP: usize = 1024;

/// How to start one server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerCommand {
    /// The server's name in logs and errors.
    pub name: String,
    /// Program to run (looked up on `PATH` when it has no `/`).
    pub command: String,
    /// Its arguments.
    pub args: Vec<String>,
    /// Extra environment variables (the host's environment is inherited).
    pub env: BTreeMap<String, String>,
    /// Working directory.
    pub cwd: Option<PathBuf>,
    /// Longest stdout line accepted.
    pub max_line: usize,
}

impl ServerCommand {
    /// `command args` named `name`, with the defaults.
    pub fn new(
        name: impl Into<String>,
        command: impl Into<String>,
        args: impl IntoIterator<Item = impl Into<String>>,
    ) -> Self {
        Self {
            name: name.into(),
            command: command.into(),
            args: args.into_iter().map(Into::into).collect(),
            env: BTreeMap::new(),
            cwd: None,
            max_line: DEFAULT_MAX_LINE,
        }
    }

    /// The command line as a person would type it.
    pub fn display(&self) -> String {
        std::iter::once(self.command.as_str())
            .chain(self.args.iter().map(String::as_str))
            .collect::<Vec<_>>()
            .join(" ")
    }
}

/// Why a server could not be started.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SpawnError {
    /// The program is not on `PATH`.
    #[error("command `{command}` not found (searched PATH={path})")]
    NotFound {
        /// The program.
        command: String,
        /// The `PATH` searched.
        path: String,
    },
    /// Any other failure to start it.
    #[error("cannot start `{command}`: {reason}")]
    Io {
        /// The command line.
        command: String,
        /// Why (part of the message, so not also chained as a source).
        reason: std::io::Error,
    },
}

/// Counters of stdout lines that were not delivered as messages.
#[derive(Debug, Default)]
pub struct ReadStats {
    messages: AtomicU64,
    not_json: AtomicU64,
    not_jsonrpc: AtomicU64,
    invalid_message: AtomicU64,
    oversized: AtomicU64,
    invalid_utf8: AtomicU64,
    /// The last dropped lines, as `<kind>: <preview>`.
    recent: std::sync::Mutex<std::collections::VecDeque<String>>,
}

/// Dropped lines remembered for diagnostics.
const RECENT_DROPPED: usize = 20;

/// A snapshot of [`ReadStats`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct ReadCounts {
    /// Messages delivered.
    pub messages: u64,
    /// Lines that were not JSON at all.
    pub not_json: u64,
    /// JSON lines that were not JSON-RPC 2.0.
    pub not_jsonrpc: u64,
    /// JSON-RPC lines that did not fit any MCP message.
    pub invalid_message: u64,
    /// Lines over the size limit.
    pub oversized: u64,
    /// Messages with invalid UTF-8, delivered decoded lossily.
    pub invalid_utf8: u64,
}

impl ReadCounts {
    /// Lines dropped, all kinds together.
    pub fn dropped(&self) -> u64 {
        self.not_json + self.not_jsonrpc + self.invalid_message + self.oversized
    }
}

impl ReadStats {
    fn remember(&self, kind: &str, preview: &str) {
        let mut recent = self
            .recent
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if recent.len() == RECENT_DROPPED {
            recent.pop_front();
        }
        recent.push_back(format!("{kind}: {preview}"));
    }

    /// The last dropped lines (at most 20), oldest first, as `<kind>: <preview>`.
    pub fn recent(&self) -> Vec<String> {
        self.recent
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .iter()
            .cloned()
            .collect()
    }

    /// The current counts.
    pub fn counts(&self) -> ReadCounts {
        let get = |c: &AtomicU64| c.load(Ordering::Relaxed);
        ReadCounts {
            messages: get(&self.messages),
            not_json: get(&self.not_json),
            not_jsonrpc: get(&self.not_jsonrpc),
            invalid_message: get(&self.invalid_message),
            oversized: get(&self.oversized),
            invalid_utf8: get(&self.invalid_utf8),
        }
    }
}

/// Sees every notification the server sends, in stream order, before rmcp does.
pub type NotificationTap = Arc<dyn Fn(&Value) + Send + Sync>;

/// rmcp transport over a spawned server's stdin/stdout.
pub struct ChildTransport {
    name: Arc<str>,
    stdin: Arc<Mutex<Option<ChildStdin>>>,
    reader: LineReader<ChildStdout>,
    stats: Arc<ReadStats>,
    tap: Option<NotificationTap>,
    /// The id of our `initialize` request until its answer arrives. Meanwhile rmcp fails the
    /// whole handshake on a response with any other id, so such responses are dropped here.
    awaiting_init: Option<rmcp::model::RequestId>,
}

impl std::fmt::Debug for ChildTransport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ChildTransport")
            .field("name", &self.name)
            .finish_non_exhaustive()
    }
}

/// Starts the server described by `command`.
///
/// # Errors
/// [`SpawnError`] when the program cannot be started.
pub fn spawn(command: &ServerCommand) -> Result<(ChildTransport, ServerProcess), SpawnError> {
    let path = command
        .env
        .get("PATH")
        .cloned()
        .or_else(|| std::env::var("PATH").ok())
        .unwrap_or_default();
    // Looked up here, not by the wrapper, so that a missing program stays a spawn error.
    let program =
        process::find_program(&command.command, &path).ok_or_else(|| SpawnError::NotFound {
            command: command.command.clone(),
            path: path.clone(),
        })?;
    let mut process = match process::parent_death_wrapper() {
        Some(setpriv) => {
            let mut wrapped = Command::new(setpriv);
            wrapped.args(["--pdeathsig", "KILL", "--"]).arg(&program);
            wrapped
        }
        None => Command::new(&program),
    };
    process
        .args(&command.args)
        .envs(&command.env)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .kill_on_drop(true);
    if let Some(cwd) = &command.cwd {
        // Checked first: the OS reports a missing directory as a missing program, which
        // would send the user looking at PATH.
        if !cwd.is_dir() {
            return Err(SpawnError::Io {
                command: command.display(),
                reason: std::io::Error::new(
                    std::io::ErrorKind::NotFound,
                    format!("its working directory {cwd:?} is not a directory"),
                ),
            });
        }
        process.current_dir(cwd);
    }
    let mut child = process.spawn().map_err(|source| {
        if source.kind() == std::io::ErrorKind::NotFound && !command.command.contains('/') {
            SpawnError::NotFound {
                command: command.command.clone(),
                path,
            }
        } else {
            SpawnError::Io {
                command: command.display(),
                reason: source,
            }
        }
    })?;
    let name: Arc<str> = Arc::from(command.name.as_str());
    let stdin = Arc::new(Mutex::new(child.stdin.take()));
    let stdout = child.stdout.take().ok_or_else(|| SpawnError::Io {
        command: command.display(),
        reason: std::io::Error::other("stdout was not captured"),
    })?;
    let tail = Arc::new(StderrTail::new(STDERR_TAIL_LINES, STDERR_LINE_CAP));
    if let Some(stderr) = child.stderr.take() {
        tokio::spawn(stderr::drain(Arc::clone(&name), stderr, Arc::clone(&tail)));
    }
    let stats = Arc::new(ReadStats::default());
    let transport = ChildTransport {
        name: Arc::clone(&name),
        stdin: Arc::clone(&stdin),
        reader: LineReader::new(stdout, command.max_line),
        stats: Arc::clone(&stats),
        tap: None,
        awaiting_init: None,
    };
    let process = ServerProcess::start(name, command.display(), child, stdin, tail, stats);
    Ok((transport, process))
}

impl ChildTransport {
    /// Whether `message` is an answer to something we never asked, arriving before our
    /// `initialize` was answered (dropped with a logged preview, as after initialization).
    fn is_unsolicited_before_init(&mut self, message: &RxJsonRpcMessage<RoleClient>) -> bool {
        use rmcp::model::JsonRpcMessage;
        let Some(expected) = &self.awaiting_init else {
            return false;
        };
        let id = match message {
            JsonRpcMessage::Response(response) => Some(&response.id),
            JsonRpcMessage::Error(error) => error.id.as_ref(),
            JsonRpcMessage::Request(_) | JsonRpcMessage::Notification(_) => return false,
        };
        match id {
            Some(id) if id != expected => {
                let text = serde_json::to_string(message).unwrap_or_default();
                let _ = self.drop_line(
                    &self.stats.not_jsonrpc,
                    "an answer to a request never sent",
                    &text,
                    Some("it arrived before `initialize` was answered"),
                );
                true
            }
            _ => {
                self.awaiting_init = None;
                false
            }
        }
    }

    /// Lets `tap` see every notification in stream order. rmcp hands notifications to the
    /// client handler on tasks of their own, so a progress notification could otherwise be
    /// seen after the response that followed it on the wire.
    pub fn set_notification_tap(&mut self, tap: NotificationTap) {
        self.tap = Some(tap);
    }

    /// Turns one stdout line into a message, or reports and drops it.
    fn decode(&self, bytes: Vec<u8>) -> Option<RxJsonRpcMessage<RoleClient>> {
        let line = classify(&bytes);
        if line.invalid_utf8 {
            self.stats.invalid_utf8.fetch_add(1, Ordering::Relaxed);
            warn!(server = %self.name, "stdout line has invalid UTF-8; decoding it lossily");
        }
        let value = match line.kind {
            LineKind::Blank => return None,
            LineKind::NotJson => {
                return self.drop_line(&self.stats.not_json, "not JSON", &line.text, None);
            }
            LineKind::NotJsonRpc => {
                return self.drop_line(
                    &self.stats.not_jsonrpc,
                    "JSON but not JSON-RPC 2.0",
                    &line.text,
                    None,
                );
            }
            LineKind::JsonRpc(value) => value,
        };
        if let Some(tap) = &self.tap
            && value.get("method").is_some()
            && value.get("id").is_none()
        {
            tap(&value);
        }
        match to_message(value) {
            Ok(message) => {
                self.stats.messages.fetch_add(1, Ordering::Relaxed);
                Some(message)
            }
            Err(err) => self.drop_line(
                &self.stats.invalid_message,
                "not a valid MCP message",
                &line.text,
                Some(&err),
            ),
        }
    }

    fn drop_line(
        &self,
        counter: &AtomicU64,
        kind: &'static str,
        text: &str,
        reason: Option<&str>,
    ) -> Option<RxJsonRpcMessage<RoleClient>> {
        counter.fetch_add(1, Ordering::Relaxed);
        let line = preview(text.as_bytes(), 200);
        self.stats.remember(kind, &line);
        error!(
            server = %self.name,
            kind,
            reason = reason.unwrap_or(""),
            line = %line,
            "dropped a stdout line that is not an MCP message (the server must log to stderr, not stdout)"
        );
        None
    }
}

/// What one stdout line is, before it is typed as an MCP message.
#[derive(Debug, Clone, PartialEq)]
pub enum LineKind {
    /// Empty or whitespace only: ignored without a report.
    Blank,
    /// Not JSON.
    NotJson,
    /// JSON, but not `"jsonrpc": "2.0"`.
    NotJsonRpc,
    /// A JSON-RPC 2.0 object, still to be typed ([`to_message`]).
    JsonRpc(Value),
}

/// One stdout line, judged.
#[derive(Debug, Clone, PartialEq)]
pub struct ClassifiedLine<'a> {
    /// The line as text (decoded lossily when it is not UTF-8), without `\r` and BOM.
    pub text: Cow<'a, str>,
    /// Whether it held invalid UTF-8.
    pub invalid_utf8: bool,
    /// What it is.
    pub kind: LineKind,
}

/// Judges one stdout line (without its `\n`): a trailing `\r` and a UTF-8 BOM are ignored,
/// invalid UTF-8 is decoded lossily (and said so), then JSON and JSON-RPC 2.0 are checked.
pub fn classify(bytes: &[u8]) -> ClassifiedLine<'_> {
    let bytes = bytes.strip_suffix(b"\r").unwrap_or(bytes);
    let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    let (text, invalid_utf8) = match std::str::from_utf8(bytes) {
        Ok(text) => (Cow::Borrowed(text), false),
        Err(_) => (String::from_utf8_lossy(bytes), true),
    };
    let kind = if text.bytes().all(|b| b.is_ascii_whitespace()) {
        LineKind::Blank
    } else {
        match serde_json::from_str::<Value>(&text) {
            Err(_) => LineKind::NotJson,
            Ok(value) if value.get("jsonrpc").and_then(Value::as_str) != Some("2.0") => {
                LineKind::NotJsonRpc
            }
            Ok(value) => LineKind::JsonRpc(value),
        }
    };
    ClassifiedLine {
        text,
        invalid_utf8,
        kind,
    }
}

/// An escaped, truncated preview of a line for logs: `"{\"a\":1}…" (17 bytes)`.
pub fn preview(bytes: &[u8], max_chars: usize) -> String {
    let text = String::from_utf8_lossy(bytes);
    let mut shown: String = text
        .chars()
        .take(max_chars)
        .collect::<String>()
        .escape_debug()
        .to_string();
    if text.chars().count() > max_chars {
        shown.push('…');
    }
    format!("\"{shown}\" ({} bytes)", bytes.len())
}

impl rmcp::transport::Transport<RoleClient> for ChildTransport {
    type Error = std::io::Error;

    fn name() -> Cow<'static, str> {
        "mcp-client stdio".into()
    }

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleClient>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        if let rmcp::model::JsonRpcMessage::Request(request) = &item
            && matches!(
                request.request,
                rmcp::model::ClientRequest::InitializeRequest(_)
            )
        {
            self.awaiting_init = Some(request.id.clone());
        }
        let stdin = Arc::clone(&self.stdin);
        let name = Arc::clone(&self.name);
        async move {
            let mut line = serde_json::to_vec(&item).map_err(std::io::Error::other)?;
            line.push(b'\n');
            let mut stdin = stdin.lock().await;
            let Some(pipe) = stdin.as_mut() else {
                return Err(std::io::Error::new(
                    std::io::ErrorKind::BrokenPipe,
                    format!("stdin of `{name}` is closed"),
                ));
            };
            pipe.write_all(&line).await?;
            pipe.flush().await
        }
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleClient>> {
        loop {
            match self.reader.next_line().await {
                Ok(Some(Line::Complete(bytes))) => {
                    if let Some(message) = self.decode(bytes) {
                        if self.is_unsolicited_before_init(&message) {
                            continue;
                        }
                        return Some(message);
                    }
                }
                Ok(Some(Line::Oversized { len, head })) => {
                    self.stats.oversized.fetch_add(1, Ordering::Relaxed);
                    let line = preview(&head, 200);
                    self.stats
                        .remember(&format!("line over the size limit ({len} bytes)"), &line);
                    error!(
                        server = %self.name,
                        kind = "line over the size limit",
                        len,
                        line = %line,
                        "dropped a stdout line longer than the limit (see max_line)"
                    );
                }
                Ok(None) => return None,
                Err(err) => {
                    warn!(server = %self.name, error = %err, "reading stdout failed");
                    return None;
                }
            }
        }
    }

    fn close(&mut self) -> impl Future<Output = Result<(), Self::Error>> + Send {
        let stdin = Arc::clone(&self.stdin);
        async move {
            // Bounded for the same reason as in `ServerProcess::shutdown`.
            if let Ok(mut stdin) = tokio::time::timeout(SHUTDOWN_GRACE, stdin.lock()).await {
                stdin.take();
            }
            Ok(())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_program_that_cannot_start_is_named_with_its_cause_once() {
        // A working directory that does not exist: the process cannot be created at all.
        let mut command = ServerCommand::new("s", "true", Vec::<String>::new());
        command.cwd = Some("/nonexistent/dir".into());
        let Err(err) = spawn(&command) else {
            panic!("a server started in a missing directory");
        };
        assert_eq!(
            err.to_string(),
            "cannot start `true`: its working directory \"/nonexistent/dir\" is not a directory"
        );
        assert!(
            std::error::Error::source(&err).is_none(),
            "the cause would print twice"
        );
    }
}
