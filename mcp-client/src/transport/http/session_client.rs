//! [`SessionClient`]: what a remote session's requests can go through — reqwest as it is, or
//! (feature `oauth`) [`SignedInClient`](super::oauth::SignedInClient), which carries our token
//! and signs in when the server asks — and the secrets a client holds that change while it
//! lives (a signed-in client's tokens), for the guard to cut out of what the server sends.

use rmcp::transport::streamable_http_client::StreamableHttpClient;

use super::secrets::LiveSecrets;

/// An HTTP client a session's requests go through.
pub(crate) trait SessionClient:
    StreamableHttpClient<Error = reqwest::Error> + Clone + Send + Sync + 'static
{
    /// The secrets that change while the client lives: none, unless it signs in.
    fn live_secrets(&self) -> Option<LiveSecrets> {
        None
    }
}

/// Requests as they are (with the entry's headers).
impl SessionClient for reqwest::Client {}

/// Requests with our OAuth token, signing in when the server asks.
#[cfg(feature = "oauth")]
impl SessionClient for super::oauth::SignedInClient {
    fn live_secrets(&self) -> Option<LiveSecrets> {
        Some(self.held_tokens())
    }
}
