//! [`HttpClient`]: the HTTP client a remote session's requests go through: reqwest as it is,
//! or (feature `oauth`) signed in, carrying our token and signing in when the server asks.

use std::{collections::HashMap, sync::Arc};

use futures_util::stream::BoxStream;
use reqwest::header::{HeaderName, HeaderValue};
use rmcp::{
    model::ClientJsonRpcMessage,
    transport::streamable_http_client::{
        SseError, StreamableHttpClient, StreamableHttpError, StreamableHttpPostResponse,
        StreamableHttpResponseLimits,
    },
};

/// What rmcp's Streamable HTTP client reports, over reqwest.
type HttpError = StreamableHttpError<reqwest::Error>;

/// The HTTP client of a session: plain reqwest, or signed in with OAuth.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub enum HttpClient {
    /// Requests as they are (with the entry's headers).
    Plain(reqwest::Client),
    /// Requests with our OAuth token, signing in when the server asks.
    #[cfg(feature = "oauth")]
    SignedIn(super::oauth::SignedInClient),
}

impl HttpClient {
    /// The secrets that change while the client lives (a signed-in client's tokens).
    pub(super) fn live_secrets(&self) -> Option<super::secrets::LiveSecrets> {
        match self {
            Self::Plain(_) => None,
            #[cfg(feature = "oauth")]
            Self::SignedIn(client) => Some(client.live_secrets()),
        }
    }
}

/// The body of each [`StreamableHttpClient`] method: the same call on either client.
macro_rules! either {
    ($self:ident . $method:ident ( $($arg:expr),* )) => {
        match $self {
            HttpClient::Plain(client) => client.$method($($arg),*).await,
            #[cfg(feature = "oauth")]
            HttpClient::SignedIn(client) => client.$method($($arg),*).await,
        }
    };
}

type SseStream = BoxStream<'static, Result<sse_stream::Sse, SseError>>;

impl StreamableHttpClient for HttpClient {
    type Error = reqwest::Error;

    async fn post_message(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<StreamableHttpPostResponse, HttpError> {
        either!(self.post_message(uri, message, session_id, auth_header, custom_headers))
    }

    async fn post_message_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        max_sse_event_size: usize,
    ) -> Result<StreamableHttpPostResponse, HttpError> {
        either!(self.post_message_with_max_sse_event_size(
            uri,
            message,
            session_id,
            auth_header,
            custom_headers,
            max_sse_event_size
        ))
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
        either!(self.post_message_with_response_limits(
            uri,
            message,
            session_id,
            auth_header,
            custom_headers,
            limits
        ))
    }

    async fn delete_session(
        &self,
        uri: Arc<str>,
        session_id: Arc<str>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<(), HttpError> {
        either!(self.delete_session(uri, session_id, auth_header, custom_headers))
    }

    async fn get_stream(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<SseStream, HttpError> {
        either!(self.get_stream(uri, session_id, last_event_id, auth_header, custom_headers))
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
        either!(self.get_stream_with_max_sse_event_size(
            uri,
            session_id,
            last_event_id,
            auth_header,
            custom_headers,
            max_sse_event_size
        ))
    }
}
