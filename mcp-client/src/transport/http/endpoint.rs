//! [`HttpEndpoint`]: where a remote server is (its Streamable HTTP URL) and the headers every
//! request to it carries. Plain data, so that configurations parse without the `http` feature.

use std::collections::BTreeMap;

use super::{super::DEFAULT_MAX_LINE, oauth::OAuthSettings};

/// A remote MCP server reached over Streamable HTTP.
#[derive(Clone, PartialEq, Eq)]
pub struct HttpEndpoint {
    /// The server's name in logs and errors.
    pub name: String,
    /// Its MCP endpoint (`http://host:port/mcp`, `https://…`).
    pub url: String,
    /// Headers sent with every request (`Authorization: Bearer …`). Their values are secrets:
    /// `Debug` shows only the names, and the transport cuts them out of what the server sends
    /// back.
    pub headers: BTreeMap<String, String>,
    /// Largest message accepted: a JSON body or one SSE event.
    pub max_message: usize,
    /// How to sign in with OAuth (feature `oauth`). `None` still signs in when the server
    /// answers 401 pointing at its OAuth metadata, unless `headers` hold an `Authorization`.
    pub oauth: Option<OAuthSettings>,
}

impl HttpEndpoint {
    /// The server `name` at `url`, without headers.
    pub fn new(name: impl Into<String>, url: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            url: url.into(),
            headers: BTreeMap::new(),
            max_message: DEFAULT_MAX_LINE,
            oauth: None,
        }
    }

    /// Whether `headers` hold an `Authorization` of the entry's own (a static token): the
    /// client then never signs in with OAuth.
    pub fn has_static_authorization(&self) -> bool {
        self.headers
            .keys()
            .any(|name| name.eq_ignore_ascii_case("authorization"))
    }

    /// With the header `name: value` on every request.
    #[must_use]
    pub fn with_header(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.headers.insert(name.into(), value.into());
        self
    }
}

impl std::fmt::Debug for HttpEndpoint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HttpEndpoint")
            .field("name", &self.name)
            .field("url", &self.url)
            .field("headers", &self.headers.keys().collect::<Vec<_>>())
            .field("max_message", &self.max_message)
            .field("oauth", &self.oauth)
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn debug_shows_header_names_but_never_their_values() {
        let endpoint = HttpEndpoint::new("home", "http://127.0.0.1:8080/mcp")
            .with_header("Authorization", "Bearer s3cret");
        let shown = format!("{endpoint:?}");
        assert!(shown.contains("Authorization"), "{shown}");
        assert!(!shown.contains("s3cret"), "{shown}");
    }
}
