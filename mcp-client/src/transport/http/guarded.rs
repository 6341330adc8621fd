//! [`GuardedClient`]: the session's HTTP client as rmcp's Streamable HTTP worker uses it, with what the
//! server sends back checked before rmcp reads (or logs) it: the entry's [`Secrets`] (its
//! header values, and a signed-in client's tokens as they are at the time) are cut out of
//! every message, SSE event and error text, and an SSE event cut at `maxLineBytes` is
//! noted in [`CutEvents`], so that the request it failed can say why (rmcp only closes the
//! answer's stream). An event nested deeper than serde_json reads is made readable as on
//! stdio (`deep.rs`); a plain JSON answer that deep fails inside rmcp, which parses it, so a
//! list request (which changes nothing) is then sent once more and its answer read here.

use std::{
    borrow::Cow,
    collections::HashMap,
    sync::{
        Arc,
        atomic::{AtomicUsize, Ordering},
    },
};

use futures_util::{StreamExt as _, stream::BoxStream};
use reqwest::header::{HeaderName, HeaderValue};
use rmcp::{
    model::{ClientJsonRpcMessage, ServerJsonRpcMessage},
    transport::streamable_http_client::{
        AuthRequiredError, InsufficientScopeError, SseError, StreamableHttpClient,
        StreamableHttpError, StreamableHttpPostResponse, StreamableHttpResponseLimits,
    },
};
use sse_stream::Sse;

use super::{raw::RawPost, secrets::Secrets, session_client::SessionClient};
use crate::transport::deep::{Trimmed, trim as too_deep};

/// What rmcp's client reports over reqwest (`client::HttpError`, which uses this module).
type HttpError = StreamableHttpError<reqwest::Error>;

/// The size bound at which the transport last cut an SSE event, until a failed request takes
/// it. Shared by the session's client and whoever explains its failures.
#[derive(Clone, Debug, Default)]
pub struct CutEvents(Arc<AtomicUsize>);

impl CutEvents {
    fn note(&self, max_size: usize) {
        self.0.store(max_size, Ordering::SeqCst);
    }

    /// The bound an SSE event was cut at since the last call, if one was.
    pub fn take(&self) -> Option<usize> {
        Some(self.0.swap(0, Ordering::SeqCst)).filter(|&max_size| max_size > 0)
    }
}

/// The session's HTTP client `C` (reqwest, signed in or not), with the server's answers
/// guarded.
#[derive(Clone)]
pub(super) struct GuardedClient<C> {
    pub(super) inner: C,
    pub(super) secrets: Secrets,
    pub(super) cut: CutEvents,
    /// The server's name, for the log.
    pub(super) server: std::sync::Arc<str>,
}

type SseStream = BoxStream<'static, Result<Sse, SseError>>;

impl<C> GuardedClient<C> {
    /// `error` without the secrets in its text.
    fn error(&self, error: HttpError) -> HttpError {
        let scrub = |text: &str| self.secrets.scrub(text).into_owned();
        match error {
            StreamableHttpError::UnexpectedServerResponse(text) => {
                StreamableHttpError::UnexpectedServerResponse(scrub(&text).into())
            }
            StreamableHttpError::UnexpectedContentType(Some(content_type)) => {
                StreamableHttpError::UnexpectedContentType(Some(scrub(&content_type)))
            }
            StreamableHttpError::AuthRequired(error) => StreamableHttpError::AuthRequired(
                AuthRequiredError::new(scrub(&error.www_authenticate_header)),
            ),
            StreamableHttpError::InsufficientScope(error) => {
                StreamableHttpError::InsufficientScope(InsufficientScopeError::new(
                    scrub(&error.www_authenticate_header),
                    error.required_scope.as_deref().map(scrub),
                ))
            }
            // The entry's URL may carry a secret in its query, fragment or password (rmcp
            // logs this error as it is, at error level), and a redirect chosen by the server
            // may have put one of the entry's secrets in it.
            StreamableHttpError::Client(error)
                if error.url().is_some_and(|url| {
                    url.query().is_some()
                        || url.fragment().is_some()
                        || url.password().is_some()
                        || self.secrets.found_in(url.as_str())
                }) =>
            {
                StreamableHttpError::Client(error.without_url())
            }
            #[cfg(feature = "oauth")]
            StreamableHttpError::Auth(error) => StreamableHttpError::Auth(scrub_auth(error, scrub)),
            other => other,
        }
    }

