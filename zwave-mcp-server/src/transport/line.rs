//! The server's newline-delimited JSON-RPC transport on stdio: rmcp's `AsyncRwTransport`
//! behaviour, with `tools/call` requests typed without rmcp's untagged search.
//!
//! rmcp types every incoming message through two untagged enums (the JSON-RPC envelope, then
//! `ClientRequest`, which tries each request type in turn, formatting an error for each miss):
//! 35k of the 126k instructions of a `get_device_status` call (callgrind). A line that is a
//! `tools/call` request and nothing else is typed as one directly; every other line goes to
//! rmcp's own decoder (`JsonRpcMessageCodec`, with its compatibility rules), so both paths give
//! the same message (the tests and a property hold them to it).
//!
//! What the transport keeps from rmcp's, line for line:
//! - a trailing `\r` and a leading UTF-8 BOM are ignored, blank lines skipped;
//! - JSON that is not a JSON-RPC message gets `-32600 Invalid request` without an id;
//! - non-standard notifications are ignored;
//! - `receive` can be cancelled at any await (rmcp polls it inside `select!`) without losing
//!   a partial line or a half-written error.
//!
//! Where JSON-RPC requires an answer that rmcp does not give, the line is answered with the
//! error [`Refusal`] says: a line longer than [`MAX_LINE`] (dropped unread, logged), not UTF-8
//! or not JSON gets `-32700`; a key twice or an id that is not a string or an integer gets
//! `-32600` (rmcp would take the last key, and read `1.0` as `1`). A client never waits for
//! an answer that will not come.

use std::{
    collections::VecDeque,
    future::Future,
    sync::{
        Arc,
        atomic::{AtomicBool, Ordering},
    },
};

use rmcp::{
    RoleServer,
    model::{
        CallToolRequest, ClientNotification, ClientRequest, ErrorData, JsonRpcMessage,
        JsonRpcRequest, JsonRpcVersion2_0, ProtocolVersion, RequestId, ServerResult,
    },
    service::{RxJsonRpcMessage, TxJsonRpcMessage},
    transport::{
        Transport,
        async_rw::{JsonRpcMessageCodec, JsonRpcMessageCodecError},
    },
};
use serde::Deserialize as _;
use serde_json::Value;
use tokio::{
    io::{AsyncBufReadExt as _, AsyncRead, AsyncWrite, AsyncWriteExt as _, BufReader},
    sync::Mutex,
};
use tokio_util::codec::Decoder as _;

use super::{
    batch::{Batches, Opened},
    refusal::Refusal,
};

/// The longest line accepted (one JSON-RPC message): 4 MiB, four times an HTTP body's bound.
/// Over stdio the one client is the host that started the server, and tools that check
/// servers send a 1 MiB argument to see it refused with its id (a line dropped unread is
/// answered without one); what a line may hold is bounded by [`shape`](super::shape) as
/// over HTTP.
pub const MAX_LINE: usize = 4 * super::shape::MAX_MESSAGE_BYTES;

/// A server transport over a reader and a writer (the protocol's stdin and stdout).
pub struct LineTransport<R, W> {
    read: BufReader<R>,
    /// The line being read; kept across cancelled reads.
    line: Vec<u8>,
    /// Dropping the rest of a line that was too long.
    discarding: bool,
    max_line: usize,
    write: Arc<Mutex<Option<W>>>,
    /// Errors owed to the client (whole lines), and how much of them is written.
    owed_error: Option<(Vec<u8>, usize)>,
    /// Batches whose responses are being collected.
    batches: Arc<std::sync::Mutex<Batches>>,
    /// Whether the session agreed on 2025-03-26, the one version with batches.
    batching: Arc<AtomicBool>,
    /// The messages of a batch not yet handed to rmcp.
    queued: VecDeque<RxJsonRpcMessage<RoleServer>>,
}

impl<R: AsyncRead + Unpin, W: AsyncWrite + Unpin> LineTransport<R, W> {
    /// A transport reading `read` and writing `write`.
    pub fn new(read: R, write: W) -> Self {
        Self {
            read: BufReader::new(read),
            line: Vec::new(),
            discarding: false,
            max_line: MAX_LINE,
            write: Arc::new(Mutex::new(Some(write))),
            owed_error: None,
            batches: Arc::default(),
            batching: Arc::default(),
            queued: VecDeque::new(),
        }
    }

