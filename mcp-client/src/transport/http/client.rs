//! [`connect`]: rmcp's Streamable HTTP client (`Mcp-Session-Id`, `MCP-Protocol-Version`, SSE
//! with resumption, DELETE on close) on our reqwest client, with the entry's headers on every
//! request, and [`HttpTransport`], which shows the session's notifications to the handler's
//! tap in stream order as the stdio transport does.
//!
//! With the `oauth` feature, the requests of an entry without an `Authorization` header of
//! its own go through [`SignedInClient`](super::oauth::SignedInClient): tokens on each, and a
//! sign-in when the server asks for one.
//!
//! Bounds are rmcp's (3.11.0, `common/reqwest/streamable_http_client.rs`): a JSON body and each
//! SSE event are read up to the entry's `maxLineBytes`, an error body up to 64 KiB. What the
//! server sends back reaches rmcp through a [`GuardedClient`] (the entry's header values cut
//! out). Redirects are followed within the URL's origin only, at most [`MAX_REDIRECTS`] times:
//! reqwest would send every header but `Authorization` and cookies to another origin. rmcp's
//! own re-initialize after a 404 is turned off: the connection starts the new session itself,
//! so that its tools are listed again and its callers learn of it (see `ServerConnection`).

use std::{collections::HashMap, time::Duration};

use reqwest::header::{HeaderName, HeaderValue};
use rmcp::{
    RoleClient,
    model::JsonRpcMessage,
    service::{RxJsonRpcMessage, TxJsonRpcMessage},
    transport::{
        StreamableHttpClientTransport, Transport,
        streamable_http_client::{StreamableHttpClientTransportConfig, StreamableHttpError},
    },
};

use super::{
    HttpEndpoint,
    guarded::{CutEvents, GuardedClient},
    secrets::Secrets,
    session_client::SessionClient,
};
use crate::transport::NotificationTap;

/// Most redirects followed for one request (reqwest's default).
pub(super) const MAX_REDIRECTS: usize = 10;

/// What rmcp's Streamable HTTP client reports, over reqwest.
pub type HttpError = StreamableHttpError<reqwest::Error>;

/// The transport of one Streamable HTTP session over the client `C`: rmcp's, with the
/// notification tap.
pub(crate) struct HttpTransport<C: SessionClient> {
    inner: StreamableHttpClientTransport<GuardedClient<C>>,
    tap: Option<NotificationTap>,
    cut: CutEvents,
}

impl<C: SessionClient> HttpTransport<C> {
    /// Shows every notification the server sends to `tap` before it is handed to rmcp, as
    /// [`ChildTransport::set_notification_tap`](crate::transport::ChildTransport::set_notification_tap).
    pub(crate) fn set_notification_tap(&mut self, tap: NotificationTap) {
        self.tap = Some(tap);
    }

    /// Where the session notes an SSE event it cut at `maxLineBytes` (rmcp then closes the
    /// answer's stream, and the request fails without saying why).
    pub(crate) fn cut_events(&self) -> CutEvents {
        self.cut.clone()
    }
}

/// Why the client did not follow a redirect.
#[derive(Debug, thiserror::Error)]
pub(super) enum RedirectRefused {
    /// One redirect more than [`MAX_REDIRECTS`].
    #[error("more than {MAX_REDIRECTS} redirects")]
    Loop,
    /// A redirect to another origin (scheme, host and port), given here.
    #[error("a redirect to another origin, {0}")]
    Elsewhere(String),
}

/// Follows a redirect within the first URL's origin, [`MAX_REDIRECTS`] times at most.
fn redirect_policy(secrets: Secrets) -> reqwest::redirect::Policy {
    reqwest::redirect::Policy::custom(move |attempt| {
        let first = attempt.previous().first().map(reqwest::Url::origin);
        if first.is_some_and(|origin| origin != attempt.url().origin()) {
            let origin = attempt.url().origin().ascii_serialization();
            let origin = secrets.scrub(&origin).into_owned();
            attempt.error(RedirectRefused::Elsewhere(origin))
        } else if attempt.previous().len() > MAX_REDIRECTS {
            attempt.error(RedirectRefused::Loop)
        } else {
            attempt.follow()
        }
    })
}

impl<C: SessionClient> Transport<RoleClient> for HttpTransport<C> {
    type Error = HttpError;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleClient>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        self.inner.send(item)
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleClient>> {
        let message = self.inner.receive().await?;
        if let (Some(tap), JsonRpcMessage::Notification(_)) = (&self.tap, &message)
            && let Ok(value) = serde_json::to_value(&message)
        {
            tap(&value);
        }
        Some(message)
    }

    fn close(&mut self) -> impl Future<Output = Result<(), Self::Error>> + Send {
        self.inner.close()
    }
}

/// The HTTP client of the remote server `endpoint`: connecting a socket may take at most
/// `connect_timeout`; redirects stay within the first URL's origin.
///
/// # Errors
/// The TLS setup failed: a message for the user.
pub fn http_client(
    endpoint: &HttpEndpoint,
    connect_timeout: Duration,
) -> Result<reqwest::Client, String> {
    super::tls::ready();
    reqwest::Client::builder()
        .connect_timeout(connect_timeout)
        .tcp_nodelay(true)
        .redirect(redirect_policy(Secrets::of(endpoint.headers.values())))
        .build()
        .map_err(|err| format!("cannot set up the HTTP client: {err}"))
}

/// The transport to `endpoint` over `client` (nothing is sent until `initialize`).
///
/// # Errors
/// The URL or a header cannot be used: a message for the user.
pub(crate) fn connect<C: SessionClient>(
    endpoint: &HttpEndpoint,
    client: C,
) -> Result<HttpTransport<C>, String> {
    let url =
        reqwest::Url::parse(&endpoint.url).map_err(|err| format!("`url` is not a URL ({err})"))?;
    let secrets = Secrets::of(endpoint.headers.values()).with_live(client.live_secrets());
    let mut headers = HashMap::new();
    for (name, value) in &endpoint.headers {
        let name = HeaderName::from_bytes(name.as_bytes())
            .map_err(|_| format!("`headers.{name}` is not a header name"))?;
        // Never quote the value: it is where the token is.
        let value = HeaderValue::from_str(value)
            .map_err(|_| format!("`headers.{name}` has a character a header cannot hold"))?;
        headers.insert(name, value);
    }
    let config = StreamableHttpClientTransportConfig::with_uri(url.as_str())
        .custom_headers(headers)
        .max_sse_event_size(endpoint.max_message)
        .max_json_response_size(endpoint.max_message)
        .reinit_on_expired_session(false);
    let cut = CutEvents::default();
    let client = GuardedClient {
        inner: client,
        secrets,
        cut: cut.clone(),
        server: endpoint.name.as_str().into(),
    };
    Ok(HttpTransport {
        inner: StreamableHttpClientTransport::with_client(client, config),
        tap: None,
        cut,
    })
}
