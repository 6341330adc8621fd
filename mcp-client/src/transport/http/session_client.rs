//! [`SessionClient`]: what a remote session's requests can go through — reqwest as it is, or
//! (feature `oauth`) [`SignedInClient`](super::oauth::SignedInClient), which carries our token
//! and signs in when the server asks — and the secrets a client holds that change while it
//! lives (a signed-in client's tokens), for the guard to cut out of what the server sends.
//!
//! [`SessionClient::post_json_raw`] sends a request as rmcp's client does and hands back the
//! JSON answer's bytes unread: rmcp parses a plain JSON answer inside its own client, so an
//! answer nested past serde_json's limit fails there whole; the guard sends an idempotent
//! request again this way to make such an answer readable (`deep.rs`).

use rmcp::transport::streamable_http_client::{StreamableHttpClient, StreamableHttpError};

use super::{
    raw::{RawAnswer, RawPost, send_raw},
    secrets::LiveSecrets,
};

type HttpError = StreamableHttpError<reqwest::Error>;

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