    /// `message` without the secrets in its strings. (One in a method name or a key rmcp
    /// reads would make the message unreadable once cut: it is left as it is.)
    fn message(&self, message: ServerJsonRpcMessage) -> ServerJsonRpcMessage {
        if self.secrets.is_empty() {
            return message;
        }
        let Ok(json) = serde_json::to_string(&message) else {
            return message;
        };
        match self.secrets.scrub_json(&json) {
            Cow::Borrowed(_) => message,
            Cow::Owned(scrubbed) => serde_json::from_str(&scrubbed).unwrap_or(message),
        }
    }

    /// `stream` with the secrets cut out of each event's data, and a cut event noted.
    fn stream(&self, stream: SseStream) -> SseStream {
        let (secrets, cut) = (self.secrets.clone(), self.cut.clone());
        let server = std::sync::Arc::clone(&self.server);
        stream
            .map(move |event| match event {
                Ok(mut event) => {
                    if let Some(data) = &event.data
                        && let Cow::Owned(scrubbed) = secrets.scrub_json(data)
                    {
                        event.data = Some(scrubbed);
                    }
                    if let Some(data) = &event.data {
                        match too_deep(data) {
                            None => {}
                            Some(Trimmed::Readable { value, notes }) => {
                                for note in &notes {
                                    tracing::error!(server = %server, "{note}");
                                }
                                event.data = Some(value.to_string());
                            }
                            Some(Trimmed::Dropped(why)) => {
                                tracing::error!(server = %server, reason = %why, "dropped an SSE event nested deeper than mcp-client reads (127 levels)");
                            }
                        }
                    }
                    Ok(event)
                }
                Err(error) => {
                    if let Some(max_size) = cut_at(&error) {
                        cut.note(max_size);
                    }
                    Err(error)
                }
            })
            .boxed()
    }
}

/// `error` with `scrub` applied to its text, when rmcp kept a text (the token endpoint's
/// answer may quote a code or a token).
#[cfg(feature = "oauth")]
fn scrub_auth(
    error: rmcp::transport::auth::AuthError,
    scrub: impl Fn(&str) -> String,
) -> rmcp::transport::auth::AuthError {
    use rmcp::transport::auth::AuthError;
    match error {
        AuthError::AuthorizationFailed(text) => AuthError::AuthorizationFailed(scrub(&text)),
        AuthError::TokenExchangeFailed(text) => AuthError::TokenExchangeFailed(scrub(&text)),
        AuthError::TokenRefreshFailed(text) => AuthError::TokenRefreshFailed(scrub(&text)),
        AuthError::TokenRefreshRejected(text) => AuthError::TokenRefreshRejected(scrub(&text)),
        AuthError::CredentialStoreError(text) => AuthError::CredentialStoreError(scrub(&text)),
        AuthError::OAuthError(text) => AuthError::OAuthError(scrub(&text)),
        AuthError::MetadataError(text) => AuthError::MetadataError(scrub(&text)),
        AuthError::InternalError(text) => AuthError::InternalError(scrub(&text)),
        other => other,
    }
}

/// The bound of rmcp's "SSE event exceeded the maximum size of N bytes" (=3.11.0,
/// `client_side_sse::BoundedSseStreamError::EventTooLarge`, a private type).
fn cut_at(error: &SseError) -> Option<usize> {
    let SseError::Body(error) = error else {
        return None;
    };
    error
        .to_string()
        .strip_prefix("SSE event exceeded the maximum size of ")?
        .strip_suffix(" bytes")?
        .parse()
        .ok()
}