    /// Lowers the longest accepted line (its unit tests).
    #[cfg(test)]
    #[must_use]
    pub fn with_max_line(mut self, max_line: usize) -> Self {
        self.max_line = max_line;
        self
    }

    /// Reads up to the next `\n` into `self.line`, never holding more than `max_line` bytes.
    async fn read_line(&mut self) -> std::io::Result<LineRead> {
        loop {
            let available = self.read.fill_buf().await?;
            if available.is_empty() {
                return Ok(LineRead::Eof);
            }
            let newline = available.iter().position(|&b| b == b'\n');
            let take = newline.map_or(available.len(), |at| at + 1);
            let outcome = if self.discarding {
                if newline.is_some() {
                    self.discarding = false;
                }
                None
            } else if self.line.len() + take > self.max_line {
                self.line.clear();
                self.discarding = newline.is_none();
                Some(LineRead::TooLong)
            } else {
                self.line.extend_from_slice(&available[..take]);
                newline.map(|_| LineRead::Line)
            };
            // No await between copying and consuming: a cancelled read loses nothing.
            self.read.consume(take);
            if let Some(outcome) = outcome {
                return Ok(outcome);
            }
        }
    }

    /// Writes the `-32600` owed for an invalid message; `false` when stdout is gone.
    async fn pay_owed_error(&mut self) -> bool {
        let write = Arc::clone(&self.write);
        let mut write = write.lock().await;
        let Some(writer) = write.as_mut() else {
            return false;
        };
        while let Some((bytes, written)) = &mut self.owed_error {
            if *written == bytes.len() {
                if writer.flush().await.is_err() {
                    return false;
                }
                self.owed_error = None;
                break;
            }
            match writer.write(&bytes[*written..]).await {
                Ok(0) | Err(_) => return false,
                Ok(n) => *written += n,
            }
        }
        true
    }
}

impl<R, W> LineTransport<R, W> {
    /// Owes the client `line` (after whatever is owed already).
    fn owe(&mut self, line: Vec<u8>) {
        match &mut self.owed_error {
            Some((owed, _)) => owed.extend_from_slice(&line),
            None => self.owed_error = Some((line, 0)),
        }
    }

    /// A message on its way to rmcp: a cancellation also releases a batch from waiting.
    fn deliver(&mut self, message: RxJsonRpcMessage<RoleServer>) -> RxJsonRpcMessage<RoleServer> {
        if let JsonRpcMessage::Notification(notification) = &message
            && let ClientNotification::CancelledNotification(cancelled) = &notification.notification
            && let Some(id) = &cancelled.params.request_id
        {
            let done = lock(&self.batches).cancel(id);
            if let Some(line) = done {
                self.owe(line);
            }
        }
        message
    }

    /// Takes a line that is a JSON array: a batch where the session allows them.
    fn take_batch(&mut self, line: &[u8]) {
        if !self.batching.load(Ordering::Relaxed) {
            self.owe(error_line(
                -32600,
                "Invalid request: a batch (a JSON array of messages) is accepted only under MCP protocol version 2025-03-26; send one message per line",
            ));
            return;
        }
        let elements: Vec<&serde_json::value::RawValue> = match serde_json::from_slice(line) {
            Ok(elements) => elements,
            Err(err) => {
                self.owe(Refusal::NotJson(err.to_string()).reply());
                return;
            }
        };
        if elements.is_empty() {
            self.owe(error_line(-32600, "Invalid request: an empty batch"));
            return;
        }
        let (mut requests, mut refusals) = (Vec::new(), Vec::new());
        for element in elements {
            match decode(element.get().as_bytes()) {
                Decoded::Message(message) => {
                    if let JsonRpcMessage::Request(request) = message.as_ref() {
                        requests.push(request.id.clone());
                    }
                    self.queued.push_back(*message);
                }
                Decoded::Ignore => {}
                Decoded::Refused(refusal) => refusals.push(without_newline(refusal.reply())),
                Decoded::Invalid => refusals.push(without_newline(invalid_request())),
            }
        }
        let opened = lock(&self.batches).open(requests, refusals);
        if let Opened::Done(Some(line)) = opened {
            self.owe(line);
        }
    }
}

