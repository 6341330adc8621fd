//! The interactive step of signing in, which only the host can do: [`Authorizer`], the
//! host's callback, gets an [`AuthorizationPrompt`] (the address a person opens) and brings
//! back the [`AuthorizationRedirect`] (code and state), or says why not ([`AuthorizeError`]).

use std::{path::PathBuf, pin::Pin, sync::Arc, time::Duration};

/// What the host is asked to do: have a person open `url` and bring back where the
/// authorization server then sent the browser (`redirect_uri` with `code` and `state`).
pub struct AuthorizationPrompt {
    /// The server the person signs in to (its name in the configuration).
    pub server: String,
    /// The authorization address to open in a browser.
    pub url: String,
    /// Where the authorization server sends the browser back: a loopback address.
    pub redirect_uri: String,
    /// A socket bound to `redirect_uri`'s port, for a host that receives the redirect itself
    /// ([`receive_redirect`](super::receive_redirect)); dropping it frees the port.
    pub listener: Option<std::net::TcpListener>,
}

impl std::fmt::Debug for AuthorizationPrompt {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AuthorizationPrompt")
            .field("server", &self.server)
            .field("url", &self.url)
            .field("redirect_uri", &self.redirect_uri)
            .finish_non_exhaustive()
    }
}

/// What the authorization server put on the redirect: the code to exchange for tokens, the
/// state it was given and, when it says so (RFC 9207), its issuer.
#[derive(Clone, PartialEq, Eq)]
pub struct AuthorizationRedirect {
    /// The authorization code: single use, never shown by `Debug`.
    pub code: String,
    /// The `state` of the authorization address, echoed.
    pub state: String,
    /// The `iss` parameter, when the authorization server sent one.
    pub issuer: Option<String>,
}

impl std::fmt::Debug for AuthorizationRedirect {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AuthorizationRedirect")
            .field("code", &"[redacted]")
            .field("state", &self.state)
            .field("issuer", &self.issuer)
            .finish()
    }
}

impl AuthorizationRedirect {
    /// The code, state and issuer of the redirect address `url` (absolute, or a path with its
    /// query as an HTTP request line has it).
    ///
    /// # Errors
    /// [`AuthorizeError::Refused`] when the authorization server sent `error` instead (the
    /// person said no, or the request was wrong); [`AuthorizeError::Failed`] when the address
    /// has no code or no state.
    pub fn from_url(url: &str) -> Result<Self, AuthorizeError> {
        let parsed = reqwest::Url::parse(url)
            .or_else(|_| reqwest::Url::parse(&format!("http://127.0.0.1{url}")))
            .map_err(|err| {
                AuthorizeError::Failed(format!("the redirect is not an address: {err}"))
            })?;
        let query = |name: &str| {
            parsed
                .query_pairs()
                .find(|(key, _)| key == name)
                .map(|(_, value)| value.into_owned())
        };
        if let Some(error) = query("error") {
            return Err(AuthorizeError::Refused {
                error: common::printable(&common::clip(&error, 100)).into_owned(),
                description: query("error_description")
                    .map(|text| common::printable(&common::clip(&text, 300)).into_owned()),
            });
        }
        match (query("code"), query("state")) {
            (Some(code), Some(state)) => Ok(Self {
                code,
                state,
                issuer: query("iss"),
            }),
            _ => Err(AuthorizeError::Failed(
                "the redirect carries no `code` and `state`".into(),
            )),
        }
    }
}

/// Why the interactive step brought back no code.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum AuthorizeError {
    /// The authorization server sent an error back (`access_denied`: the person said no).
    #[error("the authorization server answered `{error}`{}", description.as_deref().map(|d| format!(": {d}")).unwrap_or_default())]
    Refused {
        /// Its `error` code.
        error: String,
        /// Its `error_description`, if any.
        description: Option<String>,
    },
    /// Nobody came back from the browser in time.
    #[error("no browser came back to the redirect address within {0:?}")]
    TimedOut(Duration),
    /// Nobody can be asked here (no terminal, a host without a person).
    #[error("{0}")]
    Unavailable(String),
    /// Anything else, said for the person.
    #[error("{0}")]
    Failed(String),
}

/// Signs a person in: given the prompt, brings back the redirect (a browser and a loopback
/// listener for a person at a terminal; [`follow_redirects`](super::follow_redirects) for an
/// authorization server that approves at once, as test servers do).
pub type Authorizer = Arc<
    dyn Fn(
            AuthorizationPrompt,
        )
            -> Pin<Box<dyn Future<Output = Result<AuthorizationRedirect, AuthorizeError>> + Send>>
        + Send
        + Sync,
>;

/// How a host signs in to remote servers that ask for OAuth: who does the interactive step,
/// and where tokens are kept between runs.
#[derive(Clone, Default)]
pub struct OAuthOptions {
    /// Who signs a person in; without one, only `client_credentials` entries can sign in.
    pub authorizer: Option<Authorizer>,
    /// The folder of token files (one per server, 0600 in a 0700 folder; see
    /// [`default_token_dir`](super::default_token_dir)); without one, tokens live as long as
    /// the connection.
    pub token_dir: Option<PathBuf>,
}

impl std::fmt::Debug for OAuthOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OAuthOptions")
            .field("authorizer", &self.authorizer.is_some())
            .field("token_dir", &self.token_dir)
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_redirect_gives_code_state_and_issuer_and_debug_hides_the_code() {
        let redirect = AuthorizationRedirect::from_url(
            "http://127.0.0.1:4567/callback?code=c0de-s3cret&state=xyz&iss=https%3A%2F%2Fas.example",
        )
        .unwrap();
        assert_eq!(redirect.code, "c0de-s3cret");
        assert_eq!(redirect.state, "xyz");
        assert_eq!(redirect.issuer.as_deref(), Some("https://as.example"));
        assert!(!format!("{redirect:?}").contains("c0de-s3cret"));
        let from_path = AuthorizationRedirect::from_url("/callback?state=s&code=c").unwrap();
        assert_eq!(
            (from_path.code.as_str(), from_path.state.as_str()),
            ("c", "s")
        );
    }

    #[test]
    fn a_refusal_on_the_redirect_is_said_with_the_servers_words() {
        let error = AuthorizationRedirect::from_url(
            "/callback?error=access_denied&error_description=the+person+said+no&state=s",
        )
        .unwrap_err();
        assert_eq!(
            error.to_string(),
            "the authorization server answered `access_denied`: the person said no"
        );
        assert!(matches!(
            AuthorizationRedirect::from_url("/callback?state=s"),
            Err(AuthorizeError::Failed(_))
        ));
    }
}
