//! The HTTP plumbing every provider shares: one `reqwest` client (rustls with ring), POST with
//! bounded retries for 429 and 5xx (honouring `retry-after-ms` / `Retry-After`), status codes
//! turned into [`ProviderError`]s that say what to do, and the response read as frames (NDJSON
//! lines, SSE `data` payloads, or the whole body) with an idle timeout between reads.

use std::{sync::Arc, time::Duration};

use reqwest::{
    StatusCode,
    header::{HeaderMap, HeaderName, HeaderValue},
};
use serde_json::Value;
use tokio::sync::mpsc;
use tracing::{debug, warn};

use super::{
    error::{ProviderError, preview},
    event::StreamEvent,
    framing::{FrameError, Lines, SseEvents},
};
use crate::connection::RetryPolicy;

/// Longest wait between two retries, whatever the provider asks for.
const MAX_RETRY_WAIT: Duration = Duration::from_secs(60);

/// Timeouts and retries of one provider.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HttpSettings {
    /// Longest wait for the response to start (connect, send, headers): models load slowly.
    pub request_timeout: Duration,
    /// Longest silence while a response is streaming.
    pub idle_timeout: Duration,
    /// Longest a response may take from its first byte to its end (a model that streams
    /// forever is stopped).
    pub turn_timeout: Duration,
    /// Attempts and backoff for 429 and 5xx answers.
    pub retry: RetryPolicy,
}

impl Default for HttpSettings {
    fn default() -> Self {
        Self {
            request_timeout: Duration::from_secs(300),
            idle_timeout: Duration::from_secs(120),
            turn_timeout: Duration::from_secs(900),
            retry: RetryPolicy {
                attempts: 4,
                base_delay: Duration::from_secs(1),
            },
        }
    }
}

/// How a response body is cut into frames for a decoder.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Framing {
    /// One JSON object per line (Ollama streaming).
    Ndjson,
    /// Server-sent events; each event's `data` is a frame (OpenAI, Anthropic streaming).
    Sse,
    /// The whole body is one frame (non-streaming responses).
    Whole,
}

/// Turns one provider's frames into events.
pub(crate) trait Decoder: Send + 'static {
    /// One frame: an NDJSON line, an SSE `data` payload, or a whole non-streaming body.
    fn frame(&mut self, frame: &str, out: &mut Vec<StreamEvent>) -> Result<(), ProviderError>;
    /// Whether the response is complete (nothing more needs to be read).
    fn is_done(&self) -> bool;
    /// The response body ended: emits what is pending, or says what is missing.
    fn finish(&mut self, out: &mut Vec<StreamEvent>) -> Result<(), ProviderError>;
}

/// Feeds `frames` to a decoder and ends the response: the events, or the first error.
#[cfg(test)]
pub(crate) fn decode_all(
    mut decoder: impl Decoder,
    frames: &[&str],
) -> Result<Vec<StreamEvent>, ProviderError> {
    let mut out = Vec::new();
    for frame in frames {
        decoder.frame(frame, &mut out)?;
    }
    decoder.finish(&mut out)?;
    Ok(out)
}

/// A provider's address and identity.
#[derive(Clone)]
pub(crate) struct Endpoint {
    pub provider: &'static str,
    pub url: String,
    pub model: String,
    pub headers: HeaderMap,
    pub settings: HttpSettings,
    /// What to check when nothing answers.
    pub unreachable_hint: String,
    /// Where the API key comes from, for 401/403 messages.
    pub key_env: &'static str,
    /// What to do when the model does not exist.
    pub missing_model_hint: String,
    /// The API key, to cut out of what the server says.
    pub secret: Option<String>,
    /// Where the base URL is read from, for a redirect's message.
    pub base_env: &'static str,
    client: reqwest::Client,
}

impl std::fmt::Debug for Endpoint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Headers hold the API key: never printed.
        f.debug_struct("Endpoint")
            .field("provider", &self.provider)
            .field("url", &self.url)
            .field("model", &self.model)
            .finish_non_exhaustive()
    }
}

