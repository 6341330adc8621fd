//! Which redirects a provider's request follows: only those within the address's origin. The
//! API key and the conversation go to the address given, never to one a provider names.

/// Redirects a provider's request may follow: within its origin only.
const MAX_REDIRECTS: usize = 5;

/// Why a provider's redirect was not followed: it pointed at another origin, or plain http.
#[derive(Debug, thiserror::Error)]
#[error("a redirect to {to}")]
pub(super) struct OtherOrigin {
    /// Where the provider pointed, clipped.
    pub(super) to: String,
}

/// Follows a redirect only within the first URL's origin (scheme, host and port: https never
/// becomes http), [`MAX_REDIRECTS`] times at most. reqwest's default follows any redirect and
/// drops only `Authorization` and cookies on the way: `x-api-key`, `api-key` and custom
/// headers, and the whole conversation, went to the other server.
pub(super) fn same_origin_only() -> reqwest::redirect::Policy {
    reqwest::redirect::Policy::custom(|attempt| {
        let first = attempt.previous().first().map(reqwest::Url::origin);
        if first.is_some_and(|origin| origin != attempt.url().origin()) {
            let to = common::clip(attempt.url().as_str(), 300);
            attempt.error(OtherOrigin { to })
        } else if attempt.previous().len() > MAX_REDIRECTS {
            attempt.stop()
        } else {
            attempt.follow()
        }
    })
}
