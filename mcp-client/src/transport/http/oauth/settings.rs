//! [`OAuthSettings`]: what an `mcpServers` entry says about signing in to a remote server
//! (its `"oauth"` object). Plain data, so that configurations parse without the `oauth`
//! feature; the secret is never shown by `Debug`.

/// How the client obtains its tokens.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum OAuthGrant {
    /// A person signs in in a browser (authorization code with PKCE): the host's
    /// [`Authorizer`](super::Authorizer) shows the address and brings back the redirect.
    #[default]
    AuthorizationCode,
    /// The client signs in as itself with `clientId` and `clientSecret`, nobody asked (for
    /// machines: the MCP client-credentials extension).
    ClientCredentials,
}

/// Signing in to one remote server with OAuth 2.1 (the MCP authorization spec).
///
/// Every field is optional: with none, the client finds the authorization server from the
/// server's 401 (`WWW-Authenticate: Bearer resource_metadata=…`) or its well-known document,
/// registers itself (a Client ID Metadata Document when given and supported, else dynamic
/// registration) and asks for the scopes the server names.
#[derive(Clone, PartialEq, Eq, Default)]
pub struct OAuthSettings {
    /// A client id registered with the authorization server beforehand; no registration then.
    pub client_id: Option<String>,
    /// Its secret (a confidential client): a secret, never shown by `Debug`.
    pub client_secret: Option<String>,
    /// Scopes to ask for instead of those the server names.
    pub scopes: Vec<String>,
    /// The loopback port the browser is sent back to (`http://127.0.0.1:PORT/callback`); any
    /// free port when not given. Some authorization servers only accept a registered port.
    pub redirect_port: Option<u16>,
    /// The HTTPS address of this client's Client ID Metadata Document, used as its client id
    /// where the authorization server supports them.
    pub client_metadata_url: Option<String>,
    /// How tokens are obtained.
    pub grant: OAuthGrant,
}

impl std::fmt::Debug for OAuthSettings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OAuthSettings")
            .field("client_id", &self.client_id)
            .field(
                "client_secret",
                &self.client_secret.as_ref().map(|_| "[redacted]"),
            )
            .field("scopes", &self.scopes)
            .field("redirect_port", &self.redirect_port)
            .field("client_metadata_url", &self.client_metadata_url)
            .field("grant", &self.grant)
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn debug_never_shows_the_client_secret() {
        let settings = OAuthSettings {
            client_id: Some("home-agent".into()),
            client_secret: Some("s3cret".into()),
            ..OAuthSettings::default()
        };
        let shown = format!("{settings:?}");
        assert!(shown.contains("home-agent"), "{shown}");
        assert!(!shown.contains("s3cret"), "{shown}");
    }
}