/// A header value holding a secret (never shown in debug output).
pub(crate) fn secret_header(value: &str) -> Result<HeaderValue, String> {
    let mut value = HeaderValue::from_str(value)
        .map_err(|_| "the API key holds characters an HTTP header cannot carry".to_owned())?;
    value.set_sensitive(true);
    Ok(value)
}

impl Endpoint {
    /// An endpoint; the HTTP client is built here, once.
    ///
    /// # Errors
    /// The TLS setup failed (a message for the user).
    pub fn new(
        provider: &'static str,
        url: String,
        model: String,
        headers: Vec<(HeaderName, HeaderValue)>,
        settings: HttpSettings,
    ) -> Result<Self, String> {
        // reqwest is built without a crypto provider of its own; ring is the workspace's.
        let _ = rustls::crypto::ring::default_provider().install_default();
        let client = reqwest::Client::builder()
            .connect_timeout(settings.request_timeout.min(Duration::from_secs(30)))
            .tcp_nodelay(true)
            .redirect(super::redirect::same_origin_only())
            .build()
            .map_err(|err| format!("cannot set up the HTTP client: {err}"))?;
        Ok(Self {
            provider,
            url,
            model,
            headers: headers.into_iter().collect(),
            settings,
            unreachable_hint: "check the base URL".into(),
            key_env: "",
            missing_model_hint: String::new(),
            secret: None,
            base_env: "",
            client,
        })
    }

    /// POSTs `body`, retrying 429 and 5xx answers with backoff; returns the response once its
    /// status is a success.
    pub async fn post(&self, body: Arc<Vec<u8>>) -> Result<reqwest::Response, ProviderError> {
        let retry = self.settings.retry;
        let attempts = retry.attempts.max(1);
        let mut attempt = 1;
        loop {
            match self
                .post_once(Arc::clone(&body))
                .await
                .map_err(|err| self.hide_key(err))
            {
                Ok(response) => return Ok(response),
                Err(err)
                    if err.is_retryable()
                        && attempt < attempts
                        && err.retry_limit().is_none_or(|retries| attempt <= retries) =>
                {
                    let planned = retry.delay_before(attempt + 1);
                    let wait = err.retry_after().unwrap_or(planned).min(MAX_RETRY_WAIT);
                    warn!(provider = self.provider, error = %err.attempt_failure(), "model request {attempt} of {attempts} failed; retrying in {wait:?}");
                    tokio::time::sleep(wait).await;
                    attempt += 1;
                }
                Err(err) => return Err(err.with_attempts(attempt)),
            }
        }
    }

    /// `err` without the configured API key in anything the server said.
    pub fn hide_key(&self, err: ProviderError) -> ProviderError {
        match &self.secret {
            Some(secret) => err.without_secret(secret),
            None => err,
        }
    }

    async fn post_once(&self, body: Arc<Vec<u8>>) -> Result<reqwest::Response, ProviderError> {
        let request = self
            .client
            .post(&self.url)
            .headers(self.headers.clone())
            .header(reqwest::header::CONTENT_TYPE, "application/json")
            .body(Vec::clone(&body))
            .send();
        let response = match tokio::time::timeout(self.settings.request_timeout, request).await {
            Err(_) => {
                return Err(ProviderError::Timeout {
                    provider: self.provider,
                    what: "answer",
                    timeout: self.settings.request_timeout,
                    option: "--request-timeout",
                });
            }
            Ok(Err(err)) => return Err(self.transport_error(&err)),
            Ok(Ok(response)) => response,
        };
        let status = response.status();
        if status.is_success() {
            return Ok(response);
        }
        let retry_after = retry_after(response.headers());
        let text = match tokio::time::timeout(self.settings.idle_timeout, response.text()).await {
            Ok(Ok(text)) => text,
            _ => String::new(),
        };
        Err(self.status_error(status, &text, retry_after))
    }

    fn transport_error(&self, err: &reqwest::Error) -> ProviderError {
        let mut reason = err.to_string();
        let mut source = std::error::Error::source(err);
        while let Some(cause) = source {
            if let Some(super::redirect::OtherOrigin { to }) =
                cause.downcast_ref::<super::redirect::OtherOrigin>()
            {
                return ProviderError::Redirected {
                    provider: self.provider,
                    from: self.url.clone(),
                    to: to.clone(),
                    env_var: self.base_env,
                };
            }
            reason = cause.to_string();
            source = cause.source();
        }
        ProviderError::Unreachable {
            provider: self.provider,
            url: self.url.clone(),
            reason,
            hint: self.unreachable_hint.clone(),
        }
    }

