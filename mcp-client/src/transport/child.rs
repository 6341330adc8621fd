//! [`ChildTransport`]: rmcp's `Transport<RoleClient>` over the server's stdin and stdout. Sends
//! JSON-RPC lines; reads lines, drops (and reports) what is not JSON-RPC, never answers it.

use std::{
    borrow::Cow,
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
    process::{ChildStdin, ChildStdout},
    sync::Mutex,
};
use tracing::{error, warn};

use super::{
    classify::{LineKind, classify, preview},
    decode::to_message,
    deep,
    lines::{Line, LineReader},
    process::SHUTDOWN_GRACE,
    stats::ReadStats,
};

/// Sees every notification the server sends, in stream order, before rmcp does.
pub type NotificationTap = Arc<dyn Fn(&Value) + Send + Sync>;

/// rmcp transport over a spawned server's stdin/stdout.
pub struct ChildTransport {
    name: Arc<str>,
    stdin: Arc<Mutex<Option<ChildStdin>>>,
    reader: LineReader<ChildStdout>,
    stats: Arc<ReadStats>,
    tap: Option<NotificationTap>,
    /// The id (and method) of the session's first request, `server/discover` or `initialize`,
    /// until its answer arrives. Meanwhile rmcp fails the whole handshake on a response with
    /// any other id, so such responses are dropped here.
    awaiting_init: Option<(rmcp::model::RequestId, &'static str)>,
}

impl std::fmt::Debug for ChildTransport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ChildTransport")
            .field("name", &self.name)
            .finish_non_exhaustive()
    }
}

impl ChildTransport {
    pub(super) fn new(
        name: Arc<str>,
        stdin: Arc<Mutex<Option<ChildStdin>>>,
        reader: LineReader<ChildStdout>,
        stats: Arc<ReadStats>,
    ) -> Self {
        Self {
            name,
            stdin,
            reader,
            stats,
            tap: None,
            awaiting_init: None,
        }
    }

    /// Whether `message` is an answer to something we never asked, arriving before our
    /// `initialize` was answered (dropped with a logged preview, as after initialization).
    fn is_unsolicited_before_init(&mut self, message: &RxJsonRpcMessage<RoleClient>) -> bool {
        use rmcp::model::JsonRpcMessage;
        let Some((expected, method)) = &self.awaiting_init else {
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
                let reason = format!("it arrived before `{method}` was answered");
                let _ = self.drop_line(
                    &self.stats.not_jsonrpc,
                    "an answer to a request never sent",
                    &text,
                    Some(&reason),
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
            LineKind::TooDeep => return self.too_deep(&line.text),
            LineKind::JsonRpc(value) => value,
        };
        if let Some(tap) = &self.tap
            && value.get("method").is_some()
            && value.get("id").is_none()
        {
            tap(&value);
        }
        // A server's question is typed from the text: its form's fields keep the server's
        // order (a `Value` holds them sorted by name).
        let typed = if value.get("method").and_then(Value::as_str) == Some("elicitation/create") {
            serde_json::from_str(&line.text).map_err(|err| err.to_string())
        } else {
            to_message(value)
        };
        self.delivered(typed, &line.text)
    }

    /// `typed` (from the line `text`) delivered and counted, or dropped saying why it is no
    /// MCP message.
    fn delivered(
        &self,
        typed: Result<RxJsonRpcMessage<RoleClient>, String>,
        text: &str,
    ) -> Option<RxJsonRpcMessage<RoleClient>> {
        match typed {
            Ok(message) => {
                self.stats.messages.fetch_add(1, Ordering::Relaxed);
                Some(message)
            }
            Err(err) => self.drop_line(
                &self.stats.invalid_message,
                "not a valid MCP message",
                text,
                Some(&err),
            ),
        }
    }

    /// A line nested deeper than serde_json reads: a `tools/list` answer without the tools
    /// that nest so deep, another answer as an error for its request, anything else dropped.
    fn too_deep(&self, text: &str) -> Option<RxJsonRpcMessage<RoleClient>> {
        const KIND: &str = "JSON nested deeper than mcp-client reads (127 levels)";
        let (value, notes) = match deep::trim(text) {
            Some(deep::Trimmed::Readable { value, notes }) => (value, notes),
            Some(deep::Trimmed::Dropped(why)) => {
                return self.drop_line(&self.stats.invalid_message, KIND, text, Some(&why));
            }
            None => return self.drop_line(&self.stats.invalid_message, KIND, text, None),
        };
        for note in notes {
            error!(server = %self.name, "{note}");
            self.stats.left_out(note);
        }
        self.delivered(to_message(value), text)
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

impl rmcp::transport::Transport<RoleClient> for ChildTransport {
    type Error = std::io::Error;

    fn name() -> Cow<'static, str> {
        "mcp-client stdio".into()
    }

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleClient>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        // The session's first request: `server/discover` (2026-07-28), or `initialize`.
        if let rmcp::model::JsonRpcMessage::Request(request) = &item
            && let Some(method) = match request.request {
                rmcp::model::ClientRequest::InitializeRequest(_) => Some("initialize"),
                rmcp::model::ClientRequest::DiscoverRequest(_) => Some("server/discover"),
                _ => None,
            }
        {
            self.awaiting_init = Some((request.id.clone(), method));
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