/// Whether `message` is a request that may be sent twice: a list, which changes nothing.
fn asked_again(message: &ClientJsonRpcMessage) -> bool {
    let ClientJsonRpcMessage::Request(request) = message else {
        return false;
    };
    matches!(
        request.request.method(),
        "tools/list" | "prompts/list" | "resources/list" | "resources/templates/list"
    )
}

/// Whether rmcp failed to read a JSON answer because it nests past serde_json's limit (its
/// words, =3.11.0: `json_rpc_parse_error_message`, then serde_json's; a server's text only
/// follows them).
fn nests_too_deep(error: &HttpError) -> bool {
    let StreamableHttpError::UnexpectedServerResponse(text) = error else {
        return false;
    };
    text.strip_prefix("could not parse JSON response as ServerJsonRpcMessage: ")
        .is_some_and(|reason| reason.starts_with("recursion limit exceeded"))
}

impl<C: SessionClient> GuardedClient<C> {
    /// `post` sent again and its answer read as on stdio: the tools nesting too deep left
    /// out, saying why, or an error for the request.
    async fn read_deep_answer(
        &self,
        post: RawPost,
    ) -> Result<StreamableHttpPostResponse, HttpError> {
        let answer = self
            .inner
            .post_json_raw(post)
            .await
            .map_err(|error| self.error(error))?;
        let unreadable = |why: String| {
            Err(self.error(StreamableHttpError::UnexpectedServerResponse(
                format!("could not read the server's answer: {why}").into(),
            )))
        };
        let Ok(text) = std::str::from_utf8(&answer.body) else {
            return unreadable("it is not UTF-8".into());
        };
        let text = self.secrets.scrub_json(text);
        let message = match too_deep(&text) {
            Some(Trimmed::Readable { value, notes }) => {
                for note in &notes {
                    tracing::error!(server = %self.server, "{note}");
                }
                serde_json::from_value::<ServerJsonRpcMessage>(value)
            }
            Some(Trimmed::Dropped(why)) => return unreadable(why),
            // Not too deep this time.
            None => serde_json::from_str::<ServerJsonRpcMessage>(&text),
        };
        match message {
            Ok(message) => Ok(StreamableHttpPostResponse::Json(
                self.message(message),
                answer.session_id,
            )),
            Err(error) => unreadable(format!("it is not a JSON-RPC message ({error})")),
        }
    }
}

impl<C: SessionClient> StreamableHttpClient for GuardedClient<C> {
    type Error = reqwest::Error;