    fn status_error(
        &self,
        status: StatusCode,
        body: &str,
        retry_after: Option<Duration>,
    ) -> ProviderError {
        let message = error_message(body);
        let provider = self.provider;
        match status.as_u16() {
            401 | 403 => ProviderError::Unauthorized {
                provider,
                status: status.as_u16(),
                message,
                env_var: self.key_env,
            },
            404 => ProviderError::ModelNotFound {
                provider,
                model: self.model.clone(),
                message,
                hint: self.missing_model_hint.clone(),
            },
            429 => ProviderError::RateLimited {
                provider,
                message,
                retry_after,
                attempts: 1,
            },
            code @ 500..=599 => {
                let validation = validation_summary(&raw_message(body));
                ProviderError::ServerError {
                    provider,
                    status: code,
                    retries: match (code, &validation) {
                        (500, Some(_)) => Some(0),
                        (500, None) => Some(1),
                        _ => None,
                    },
                    // A summary is all reason: it gets more room than a preview of a body.
                    message: validation.map_or(message, |summary| common::clip(&summary, 1_000)),
                    retry_after,
                    attempts: 1,
                }
            }
            code => ProviderError::Rejected {
                provider,
                status: code,
                message,
            },
        }
    }
}

/// The provider's own words from an error body: `error.message` (OpenAI, Anthropic), `error`
/// (Ollama), or a preview of the body.
fn error_message(body: &str) -> String {
    preview(&raw_message(body))
}

/// A Python server's validation error (pydantic, as llama-cpp-python and LiteLLM raise it:
/// "7 validation errors:\n  {'type': …, 'loc': ('body', 'messages', 1, 'Model', 'content'),
/// 'msg': 'Input should be a valid string', …}") as what it says, field by field:
/// `7 validation errors: messages.1.content: Input should be a valid string; …`. The raw text
/// is mostly the rejected input repeated; cut at a preview's length it loses the reason.
fn validation_summary(message: &str) -> Option<String> {
    let (count, entries) = message.split_once(':')?;
    if !count.contains("validation error") {
        return None;
    }
    let mut found: Vec<String> = Vec::new();
    for entry in entries.split("'loc': (").skip(1) {
        let Some((location, after)) = entry.split_once(')') else {
            continue;
        };
        let path: Vec<&str> = location
            .split(", ")
            .map(|part| part.trim_matches(|c| c == '\'' || c == '"'))
            // The body itself and the model classes tried (`ChatCompletionRequest…`) say
            // nothing to the user.
            .filter(|part| *part != "body" && !part.starts_with(char::is_uppercase))
            .collect();
        let Some((_, msg)) = after.split_once("'msg': ") else {
            continue;
        };
        let Some(quote) = msg.chars().next().filter(|c| *c == '\'' || *c == '"') else {
            continue;
        };
        let text = msg[1..].split(quote).next().unwrap_or_default();
        let line = format!("{}: {text}", path.join("."));
        if !found.contains(&line) {
            found.push(line);
        }
    }
    (!found.is_empty()).then(|| format!("{}: {}", count.trim(), found.join("; ")))
}

/// The provider's message, whole.
fn raw_message(body: &str) -> String {
    let parsed: Option<Value> = serde_json::from_str(body).ok();
    let message = parsed.as_ref().and_then(|v| {
        v.pointer("/error/message")
            .or_else(|| v.get("error"))
            .or_else(|| v.get("message"))
            .and_then(Value::as_str)
            .map(str::to_owned)
    });
    message.unwrap_or_else(|| {
        let trimmed = body.trim();
        if trimmed.is_empty() {
            "no details".to_owned()
        } else {
            trimmed.to_owned()
        }
    })
}