fn lock(batches: &std::sync::Mutex<Batches>) -> std::sync::MutexGuard<'_, Batches> {
    batches
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// A JSON-RPC error line without an id.
fn error_line(code: i32, message: &str) -> Vec<u8> {
    let error = TxJsonRpcMessage::<RoleServer>::error(
        ErrorData::new(rmcp::model::ErrorCode(code), message.to_owned(), None),
        None,
    );
    let mut bytes = serde_json::to_vec(&error).unwrap_or_default();
    bytes.push(b'\n');
    bytes
}

/// `-32600 Invalid request` without an id, as rmcp answers JSON that is no JSON-RPC message.
fn invalid_request() -> Vec<u8> {
    error_line(-32600, "Invalid request")
}

fn without_newline(mut line: Vec<u8>) -> Vec<u8> {
    line.pop_if(|last| *last == b'\n');
    line
}

enum LineRead {
    Line,
    TooLong,
    Eof,
}

/// What one line holds.
enum Decoded {
    Message(Box<RxJsonRpcMessage<RoleServer>>),
    /// A notification rmcp ignores: nothing to do.
    Ignore,
    /// JSON that is no JSON-RPC message: owed `-32600`.
    Invalid,
    /// Refused before typing: owed the refusal's error.
    Refused(Refusal),
}

/// Types one line (without `\n`, `\r` or BOM).
fn decode(line: &[u8]) -> Decoded {
    if let Err(refusal) = Refusal::check(line) {
        tracing::debug!(%refusal, "refused an incoming line");
        return Decoded::Refused(refusal);
    }
    if let Some(message) = as_tool_call(line) {
        return Decoded::Message(Box::new(message));
    }
    let mut buffer = bytes::BytesMut::with_capacity(line.len() + 1);
    buffer.extend_from_slice(line);
    buffer.extend_from_slice(b"\n");
    match JsonRpcMessageCodec::<RxJsonRpcMessage<RoleServer>>::default().decode(&mut buffer) {
        Ok(Some(message)) => Decoded::Message(Box::new(message)),
        Ok(None) => Decoded::Ignore,
        // The line is JSON (the refusal check parsed it): what rmcp cannot type is no
        // JSON-RPC message.
        Err(JsonRpcMessageCodecError::Serde(err)) => {
            tracing::debug!(error = %err, "a line is JSON but no JSON-RPC message");
            Decoded::Invalid
        }
        // The codec's other errors (line too long, I/O) cannot come from one in-memory line
        // under its unlimited length; were one to, the sender hears `-32600` like for any
        // message that cannot be taken, and the session goes on.
        Err(err) => {
            tracing::error!(error = %err, "rmcp's decoder refused a line");
            Decoded::Invalid
        }
    }
}

/// `{"jsonrpc":"2.0","id":…,"method":"tools/call","params":{…}}` and nothing more, typed as
/// rmcp types it; `None` for anything else (rmcp's decoder then decides).
fn as_tool_call(line: &[u8]) -> Option<RxJsonRpcMessage<RoleServer>> {
    // Cheap refusal first: most lines that are not tool calls never get parsed twice.
    if !contains(line, br#""tools/call""#) {
        return None;
    }
    let Value::Object(mut message) = serde_json::from_slice(line).ok()? else {
        return None;
    };
    let is_bare_call = message.len() == 4
        && message.get("jsonrpc")?.as_str()? == "2.0"
        && message.get("method")?.as_str()? == "tools/call"
        && message.get("params")?.is_object();
    if !is_bare_call {
        return None;
    }
    let id = RequestId::deserialize(message.remove("id")?).ok()?;
    message.remove("jsonrpc");
    let request = CallToolRequest::deserialize(Value::Object(message)).ok()?;
    Some(JsonRpcMessage::Request(JsonRpcRequest {
        jsonrpc: JsonRpcVersion2_0,
        id,
        request: ClientRequest::CallToolRequest(request),
    }))
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack
        .windows(needle.len())
        .any(|window| window == needle)
}

/// The line without its `\n`, a trailing `\r` and a leading UTF-8 BOM.
fn trimmed(line: &[u8]) -> &[u8] {
    let line = line.strip_suffix(b"\n").unwrap_or(line);
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    line.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(line)
}

