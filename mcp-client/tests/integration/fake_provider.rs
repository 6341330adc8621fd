//! A fake LLM provider: a real HTTP server on loopback that answers each request with the next
//! scripted reply (recorded bodies from `fixtures/llm/`, cut into small chunks), and keeps
//! every request it received so tests can assert what the client sent.

use std::{
    convert::Infallible,
    sync::{Arc, Mutex},
    time::Duration,
};

use axum::{
    body::{Body, Bytes},
    extract::State,
    http::{HeaderMap, StatusCode, Uri},
    response::Response,
};
use mcp_client::llm::{Dialect, ProviderConfig};
use serde_json::Value;

use crate::harness::fixture_path;

/// One scripted HTTP answer.
#[derive(Clone)]
pub struct Reply {
    status: u16,
    headers: Vec<(&'static str, String)>,
    chunks: Vec<Vec<u8>>,
    stall: bool,
    /// After the chunks, this forever, each after the pause.
    endless: Option<(Vec<u8>, Duration)>,
}

impl Reply {
    /// A recorded body from `fixtures/llm/<name>`, sent in chunks of `chunk` bytes; `.sse`
    /// and `.ndjson` bodies are streamed with their content type.
    pub fn fixture(name: &str, chunk: usize) -> Self {
        let body = std::fs::read(fixture_path(&format!("llm/{name}"))).unwrap();
        let content_type = match name.rsplit('.').next() {
            Some("sse") => "text/event-stream",
            Some("ndjson") => "application/x-ndjson",
            _ => "application/json",
        };
        Self {
            status: 200,
            headers: vec![("content-type", content_type.into())],
            chunks: body.chunks(chunk.max(1)).map(<[u8]>::to_vec).collect(),
            stall: false,
            endless: None,
        }
    }

    /// After its chunks, the body neither continues nor ends (a provider gone silent).
    pub fn then_stall(mut self) -> Self {
        self.stall = true;
        self
    }

    /// After its chunks, the body sends `bytes` again and again, each after `pause`, and
    /// never ends (a server that streams forever).
    pub fn then_endless(mut self, bytes: &[u8], pause: Duration) -> Self {
        self.endless = Some((bytes.to_vec(), pause));
        self
    }

    /// The same recording with CRLF line ends.
    pub fn crlf(mut self) -> Self {
        let body: Vec<u8> = self.chunks.concat();
        let text = String::from_utf8(body).unwrap().replace('\n', "\r\n");
        let size = self.chunks.first().map_or(1, Vec::len);
        self.chunks = text.as_bytes().chunks(size).map(<[u8]>::to_vec).collect();
        self
    }

    /// An error answer.
    pub fn status(status: u16, body: &str) -> Self {
        Self {
            status,
            headers: vec![("content-type", "application/json".into())],
            chunks: vec![body.as_bytes().to_vec()],
            stall: false,
            endless: None,
        }
    }

    /// Adds a header.
    pub fn header(mut self, name: &'static str, value: &str) -> Self {
        self.headers.push((name, value.to_owned()));
        self
    }
}

/// What the server received.
#[derive(Debug, Clone)]
pub struct Received {
    pub path: String,
    pub headers: HeaderMap,
    pub body: Value,
}

#[derive(Clone, Default)]
struct Script {
    replies: Arc<Mutex<std::collections::VecDeque<Reply>>>,
    received: Arc<Mutex<Vec<Received>>>,
}

/// The running server.
pub struct FakeProvider {
    /// `http://127.0.0.1:<port>`.
    pub url: String,
    script: Script,
    server: tokio::task::JoinHandle<()>,
}

impl FakeProvider {
    /// Starts serving `replies`, one per request, in order.
    pub async fn start(replies: Vec<Reply>) -> Self {
        let script = Script::default();
        script.replies.lock().unwrap().extend(replies);
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let app = axum::Router::new()
            .fallback(answer)
            .with_state(script.clone());
        let server = tokio::spawn(async move {
            axum::serve(listener, app).tcp_nodelay(true).await.unwrap();
        });
        Self {
            url,
            script,
            server,
        }
    }

    /// Every request so far.
    pub fn received(&self) -> Vec<Received> {
        self.script.received.lock().unwrap().clone()
    }

    /// A provider of `dialect` pointed at this server (OpenAI-compatible URLs carry `/v1`),
    /// with a test key and quick retries.
    pub fn provider_config(&self, dialect: Dialect) -> ProviderConfig {
        let mut config = ProviderConfig::new(dialect, "test-model");
        config.base_url = match dialect {
            Dialect::OpenAi => format!("{}/v1", self.url),
            _ => self.url.clone(),
        };
        config.api_key = Some("sk-test-key-123".into());
        config.http.retry.base_delay = Duration::from_millis(10);
        config
    }

    /// Request bodies so far.
    pub fn bodies(&self) -> Vec<Value> {
        self.received().into_iter().map(|r| r.body).collect()
    }
}

impl Drop for FakeProvider {
    fn drop(&mut self) {
        self.server.abort();
    }
}

async fn answer(
    State(script): State<Script>,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let body: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    script.received.lock().unwrap().push(Received {
        path: uri.path().to_owned(),
        headers,
        body,
    });
    let reply = script.replies.lock().unwrap().pop_front();
    let Some(reply) = reply else {
        return Response::builder()
            .status(StatusCode::INTERNAL_SERVER_ERROR)
            .body(Body::from(
                r#"{"error":"the test scripted no more replies"}"#,
            ))
            .unwrap();
    };
    let mut response = Response::builder().status(reply.status);
    for (name, value) in &reply.headers {
        response = response.header(*name, value);
    }
    // Each chunk is its own write, with a yield between them, so the client sees the body in
    // pieces split mid-object and mid-event.
    let (chunks, stall, endless) = (reply.chunks, reply.stall, reply.endless);
    let stream = futures_util::stream::unfold(chunks.into_iter(), move |mut rest| {
        let endless = endless.clone();
        async move {
            let next = match (rest.next(), endless) {
                (Some(next), _) => next,
                (None, Some((bytes, pause))) => {
                    tokio::time::sleep(pause).await;
                    bytes
                }
                (None, None) => {
                    if stall {
                        std::future::pending::<()>().await;
                    }
                    return None;
                }
            };
            tokio::task::yield_now().await;
            Some((Ok::<_, Infallible>(Bytes::from(next)), rest))
        }
    });
    response.body(Body::from_stream(stream)).unwrap()
}