    async fn post_message(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<StreamableHttpPostResponse, HttpError> {
        self.post_message_with_response_limits(
            uri,
            message,
            session_id,
            auth_header,
            custom_headers,
            StreamableHttpResponseLimits::default(),
        )
        .await
    }

    async fn post_message_with_response_limits(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        limits: StreamableHttpResponseLimits,
    ) -> Result<StreamableHttpPostResponse, HttpError> {
        // Kept to send again, should its JSON answer nest too deep for rmcp to read.
        let again = asked_again(&message).then(|| RawPost {
            uri: Arc::clone(&uri),
            message: message.clone(),
            session_id: session_id.clone(),
            auth_header: auth_header.clone(),
            custom_headers: custom_headers.clone(),
            max_size: limits.max_json_response_size,
        });
        let response = self
            .inner
            .post_message_with_response_limits(
                uri,
                message,
                session_id,
                auth_header,
                custom_headers,
                limits,
            )
            .await;
        let response = match (response, again) {
            (Err(error), Some(again)) if nests_too_deep(&error) => {
                return self.read_deep_answer(again).await;
            }
            (response, _) => response.map_err(|error| self.error(error))?,
        };
        Ok(match response {
            StreamableHttpPostResponse::Json(message, session) => {
                StreamableHttpPostResponse::Json(self.message(message), session)
            }
            StreamableHttpPostResponse::Sse(stream, session) => {
                StreamableHttpPostResponse::Sse(self.stream(stream), session)
            }
            other => other,
        })
    }

    async fn delete_session(
        &self,
        uri: Arc<str>,
        session_id: Arc<str>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<(), HttpError> {
        self.inner
            .delete_session(uri, session_id, auth_header, custom_headers)
            .await
            .map_err(|error| self.error(error))
    }

    async fn get_stream(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<SseStream, HttpError> {
        self.inner
            .get_stream(uri, session_id, last_event_id, auth_header, custom_headers)
            .await
            .map(|stream| self.stream(stream))
            .map_err(|error| self.error(error))
    }

    async fn get_stream_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        max_sse_event_size: usize,
    ) -> Result<SseStream, HttpError> {
        self.inner
            .get_stream_with_max_sse_event_size(
                uri,
                session_id,
                last_event_id,
                auth_header,
                custom_headers,
                max_sse_event_size,
            )
            .await
            .map(|stream| self.stream(stream))
            .map_err(|error| self.error(error))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Found by the hostile review: `?token=…` in an entry's URL reached stderr at the default
    /// level, in rmcp's own line about the failed request.
    #[tokio::test]
    async fn a_failed_requests_url_is_dropped_when_it_may_hold_a_secret() {
        let guarded = GuardedClient {
            inner: (),
            secrets: Secrets::default(),
            cut: CutEvents::default(),
            server: "home".into(),
        };
        super::super::tls::ready();
        let client = reqwest::Client::new();
        for url in [
            "http://127.0.0.1:1/mcp?token=SECRET123",
            "http://127.0.0.1:1/mcp#SECRET123",
        ] {
            let error = client.get(url).send().await.unwrap_err();
            assert!(
                format!("{error:?}").contains("SECRET123"),
                "{url}: {error:?}"
            );
            let shown = format!("{:?}", guarded.error(StreamableHttpError::Client(error)));
            assert!(!shown.contains("SECRET123"), "{shown}");
        }
        // reqwest takes a password out of the URL itself; a plain address is kept: it says
        // where the request went.
        let error = client
            .get("http://127.0.0.1:1/mcp")
            .send()
            .await
            .unwrap_err();
        let shown = format!("{:?}", guarded.error(StreamableHttpError::Client(error)));
        assert!(shown.contains("127.0.0.1:1/mcp"), "{shown}");
    }

    /// As on stdio: one tool nested past serde_json's limit, sent in an SSE event, is left
    /// out rather than the whole answer being unreadable.
    #[tokio::test]
    async fn an_event_nested_too_deep_is_made_readable() {
        let guarded = GuardedClient {
            inner: (),
            secrets: Secrets::default(),
            cut: CutEvents::default(),
            server: "home".into(),
        };
        let mut deep = String::from("{}");
        for _ in 0..150 {
            deep = format!(r#"{{"properties":{{"a":{deep}}}}}"#);
        }
        let data = format!(
            r#"{{"jsonrpc":"2.0","id":2,"result":{{"tools":[{{"name":"deep","inputSchema":{deep}}},{{"name":"ok","inputSchema":{{}}}}]}}}}"#
        );
        let event = Sse {
            event: None,
            data: Some(data),
            id: Some("1".into()),
            retry: None,
        };
        let mut stream = guarded.stream(futures_util::stream::iter([Ok(event)]).boxed());
        let event = stream.next().await.unwrap().unwrap();
        let message: ServerJsonRpcMessage =
            serde_json::from_str(event.data.as_deref().unwrap()).unwrap();
        let shown = serde_json::to_value(&message).unwrap();
        assert_eq!(
            shown["result"]["tools"],
            serde_json::json!([{"name": "ok", "inputSchema": {}}])
        );
        assert_eq!(event.id.as_deref(), Some("1"));
    }
}
