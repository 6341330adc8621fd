//! [`SignedInClient`]: rmcp's Streamable HTTP client with a token on every request (rmcp's
//! `AuthClient`, which refreshes an expired token and retries once after a refresh), and a
//! sign-in when the server still refuses: a request refused with 401, or with 403
//! `insufficient_scope`, is sent again once the [`SignIn`] got a token; a refusal it cannot
//! answer stands. The server ran nothing it refused, so sending the request again is safe.

use std::{collections::HashMap, sync::Arc};

use futures_util::stream::BoxStream;
use reqwest::header::{HeaderName, HeaderValue};
use rmcp::{
    model::ClientJsonRpcMessage,
    transport::auth::AuthError,
    transport::streamable_http_client::{
        StreamableHttpClient, StreamableHttpError, StreamableHttpPostResponse,
        StreamableHttpResponseLimits,
    },
};
use sse_stream::{Error as SseError, Sse};

use super::sign_in::{Declined, MAX_FRUITLESS_SIGN_INS, SignIn};
use crate::transport::http::{
    raw::{RawAnswer, RawPost, send_raw},
    secrets::LiveSecrets,
};

type Error = StreamableHttpError<reqwest::Error>;

/// Requests with our tokens, signing in when the server asks.
#[derive(Clone, Debug)]
pub struct SignedInClient {
    sign_in: Arc<SignIn>,
}

impl SignedInClient {
    /// Requests signed in by `sign_in`.
    pub fn new(sign_in: Arc<SignIn>) -> Self {
        Self { sign_in }
    }

    /// The tokens this client holds, as they change.
    pub(in crate::transport::http) fn held_tokens(&self) -> LiveSecrets {
        self.sign_in.live_secrets()
    }

    /// `post` sent once with the token held now if any (refreshed when it expired), its JSON
    /// answer's bytes unread: no sign-in, since only a request the server just answered is
    /// sent this way.
    pub(in crate::transport::http) async fn post_json_raw(
        &self,
        mut post: RawPost,
    ) -> Result<RawAnswer, Error> {
        let client = self.sign_in.client();
        match client.get_access_token().await {
            Ok(token) => post.auth_header = Some(token),
            // Not signed in: the server answered without a token.
            Err(AuthError::AuthorizationRequired) => {}
            Err(error) => return Err(StreamableHttpError::Auth(error)),
        }
        send_raw(&client.http_client, post).await
    }

    /// `call` (which sends one request), sent again after each sign-in its refusal led to.
    async fn signing_in<T, F, Fut>(&self, call: F) -> Result<T, Error>
    where
        F: Fn() -> Fut,
        Fut: Future<Output = Result<T, Error>>,
    {
        let mut signed_in = false;
        let mut sign_ins = 0;
        loop {
            let seen = self.sign_in.generation();
            let refused = match call().await {
                Ok(answer) => {
                    if signed_in {
                        self.sign_in.succeeded().await;
                    }
                    return Ok(answer);
                }
                Err(refused) => refused,
            };
            let (challenge, insufficient) = match &refused {
                StreamableHttpError::AuthRequired(refusal) => {
                    (&refusal.www_authenticate_header, false)
                }
                StreamableHttpError::InsufficientScope(refusal) => {
                    (&refusal.www_authenticate_header, true)
                }
                _ => return Err(refused),
            };
            // Each pass signs in at most once, and the sign-in bounds itself across requests:
            // this bound only keeps one request from looping on its own.
            if sign_ins > MAX_FRUITLESS_SIGN_INS {
                return Err(refused);
            }
            sign_ins += 1;
            match self.sign_in.answer(challenge, insufficient, seen).await {
                Ok(()) => signed_in = true,
                Err(Declined::Failed(err)) => return Err(StreamableHttpError::Auth(err)),
                Err(Declined::NotOAuth | Declined::Exhausted) => return Err(refused),
            }
        }
    }
}

impl StreamableHttpClient for SignedInClient {
    type Error = reqwest::Error;

    async fn post_message(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<StreamableHttpPostResponse, Error> {
        self.signing_in(|| {
            self.sign_in.client().post_message(
                Arc::clone(&uri),
                message.clone(),
                session_id.clone(),
                auth_header.clone(),
                custom_headers.clone(),
            )
        })
        .await
    }

    async fn post_message_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        max_sse_event_size: usize,
    ) -> Result<StreamableHttpPostResponse, Error> {
        self.signing_in(|| {
            self.sign_in.client().post_message_with_max_sse_event_size(
                Arc::clone(&uri),
                message.clone(),
                session_id.clone(),
                auth_header.clone(),
                custom_headers.clone(),
                max_sse_event_size,
            )
        })
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
    ) -> Result<StreamableHttpPostResponse, Error> {
        self.signing_in(|| {
            self.sign_in.client().post_message_with_response_limits(
                Arc::clone(&uri),
                message.clone(),
                session_id.clone(),
                auth_header.clone(),
                custom_headers.clone(),
                limits,
            )
        })
        .await
    }

    async fn delete_session(
        &self,
        uri: Arc<str>,
        session_id: Arc<str>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<(), Error> {
        // Ending a session is not worth a sign-in: rmcp's refresh is all it gets.
        self.sign_in
            .client()
            .delete_session(uri, session_id, auth_header, custom_headers)
            .await
    }

    async fn get_stream(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<BoxStream<'static, Result<Sse, SseError>>, Error> {
        self.signing_in(|| {
            self.sign_in.client().get_stream(
                Arc::clone(&uri),
                session_id.clone(),
                last_event_id.clone(),
                auth_header.clone(),
                custom_headers.clone(),
            )
        })
        .await
    }

    async fn get_stream_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        max_sse_event_size: usize,
    ) -> Result<BoxStream<'static, Result<Sse, SseError>>, Error> {
        self.signing_in(|| {
            self.sign_in.client().get_stream_with_max_sse_event_size(
                Arc::clone(&uri),
                session_id.clone(),
                last_event_id.clone(),
                auth_header.clone(),
                custom_headers.clone(),
                max_sse_event_size,
            )
        })
        .await
    }
}
