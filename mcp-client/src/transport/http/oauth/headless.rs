//! [`follow_redirects`]: the interactive step without a browser or a person, for
//! authorization servers that approve at once (the official conformance suite's, test
//! servers): the authorization address is fetched and its redirects followed, without ever
//! following one to the redirect address, whose `Location` holds the code and state.

use std::time::Duration;

use super::{AuthorizationPrompt, AuthorizationRedirect, AuthorizeError, Authorizer};

/// Redirects followed before the redirect address must have come.
const MAX_HOPS: usize = 10;
/// The longest one exchange with the authorization server may take.
const HOP_TIMEOUT: Duration = Duration::from_secs(30);

/// Fetches `prompt.url` and follows its redirects (at most 10, each within 30 s) until one
/// points at `prompt.redirect_uri`, and reads the code and state from that `Location`.
///
/// # Errors
/// The authorization server answered without a redirect (a login page: a person is needed),
/// redirected too often, sent an error back, or could not be reached.
pub async fn follow_redirects(
    prompt: AuthorizationPrompt,
) -> Result<AuthorizationRedirect, AuthorizeError> {
    let failed = |reason: String| AuthorizeError::Failed(reason);
    super::super::tls::ready();
    let client = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .timeout(HOP_TIMEOUT)
        .build()
        .map_err(|err| failed(format!("cannot set up the HTTP client: {err}")))?;
    let mut url = reqwest::Url::parse(&prompt.url)
        .map_err(|err| failed(format!("the authorization address is not a URL: {err}")))?;
    for _ in 0..MAX_HOPS {
        let response = client.get(url.clone()).send().await.map_err(|err| {
            failed(format!(
                "the authorization server could not be reached: {err}"
            ))
        })?;
        let status = response.status();
        let Some(location) = response
            .headers()
            .get(reqwest::header::LOCATION)
            .filter(|_| status.is_redirection())
        else {
            return Err(AuthorizeError::Unavailable(format!(
                "the authorization server answered HTTP {status} instead of sending the browser back: it wants a person to sign in, in a browser"
            )));
        };
        let location = location
            .to_str()
            .map_err(|_| failed("the authorization server's redirect is not text".into()))?;
        let next = url.join(location).map_err(|err| {
            failed(format!(
                "the authorization server's redirect is not a URL: {err}"
            ))
        })?;
        if is_redirect_uri(&next, &prompt.redirect_uri) {
            return AuthorizationRedirect::from_url(next.as_str());
        }
        url = next;
    }
    Err(failed(format!(
        "the authorization server redirected more than {MAX_HOPS} times without sending the browser back"
    )))
}

/// [`follow_redirects`] as an [`Authorizer`].
pub fn headless_authorizer() -> Authorizer {
    std::sync::Arc::new(|prompt| Box::pin(follow_redirects(prompt)))
}

/// Whether `url` is the redirect address (same scheme, host, port and path; any query).
fn is_redirect_uri(url: &reqwest::Url, redirect_uri: &str) -> bool {
    reqwest::Url::parse(redirect_uri).is_ok_and(|expected| {
        url.scheme() == expected.scheme()
            && url.host_str() == expected.host_str()
            && url.port_or_known_default() == expected.port_or_known_default()
            && url.path() == expected.path()
    })
}
