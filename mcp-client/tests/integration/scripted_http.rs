//! A scripted MCP server over Streamable HTTP that misbehaves on cue ([`Hostile`]), for
//! `http_hostile`: it answers `initialize`, `tools/list` and `tools/call fine` as a server
//! would, and tells the test what it saw ([`Seen`]) over a channel, so tests wait on events,
//! never on time.

use std::{
    pin::Pin,
    sync::Arc,
    task::{Context, Poll},
    time::Duration,
};

use axum::{
    Router,
    body::{Body, Bytes},
    extract::State,
    http::{HeaderMap, Method, StatusCode, header},
    response::{IntoResponse, Response},
    routing::any,
};
use futures_util::{Stream, StreamExt as _, stream};
use serde_json::{Value, json};
use tokio::sync::mpsc;

/// What the scripted server does wrong.
#[derive(Clone, Debug)]
pub enum Hostile {
    /// `text/event-stream` whose one event never ends: `data: xxxx…`, no blank line, 1 GiB.
    EndlessEvent,
    /// A JSON answer of 1 GiB, made as it is sent (chunked).
    HugeJson,
    /// A web page, 200.
    Html,
    /// 302 to this URL, for every method.
    RedirectTo(String),
    /// 401, with or without `WWW-Authenticate: Bearer`.
    Unauthorized { challenge: bool },
    /// The request's `Authorization` header quoted back.
    Echo(Echo),
    /// Never answers (the request is held open).
    Silent,
    /// An SSE answer whose first event comes, then nothing, forever.
    StallAfterFirstEvent,
}

/// How the token comes back.
#[derive(Clone, Copy, Debug)]
pub enum Echo {
    /// In a text body with this status.
    Text(StatusCode),
    /// In a JSON-RPC error with this status.
    JsonRpcError(StatusCode),
    /// In the text of a tool result, sent as an SSE event.
    SseResult,
}

/// When the server misbehaves: at everything from `initialize` on, or only at `tools/call
/// hostile` (`tools/call fine` is always answered).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum When {
    Initialize,
    Call,
}

/// What the huge bodies would send if nobody stopped reading.
const GIB: u64 = 1 << 30;

/// What the server saw.
#[derive(Debug)]
pub enum Seen {
    /// A request: its JSON-RPC method, or the HTTP one for a request without a body.
    Request(String),
    /// A huge body stopped being sent (the client hung up) after this many bytes.
    BodyDropped(u64),
}

struct Script {
    hostile: Hostile,
    when: When,
    seen: mpsc::UnboundedSender<Seen>,
}

/// A scripted MCP server at `/mcp`, and what it saw.
pub struct Scripted {
    pub url: String,
    seen: mpsc::UnboundedReceiver<Seen>,
}

impl Scripted {
    pub async fn start(hostile: Hostile, when: When) -> Self {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}/mcp", listener.local_addr().unwrap());
        let hostile = match hostile {
            Hostile::RedirectTo(to) if to.is_empty() => Hostile::RedirectTo(url.clone()),
            other => other,
        };
        let (seen_tx, seen) = mpsc::unbounded_channel();
        let script = Script {
            hostile,
            when,
            seen: seen_tx,
        };
        let app = Router::new()
            .route("/mcp", any(answer))
            .with_state(Arc::new(script));
        tokio::spawn(async move { axum::serve(listener, app).await });
        Self { url, seen }
    }

    /// The next thing the server saw (30 s at most).
    pub async fn next(&mut self) -> Seen {
        tokio::time::timeout(Duration::from_secs(30), self.seen.recv())
            .await
            .expect("the scripted server saw nothing more within 30 s")
            .unwrap()
    }

    /// Waits for a request for `method`, skipping others.
    pub async fn wait_for(&mut self, method: &str) {
        while !matches!(self.next().await, Seen::Request(seen) if seen == method) {}
    }

    /// Waits until the huge body was dropped: how much of it went out.
    pub async fn body_dropped(&mut self) -> u64 {
        loop {
            if let Seen::BodyDropped(sent) = self.next().await {
                return sent;
            }
        }
    }

    /// The requests seen so far.
    pub fn requests(&mut self) -> Vec<String> {
        std::iter::from_fn(|| self.seen.try_recv().ok())
            .filter_map(|seen| match seen {
                Seen::Request(method) => Some(method),
                Seen::BodyDropped(_) => None,
            })
            .collect()
    }
}