/// `retry-after-ms` (OpenAI) or `Retry-After` in seconds or as an HTTP date.
fn retry_after(headers: &HeaderMap) -> Option<Duration> {
    let text = |name: &str| headers.get(name).and_then(|v| v.to_str().ok());
    if let Some(ms) = text("retry-after-ms").and_then(|v| v.trim().parse::<f64>().ok())
        && ms.is_finite()
        && ms >= 0.0
    {
        return Some(Duration::from_secs_f64(ms / 1000.0));
    }
    let value = text("retry-after")?.trim();
    if let Ok(seconds) = value.parse::<f64>() {
        return (seconds.is_finite() && seconds >= 0.0).then(|| Duration::from_secs_f64(seconds));
    }
    let date = jiff::fmt::rfc2822::parse(value).ok()?;
    let wait = date.timestamp().duration_since(jiff::Timestamp::now());
    Some(Duration::try_from(wait).unwrap_or(Duration::ZERO))
}

/// Sends `body` and feeds the response through `decoder` into `events`, until the response is
/// complete, fails, or the receiver is dropped (the request is then abandoned).
pub(crate) async fn drive(
    endpoint: Endpoint,
    body: Vec<u8>,
    fallback: Option<Vec<u8>>,
    framing: Framing,
    mut decoder: impl Decoder,
    events: mpsc::Sender<Result<StreamEvent, ProviderError>>,
) {
    let provider = endpoint.provider;
    let idle = endpoint.settings.idle_timeout;
    let turn_limit = endpoint.settings.turn_timeout;
    let mut out = Vec::new();
    let result = async {
        let response = match (endpoint.post(Arc::new(body)).await, fallback) {
            (Ok(response), _) => response,
            // The server refused the request as it is: ask once more the other way.
            (
                Err(refused @ (ProviderError::Rejected { .. } | ProviderError::ServerError { .. })),
                Some(fallback),
            ) => {
                warn!(provider, error = %refused, "the server refused an answer-only request with tool_choice none; asking again without tools, earlier tool calls written as text");
                endpoint.post(Arc::new(fallback)).await?
            }
            (Err(err), _) => return Err(err),
        };
        let deadline = tokio::time::Instant::now() + turn_limit;
        let mut response = response;
        let mut lines = Lines::default();
        let mut sse = SseEvents::default();
        let mut whole = String::new();
        while !decoder.is_done() {
            let chunk = next_chunk(&mut response, provider, idle, deadline, turn_limit).await?;
            let Some(chunk) = chunk else { break };
            lines.push(chunk.as_ref()).map_err(|err| too_long(provider, &err))?;
            while let Some(line) = lines.next_line().map_err(|err| too_long(provider, &err))? {
                match framing {
                    Framing::Whole => {
                        whole.push_str(&line);
                        whole.push('\n');
                    }
                    Framing::Ndjson if line.trim().is_empty() => {}
                    Framing::Ndjson => decoder.frame(line.trim(), &mut out)?,
                    Framing::Sse => {
                        if let Some(event) =
                            sse.line(&line).map_err(|err| too_long(provider, &err))?
                        {
                            debug!(provider, event = %event.kind, "sse event");
                            decoder.frame(&event.data, &mut out)?;
                        }
                    }
                }
            }
            flush(&mut out, &events).await?;
        }
        let rest = lines.rest();
        match framing {
            Framing::Whole => {
                whole.push_str(rest.as_deref().unwrap_or_default());
                decoder.frame(&whole, &mut out)?;
            }
            // A line without its end at the end of the stream was cut off mid-way.
            Framing::Ndjson if rest.is_some() && !decoder.is_done() => {
                return Err(ProviderError::StreamCut {
                    provider,
                    detail: format!(
                        "the stream ended in the middle of a line ({} bytes of it came)",
                        rest.as_deref().map_or(0, str::len)
                    ),
                });
            }
            Framing::Ndjson | Framing::Sse => {}
        }
        decoder.finish(&mut out)?;
        flush(&mut out, &events).await
    }
    .await;
    if let Err(err) = result {
        let _ = events.send(Err(endpoint.hide_key(err))).await;
    }
}

