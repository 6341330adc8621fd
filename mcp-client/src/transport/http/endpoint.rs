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

    /// `url` as it is shown in errors, logs and reports: the value of each query parameter and
    /// a password in the address replaced by `[redacted]` (a `?token=` or `user:pass@` would
    /// otherwise reach the log, the terminal and a model's context). Read without a URL
    /// library, so that it is there without the `http` feature.
    pub fn shown_url(&self) -> String {
        redacted_url(&self.url)
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
            .field("url", &self.shown_url())
            .field("headers", &self.headers.keys().collect::<Vec<_>>())
            .field("max_message", &self.max_message)
            .field("oauth", &self.oauth)
            .finish()
    }
}

/// `url` with its query values and a password in its authority redacted.
fn redacted_url(url: &str) -> String {
    const REDACTED: &str = "[redacted]";
    let (rest, fragment) = match url.split_once('#') {
        Some((rest, fragment)) => (rest, Some(fragment)),
        None => (url, None),
    };
    let (address, query) = match rest.split_once('?') {
        Some((address, query)) => (address, Some(query)),
        None => (rest, None),
    };
    let mut shown = match address.split_once("://") {
        Some((scheme, after)) => {
            let end = after.find(['/', '\\']).unwrap_or(after.len());
            let (authority, path) = after.split_at(end);
            let authority = match authority.rsplit_once('@') {
                Some((user, host)) => match user.split_once(':') {
                    Some((name, _)) => format!("{name}:{REDACTED}@{host}"),
                    None => authority.to_owned(),
                },
                None => authority.to_owned(),
            };
            format!("{scheme}://{authority}{path}")
        }
        None => address.to_owned(),
    };
    if let Some(query) = query {
        let pairs: Vec<String> = query
            .split('&')
            .map(|pair| match pair.split_once('=') {
                Some((key, value)) if !value.is_empty() => format!("{key}={REDACTED}"),
                _ => pair.to_owned(),
            })
            .collect();
        shown.push('?');
        shown.push_str(&pairs.join("&"));
    }
    if let Some(fragment) = fragment {
        shown.push('#');
        shown.push_str(if fragment.is_empty() { "" } else { REDACTED });
    }
    shown
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

    #[test]
    fn a_shown_url_keeps_where_it_points_but_not_its_query_values_or_password() {
        let shown = |url: &str| HttpEndpoint::new("home", url).shown_url();
        assert_eq!(
            shown("https://home.example/mcp"),
            "https://home.example/mcp"
        );
        assert_eq!(
            shown("https://home.example/mcp?token=s3cret&debug&x="),
            "https://home.example/mcp?token=[redacted]&debug&x="
        );
        assert_eq!(
            shown("http://agent:pa55word@127.0.0.1:8080/mcp#frag"),
            "http://agent:[redacted]@127.0.0.1:8080/mcp#[redacted]"
        );
        assert_eq!(shown("http://agent@h/mcp"), "http://agent@h/mcp");
        let endpoint = HttpEndpoint::new("home", "https://h/mcp?key=s3cret");
        assert!(!format!("{endpoint:?}").contains("s3cret"));
    }
}