async fn answer(
    State(script): State<Arc<Script>>,
    method: Method,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let request: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    let rpc = request["method"].as_str().unwrap_or(method.as_str());
    let _ = script.seen.send(Seen::Request(rpc.to_owned()));
    if rpc == "server/discover" {
        // A server of 2025-06-18: the client falls back to `initialize`, where it misbehaves.
        let refused = json!({"jsonrpc": "2.0", "id": request["id"],
                             "error": {"code": -32601, "message": "Method not found"}});
        return json_answer(StatusCode::OK, &refused);
    }
    let hostile_now = script.when == When::Initialize
        || (rpc == "tools/call" && request["params"]["name"] == "hostile");
    if hostile_now {
        return misbehave(&script, &headers, &request).await;
    }
    let result = match rpc {
        "initialize" => json!({
            "protocolVersion": "2025-06-18",
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "scripted", "version": "1.0.0"}
        }),
        "tools/list" => json!({"tools": [
            {"name": "hostile", "inputSchema": {"type": "object"}},
            {"name": "fine", "inputSchema": {"type": "object"}}
        ]}),
        "tools/call" => json!({"content": [{"type": "text", "text": "fine"}]}),
        _ if method == Method::GET => return StatusCode::METHOD_NOT_ALLOWED.into_response(),
        _ if method == Method::DELETE => return StatusCode::OK.into_response(),
        _ => return StatusCode::ACCEPTED.into_response(),
    };
    let reply = json!({"jsonrpc": "2.0", "id": request["id"], "result": result});
    let mut response = json_answer(StatusCode::OK, &reply);
    let session = header::HeaderValue::from_static("scripted-session");
    response.headers_mut().insert("mcp-session-id", session);
    response
}

/// `value` as an `application/json` answer with `status`.
fn json_answer(status: StatusCode, value: &Value) -> Response {
    let json = [(header::CONTENT_TYPE, "application/json")];
    (status, json, value.to_string()).into_response()
}

async fn misbehave(script: &Script, headers: &HeaderMap, request: &Value) -> Response {
    let sse = [(header::CONTENT_TYPE, "text/event-stream")];
    let seen = script.seen.clone();
    match &script.hostile {
        Hostile::EndlessEvent => (sse, counted(b"data: ", seen)).into_response(),
        Hostile::HugeJson => {
            let head = format!(
                r#"{{"jsonrpc":"2.0","id":{},"result":{{"content":[{{"type":"text","text":""#,
                request["id"]
            );
            let json = [(header::CONTENT_TYPE, "application/json")];
            (json, counted(head.as_bytes(), seen)).into_response()
        }
        Hostile::Html => axum::response::Html("<html><body>Welcome</body></html>").into_response(),
        Hostile::RedirectTo(to) => {
            (StatusCode::FOUND, [(header::LOCATION, to.clone())]).into_response()
        }
        Hostile::Unauthorized { challenge } => {
            let mut response = (StatusCode::UNAUTHORIZED, "who are you?").into_response();
            if *challenge {
                let value = header::HeaderValue::from_static("Bearer error=\"invalid_token\"");
                response
                    .headers_mut()
                    .insert(header::WWW_AUTHENTICATE, value);
            }
            response
        }
        Hostile::Echo(echo) => {
            let said = headers
                .get(header::AUTHORIZATION)
                .map(|value| value.to_str().unwrap().to_owned())
                .unwrap_or_default();
            let said = format!("token {said} is not valid");
            match echo {
                Echo::Text(status) => (*status, said).into_response(),
                Echo::JsonRpcError(status) => json_answer(
                    *status,
                    &json!({"jsonrpc": "2.0", "id": request["id"],
                            "error": {"code": -32600, "message": said}}),
                ),
                Echo::SseResult => {
                    let result = json!({"jsonrpc": "2.0", "id": request["id"],
                        "result": {"content": [{"type": "text", "text": said}]}});
                    (sse, format!("data: {result}\n\n")).into_response()
                }
            }
        }
        Hostile::Silent => std::future::pending().await,
        Hostile::StallAfterFirstEvent => {
            let first = Bytes::from_static(b"id: 1\ndata: \n\n");
            let events = stream::iter([Ok::<_, std::io::Error>(first)]).chain(stream::pending());
            (sse, Body::from_stream(events)).into_response()
        }
    }
}

/// A body of `head` then `x`s up to 1 GiB, made as it is read, that says how much went out
/// once it is dropped.
fn counted(head: &[u8], seen: mpsc::UnboundedSender<Seen>) -> Body {
    Body::from_stream(Counted {
        head: Some(Bytes::copy_from_slice(head)),
        chunk: Bytes::from(vec![b'x'; 64 * 1024]),
        sent: 0,
        seen,
    })
}

struct Counted {
    head: Option<Bytes>,
    chunk: Bytes,
    sent: u64,
    seen: mpsc::UnboundedSender<Seen>,
}

impl Stream for Counted {
    type Item = Result<Bytes, std::io::Error>;

    fn poll_next(mut self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        if self.sent >= GIB {
            return Poll::Ready(None);
        }
        let chunk = self.head.take().unwrap_or_else(|| self.chunk.clone());
        self.sent += chunk.len() as u64;
        Poll::Ready(Some(Ok(chunk)))
    }
}

impl Drop for Counted {
    fn drop(&mut self) {
        let _ = self.seen.send(Seen::BodyDropped(self.sent));
    }
}