async fn flush(
    out: &mut Vec<StreamEvent>,
    events: &mpsc::Sender<Result<StreamEvent, ProviderError>>,
) -> Result<(), ProviderError> {
    for event in out.drain(..) {
        if events.send(Ok(event)).await.is_err() {
            // The receiver is gone: the request was cancelled. Nobody reads this error.
            return Err(ProviderError::StreamCut {
                provider: "",
                detail: "cancelled".into(),
            });
        }
    }
    Ok(())
}

/// The next chunk of the response: within the idle limit, and before the turn's deadline.
async fn next_chunk(
    response: &mut reqwest::Response,
    provider: &'static str,
    idle: Duration,
    deadline: tokio::time::Instant,
    turn_limit: Duration,
) -> Result<Option<impl AsRef<[u8]> + use<>>, ProviderError> {
    let wait = idle.min(deadline.saturating_duration_since(tokio::time::Instant::now()));
    match tokio::time::timeout(wait, response.chunk()).await {
        Ok(chunk) => chunk.map_err(|err| cut(provider, &err)),
        Err(_) if tokio::time::Instant::now() >= deadline => Err(ProviderError::Timeout {
            provider,
            what: "finish its response",
            timeout: turn_limit,
            option: "--turn-timeout",
        }),
        Err(_) => Err(timeout(provider, idle)),
    }
}

fn too_long(provider: &'static str, err: &FrameError) -> ProviderError {
    ProviderError::Protocol {
        provider,
        detail: err.to_string(),
    }
}

fn timeout(provider: &'static str, idle: Duration) -> ProviderError {
    ProviderError::Timeout {
        provider,
        what: "send more of its response",
        timeout: idle,
        option: "--request-timeout",
    }
}

fn cut(provider: &'static str, err: &reqwest::Error) -> ProviderError {
    let mut detail = err.to_string();
    if let Some(cause) = std::error::Error::source(err) {
        detail = format!("{detail}: {cause}");
    }
    ProviderError::StreamCut { provider, detail }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retry_after_reads_milliseconds_seconds_and_dates() {
        let mut headers = HeaderMap::new();
        headers.insert("retry-after", HeaderValue::from_static("3"));
        assert_eq!(retry_after(&headers), Some(Duration::from_secs(3)));
        headers.insert("retry-after-ms", HeaderValue::from_static("250"));
        assert_eq!(retry_after(&headers), Some(Duration::from_millis(250)));
        let mut dated = HeaderMap::new();
        dated.insert(
            "retry-after",
            HeaderValue::from_static("Wed, 21 Oct 2015 07:28:00 GMT"),
        );
        assert_eq!(retry_after(&dated), Some(Duration::ZERO));
        dated.insert("retry-after", HeaderValue::from_static("soon"));
        assert_eq!(retry_after(&dated), None);
    }

    #[test]
    fn a_validation_error_says_which_field_and_why() {
        let body = test_support::fixture_text("llm/openai/llamacpp-validation-500.json");
        let summary = validation_summary(&raw_message(&body)).unwrap();
        assert_eq!(
            summary,
            "7 validation errors: messages.1.role: Input should be 'system'; messages.1.role: Input should be 'user'; messages.1.content: Input should be a valid string; messages.1.role: Input should be 'tool'; messages.1.tool_call_id: Field required; messages.1.role: Input should be 'function'; messages.1.name: Field required"
        );
        assert_eq!(validation_summary("overloaded"), None);
        assert_eq!(
            validation_summary("1 validation error: nothing we can read"),
            None
        );
    }

    #[test]
    fn error_messages_come_from_each_providers_error_shape() {
        assert_eq!(
            error_message(
                r#"{"error":{"message":"Incorrect API key provided","type":"invalid_request_error"}}"#
            ),
            "Incorrect API key provided"
        );
        assert_eq!(
            error_message(r#"{"error":"model \"qwen9\" not found, try pulling it first"}"#),
            "model \"qwen9\" not found, try pulling it first"
        );
        assert_eq!(error_message("  "), "no details");
        assert_eq!(
            error_message("<html>\nbad gateway</html>"),
            "<html> bad gateway</html>"
        );
        assert_eq!(error_message(&"x".repeat(400)).chars().count(), 301);
    }
}
