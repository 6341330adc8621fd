//! [`SessionClient`]: what a remote session's requests can go through — reqwest as it is, or
//! (feature `oauth`) [`SignedInClient`](super::oauth::SignedInClient), which carries our token
//! and signs in when the server asks — and the secrets a client holds that change while it
//! lives (a signed-in client's tokens), for the guard to cut out of what the server sends.
//!
//! [`SessionClient::post_json_raw`] sends a request as rmcp's client does and hands back the
//! JSON answer's bytes unread: rmcp parses a plain JSON answer inside its own client, so an
//! answer nested past serde_json's limit fails there whole; the guard sends an idempotent
//! request again this way to make such an answer readable (`deep.rs`).

use std::{collections::HashMap, sync::Arc};

use futures_util::StreamExt as _;
use reqwest::header::{ACCEPT, CONTENT_TYPE, HeaderName, HeaderValue};
use rmcp::{
    model::ClientJsonRpcMessage,
    transport::streamable_http_client::{StreamableHttpClient, StreamableHttpError},
};

use super::secrets::LiveSecrets;

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

/// An HTTP client a session's requests go through.
pub(crate) trait SessionClient:
    StreamableHttpClient<Error = reqwest::Error> + Clone + Send + Sync + 'static
{
    /// The secrets that change while the client lives: none, unless it signs in.
    fn live_secrets(&self) -> Option<LiveSecrets> {
        None
    }

    /// `post` sent once, its answer's bytes unread: only a 2xx `application/json` answer is
    /// taken.
    fn post_json_raw(
        &self,
        post: RawPost,
    ) -> impl Future<Output = Result<RawAnswer, HttpError>> + Send;
}

/// Requests as they are (with the entry's headers).
impl SessionClient for reqwest::Client {
    fn post_json_raw(
        &self,
        post: RawPost,
    ) -> impl Future<Output = Result<RawAnswer, HttpError>> + Send {
        send_raw(self, post)
    }
}

/// Requests with our OAuth token, signing in when the server asks.
#[cfg(feature = "oauth")]
impl SessionClient for super::oauth::SignedInClient {
    fn live_secrets(&self) -> Option<LiveSecrets> {
        Some(self.held_tokens())
    }

    fn post_json_raw(
        &self,
        post: RawPost,
    ) -> impl Future<Output = Result<RawAnswer, HttpError>> + Send {
        self.post_json_raw(post)
    }
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