impl<R, W> Transport<RoleServer> for LineTransport<R, W>
where
    R: AsyncRead + Send + Unpin,
    W: AsyncWrite + Send + Unpin + 'static,
{
    type Error = std::io::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleServer>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        let write = Arc::clone(&self.write);
        if let JsonRpcMessage::Response(response) = &item
            && let ServerResult::InitializeResult(result) = &response.result
        {
            self.batching.store(
                result.protocol_version == ProtocolVersion::V_2025_03_26,
                Ordering::Relaxed,
            );
        }
        let id = match &item {
            JsonRpcMessage::Response(response) => Some(response.id.clone()),
            JsonRpcMessage::Error(error) => error.id.clone(),
            JsonRpcMessage::Request(_) | JsonRpcMessage::Notification(_) => None,
        };
        // Serialised before taking the lock: concurrent answers do not wait for each other's
        // encoding, only for each other's bytes. An answer to a request of a batch waits in
        // the batch, which is written whole with its last answer.
        let line = serde_json::to_vec(&item).map(|line| match &id {
            Some(id) => match lock(&self.batches).answer(id, line) {
                Err(mut alone) => {
                    alone.push(b'\n');
                    Some(alone)
                }
                Ok(batch) => batch,
            },
            None => Some([line, b"\n".to_vec()].concat()),
        });
        async move {
            let Some(line) = line.map_err(std::io::Error::other)? else {
                return Ok(());
            };
            let mut write = write.lock().await;
            let Some(writer) = write.as_mut() else {
                return Err(std::io::Error::new(
                    std::io::ErrorKind::NotConnected,
                    "the transport is closed",
                ));
            };
            writer.write_all(&line).await?;
            writer.flush().await
        }
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleServer>> {
        loop {
            if self.owed_error.is_some() && !self.pay_owed_error().await {
                return None;
            }
            if let Some(message) = self.queued.pop_front() {
                return Some(self.deliver(message));
            }
            match self.read_line().await {
                Ok(LineRead::Line) => {}
                Ok(LineRead::TooLong) => {
                    tracing::error!(
                        max_bytes = self.max_line,
                        "dropped an incoming message longer than the line limit"
                    );
                    self.owed_error = Some((Refusal::TooLong(self.max_line).reply(), 0));
                    continue;
                }
                Ok(LineRead::Eof) => return None,
                Err(err) => {
                    tracing::error!(error = %err, "cannot read stdin");
                    return None;
                }
            }
            let line = std::mem::take(&mut self.line);
            let body = trimmed(&line);
            let decoded = if body.is_empty() {
                Decoded::Ignore
            } else if body.trim_ascii_start().starts_with(b"[") && Refusal::check(body).is_ok() {
                self.take_batch(body);
                Decoded::Ignore
            } else {
                decode(body)
            };
            // The buffer is kept for the next line.
            self.line = line;
            self.line.clear();
            match decoded {
                Decoded::Message(message) => return Some(self.deliver(*message)),
                Decoded::Ignore => {}
                Decoded::Refused(refusal) => self.owe(refusal.reply()),
                Decoded::Invalid => self.owe(invalid_request()),
            }
        }
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        drop(self.write.lock().await.take());
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    /// A line as rmcp's own decoder types it, spelled out (rmcp's messages have no
    /// `PartialEq`; `Debug` shows every variant and field). `None`: ignored or refused.
    fn by_rmcp(line: &[u8]) -> Option<String> {
        let mut buffer = bytes::BytesMut::from(line);
        buffer.extend_from_slice(b"\n");
        JsonRpcMessageCodec::<RxJsonRpcMessage<RoleServer>>::default()
            .decode(&mut buffer)
            .ok()
            .flatten()
            .map(|message| format!("{message:?}"))
    }

    fn line(value: &Value) -> Vec<u8> {
        serde_json::to_vec(value).unwrap()
    }

    #[test]
    fn tool_calls_are_typed_as_rmcp_types_them() {
        let calls = [
            json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call",
                   "params": {"name": "get_device_status", "arguments": {"deviceName": "Switch One"}}}),
            json!({"jsonrpc": "2.0", "id": "a-7", "method": "tools/call",
                   "params": {"name": "list_zwave_devices"}}),
            json!({"jsonrpc": "2.0", "id": 4, "method": "tools/call",
                   "params": {"name": "x", "arguments": {}, "_meta": {"progressToken": 9}}}),
            json!({"params": {"arguments": {"a": [1, {"b": null}]}, "name": "x"},
                   "method": "tools/call", "id": -1, "jsonrpc": "2.0"}),
        ];
        for call in calls {
            let bytes = line(&call);
            let fast = as_tool_call(&bytes).unwrap_or_else(|| panic!("took rmcp's path: {call}"));
            assert!(
                matches!(&fast, JsonRpcMessage::Request(r) if matches!(r.request, ClientRequest::CallToolRequest(_))),
                "{fast:?}"
            );
            assert_eq!(Some(format!("{fast:?}")), by_rmcp(&bytes), "{call}");
        }
    }

    #[test]
    fn anything_else_takes_rmcps_path() {
        let others = [
            // Other requests and messages.
            json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}),
            json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1}}),
            json!({"jsonrpc": "2.0", "id": 1, "result": {"content": [], "text": "tools/call"}}),
            // A tools/call with a member too many (rmcp refuses a request carrying a result),
            // without an id, with a bad id or bad params, or in another JSON-RPC version.
            json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "x"}, "result": {}}),
            json!({"jsonrpc": "2.0", "method": "tools/call", "params": {"name": "x"}}),
            json!({"jsonrpc": "2.0", "id": null, "method": "tools/call", "params": {"name": "x"}}),
            json!({"jsonrpc": "2.0", "id": 1.5, "method": "tools/call", "params": {"name": "x"}}),
            json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"arguments": {}}}),
            json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": [1]}),
            json!({"jsonrpc": "1.0", "id": 1, "method": "tools/call", "params": {"name": "x"}}),
            // "tools/call" as an argument of another method.
            json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"cursor": "tools/call"}}),
        ];
        for other in others {
            let bytes = line(&other);
            assert!(as_tool_call(&bytes).is_none(), "{other}");
        }
    }

    #[tokio::test]
    async fn every_line_that_cannot_be_taken_is_answered_once_and_the_session_goes_on() {
        let (mut client, server) = tokio::io::duplex(4096);
        let (read, write) = tokio::io::split(server);
        let mut transport = LineTransport::new(read, write).with_max_line(100);
        client
            .write_all(
                b"not json\n\n{\"hello\":1}\n\xEF\xBB\xBF{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\r\n",
            )
            .await
            .unwrap();
        let message = transport.receive().await.unwrap();
        assert!(
            matches!(&message, JsonRpcMessage::Request(r) if matches!(r.request, ClientRequest::PingRequest(_))),
            "{message:?}"
        );
        // Too long (dropped), then a notification of a method MCP lacks (passed on, as rmcp
        // does: it parses), then a tool call.
        let long = format!(
            "{{\"jsonrpc\":\"2.0\",\"id\":99,\"method\":\"tools/list\",\"params\":{{\"cursor\":\"{}\"}}}}\n",
            "x".repeat(120)
        );
        client.write_all(long.as_bytes()).await.unwrap();
        client
            .write_all(b"{\"jsonrpc\":\"2.0\",\"method\":\"notifications/custom\"}\n")
            .await
            .unwrap();
        client
            .write_all(b"{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{\"name\":\"t\"}}\n")
            .await
            .unwrap();
        let message = transport.receive().await.unwrap();
        assert!(
            matches!(&message, JsonRpcMessage::Notification(n) if matches!(n.notification, rmcp::model::ClientNotification::CustomNotification(_))),
            "{message:?}"
        );
        let message = transport.receive().await.unwrap();
        assert!(
            matches!(&message, JsonRpcMessage::Request(r) if r.id == RequestId::Number(2)),
            "{message:?}"
        );
        drop(transport);
        let mut written = String::new();
        tokio::io::AsyncReadExt::read_to_string(&mut client, &mut written)
            .await
            .unwrap();
        assert_eq!(
            written,
            "{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32700,\"message\":\"Parse error: the message is not JSON (expected ident at line 1 column 2)\"}}\n\
             {\"jsonrpc\":\"2.0\",\"error\":{\"code\":-32600,\"message\":\"Invalid request\"}}\n\
             {\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32700,\"message\":\"Parse error: the message is longer than 100 bytes and was not read\"}}\n"
        );
    }
}
