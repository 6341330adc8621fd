//! The one thing between two third-party servers that is ours: LiteLLM turns an Anthropic
//! assistant turn that only calls tools into an OpenAI message without `content`, and
//! llama.cpp's chat templates cannot render a message without it (HTTP 500, "'dict object'
//! has no attribute 'content'", as recorded against llama.cpp). Real OpenAI backends
//! take such a message; our own OpenAI dialect sends `""`. This shim sits between LiteLLM and
//! llama.cpp and adds `"content": ""` where it is missing or null — nothing else — and streams
//! the answer through untouched. The client under test talks to LiteLLM directly.

use axum::{
    body::{Body, Bytes},
    extract::{Request, State},
    http::{HeaderValue, StatusCode, header},
    response::Response,
};
use serde_json::Value;

/// The running shim, with the runtime that serves it (the tests using it are synchronous).
pub struct ContentShim {
    /// `http://127.0.0.1:<port>`: give this to LiteLLM as its upstream.
    pub url: String,
    _runtime: tokio::runtime::Runtime,
}

#[derive(Clone)]
struct Upstream {
    url: String,
    client: reqwest::Client,
}

impl ContentShim {
    /// Forwards every request to `upstream` (`http://127.0.0.1:<port>`).
    pub fn start(upstream: &str) -> Self {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .unwrap();
        let listener = runtime
            .block_on(tokio::net::TcpListener::bind("127.0.0.1:0"))
            .unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let _ = rustls::crypto::ring::default_provider().install_default();
        let state = Upstream {
            url: upstream.to_owned(),
            client: reqwest::Client::new(),
        };
        let app = axum::Router::new().fallback(forward).with_state(state);
        runtime.spawn(async move {
            axum::serve(listener, app).await.unwrap();
        });
        Self {
            url,
            _runtime: runtime,
        }
    }
}

async fn forward(State(upstream): State<Upstream>, request: Request) -> Response {
    let (parts, body) = request.into_parts();
    let body = axum::body::to_bytes(body, 64 << 20).await.unwrap();
    let body = match serde_json::from_slice::<Value>(&body) {
        Ok(mut json) => {
            if let Some(messages) = json.get_mut("messages").and_then(Value::as_array_mut) {
                for message in messages {
                    if message["role"] == "assistant"
                        && message.get("content").is_none_or(Value::is_null)
                    {
                        message["content"] = Value::String(String::new());
                    }
                }
            }
            Bytes::from(serde_json::to_vec(&json).unwrap())
        }
        Err(_) => body,
    };
    let path = parts.uri.path_and_query().map_or("/", |p| p.as_str());
    let mut outgoing = upstream
        .client
        .request(parts.method, format!("{}{path}", upstream.url))
        .header(header::CONTENT_TYPE, "application/json")
        .body(body);
    if let Some(key) = parts.headers.get(header::AUTHORIZATION) {
        outgoing = outgoing.header(header::AUTHORIZATION, key);
    }
    match outgoing.send().await {
        Ok(answer) => {
            let status = StatusCode::from_u16(answer.status().as_u16()).unwrap();
            let content_type = answer
                .headers()
                .get(header::CONTENT_TYPE)
                .cloned()
                .unwrap_or(HeaderValue::from_static("application/json"));
            let mut response = Response::new(Body::from_stream(answer.bytes_stream()));
            *response.status_mut() = status;
            response
                .headers_mut()
                .insert(header::CONTENT_TYPE, content_type);
            response
        }
        Err(err) => {
            let mut response = Response::new(Body::from(format!("shim: upstream failed: {err}")));
            *response.status_mut() = StatusCode::BAD_GATEWAY;
            response
        }
    }
}
