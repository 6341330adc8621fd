//! One POST sent as rmcp's reqwest client sends it, its JSON answer's bytes handed back
//! unread ([`send_raw`]): for an answer rmcp could not read (one nested past serde_json's
//! limit), sent again by the guard (`guarded.rs`).

use std::{collections::HashMap, sync::Arc};

use futures_util::StreamExt as _;
use reqwest::header::{ACCEPT, CONTENT_TYPE, HeaderName, HeaderValue};
use rmcp::{model::ClientJsonRpcMessage, transport::streamable_http_client::StreamableHttpError};

type HttpError = StreamableHttpError<reqwest::Error>;

/// A JSON answer read as bytes: the body and the session id the server named, if any.
pub(crate) struct RawAnswer {
    pub(crate) body: Vec<u8>,
    pub(crate) session_id: Option<String>,
}

/// One POST to send as it is: where, what, and the headers rmcp would add.
pub(crate) struct RawPost {
    pub(crate) uri: Arc<str>,
    pub(crate) message: ClientJsonRpcMessage,
    pub(crate) session_id: Option<Arc<str>>,
    pub(crate) auth_header: Option<String>,
    pub(crate) custom_headers: HashMap<HeaderName, HeaderValue>,
    /// The largest body read, in bytes.
    pub(crate) max_size: usize,
}

/// `post` sent through `client`, as rmcp's reqwest client sends it.
pub(crate) async fn send_raw(
    client: &reqwest::Client,
    post: RawPost,
) -> Result<RawAnswer, HttpError> {
    let mut request = client
        .post(post.uri.as_ref())
        .header(ACCEPT, "text/event-stream, application/json");
    if let Some(token) = post.auth_header {
        request = request.bearer_auth(token);
    }
    for (name, value) in post.custom_headers {
        request = request.header(name, value);
    }
    if let Some(session_id) = post.session_id {
        request = request.header("mcp-session-id", session_id.as_ref());
    }
    let response = request.json(&post.message).send().await?;
    let status = response.status();
    let content_type = response
        .headers()
        .get(CONTENT_TYPE)
        .map(|value| String::from_utf8_lossy(value.as_bytes()).into_owned());
    let is_json = content_type.as_deref().is_some_and(|value| {
        value
            .split(';')
            .next()
            .is_some_and(|media| media.trim().eq_ignore_ascii_case("application/json"))
    });
    if !status.is_success() || !is_json {
        return Err(StreamableHttpError::UnexpectedServerResponse(
            format!(
                "asked again for an answer it could not read, the server answered HTTP {status} ({})",
                content_type.as_deref().unwrap_or("no content type")
            )
            .into(),
        ));
    }
    let session_id = response
        .headers()
        .get("mcp-session-id")
        .and_then(|value| value.to_str().ok())
        .map(str::to_owned);
    let mut body = Vec::new();
    let mut chunks = response.bytes_stream();
    while let Some(chunk) = chunks.next().await {
        let chunk = chunk?;
        if body.len() + chunk.len() > post.max_size {
            return Err(StreamableHttpError::UnexpectedServerResponse(
                format!(
                    "asked again for an answer it could not read, the server sent more than {} bytes",
                    post.max_size
                )
                .into(),
            ));
        }
        body.extend_from_slice(&chunk);
    }
    Ok(RawAnswer { body, session_id })
}
