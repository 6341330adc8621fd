//! Which transport an entry asks for (`type`, `command`, `url`), and a remote server's entry:
//! `url` and `headers` with `${VAR}` expanded, as Claude Code and VS Code write them.
//!
//! `"type": "sse"` is refused: it is the HTTP+SSE transport of protocol 2024-11-05, deprecated
//! since 2025-03-26 in favour of Streamable HTTP, which servers serve at an endpoint of its
//! own (often `/mcp` where the old one was `/sse`). One transport means one set of session,
//! resumption and error rules to get right; a user of an old server is told what to change.

use std::collections::BTreeMap;

use super::{error::KeyError, values::expand};
use crate::transport::{
    DEFAULT_MAX_LINE, HttpEndpoint,
    http::oauth::{OAuthGrant, OAuthSettings},
};

/// The transport an entry asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Transport {
    /// A program started with `command`.
    Stdio,
    /// A remote server at `url`.
    Http,
}

/// Headers the client sets itself (rmcp refuses them as custom headers).
const RESERVED_HEADERS: [&str; 4] = [
    "accept",
    "mcp-session-id",
    "mcp-protocol-version",
    "last-event-id",
];

/// The transport of an entry with `type` = `kind`, and a `command` and/or a `url`.
pub(super) fn transport(
    kind: Option<&str>,
    has_command: bool,
    has_url: bool,
) -> Result<Transport, KeyError> {
    let problem = |key: &str, problem: String| Err((key.to_owned(), problem));
    if has_command && has_url {
        return problem(
            "url",
            "is given with `command`: an entry is a program to start (`command`) or a remote server (`url`), not both".into(),
        );
    }
    match kind {
        None if has_url => Ok(Transport::Http),
        None => Ok(Transport::Stdio),
        Some("stdio") if has_url => problem(
            "type",
            "is \"stdio\", but the entry gives a `url`: write \"type\": \"http\" for a remote server".into(),
        ),
        Some("stdio") => Ok(Transport::Stdio),
        // Claude Code and VS Code write "http"; others "streamable-http" or "streamableHttp".
        Some("http" | "streamable-http" | "streamableHttp") if has_command => problem(
            "type",
            format!("is {kind:?} (a remote server), but the entry gives a `command`: give the server's `url` instead, or write \"type\": \"stdio\"", kind = kind.unwrap_or_default()),
        ),
        Some("http" | "streamable-http" | "streamableHttp") => Ok(Transport::Http),
        Some("sse") => problem(
            "type",
            "is \"sse\", the HTTP+SSE transport of MCP 2024-11-05, deprecated and not supported: point `url` at the server's Streamable HTTP endpoint (often /mcp rather than /sse) and write \"type\": \"http\"".into(),
        ),
        Some(other) => problem(
            "type",
            format!("is {other:?}: use \"stdio\" (a program started with `command`) or \"http\" (a remote server at `url`)"),
        ),
    }
}

/// The remote server `name` at `url` with `headers`, `${VAR}` expanded in both.
pub(super) fn endpoint(
    name: &str,
    url: &str,
    headers: BTreeMap<String, String>,
    max_message: Option<usize>,
    lookup: &dyn Fn(&str) -> Option<String>,
) -> Result<HttpEndpoint, KeyError> {
    let url = expand(url, lookup).map_err(|problem| ("url".to_owned(), problem))?;
    let scheme = url
        .split_once("://")
        .map(|(scheme, _)| scheme.to_ascii_lowercase());
    if !matches!(scheme.as_deref(), Some("http" | "https")) {
        return Err((
            "url".into(),
            "is not an http:// or https:// URL: give the server's Streamable HTTP endpoint, such as http://127.0.0.1:8080/mcp".into(),
        ));
    }
    if !cfg!(feature = "http") {
        return Err((
            "url".into(),
            "names a remote server, but this mcp-client was built without the `http` feature (Streamable HTTP): build it with `--features http`".into(),
        ));
    }
    let mut endpoint = HttpEndpoint::new(name, url);
    endpoint.max_message = max_message.unwrap_or(DEFAULT_MAX_LINE);
    for (header, value) in headers {
        let key = format!("headers.{header}");
        if header.is_empty() || !header.bytes().all(is_token_byte) {
            return Err((
                key,
                "is not a header name: use letters, digits and - (e.g. Authorization)".into(),
            ));
        }
        if RESERVED_HEADERS
            .iter()
            .any(|reserved| header.eq_ignore_ascii_case(reserved))
        {
            return Err((
                key,
                "is set by the client itself (MCP's session and stream headers): remove it".into(),
            ));
        }
        let value = expand(&value, lookup).map_err(|problem| (key.clone(), problem))?;
        // Never quoted: header values are where tokens live.
        if value.chars().any(|c| c.is_control() && c != '\t') {
            return Err((key, "holds a line break or another control character, which a header cannot: check the variable it comes from".into()));
        }
        endpoint.headers.insert(header, value);
    }
    Ok(endpoint)
}

/// An entry's `"oauth"` object as the file has it.
#[derive(Debug, serde::Deserialize)]
#[serde(
    rename_all = "camelCase",
    expecting = "an object of OAuth settings (clientId, clientSecret, scopes, redirectPort, clientMetadataUrl, grant)"
)]
pub(super) struct OAuthEntry {
    client_id: Option<String>,
    client_secret: Option<Secret>,
    scopes: Option<Scopes>,
    redirect_port: Option<u16>,
    client_metadata_url: Option<String>,
    grant: Option<String>,
}

/// A value that is a secret: `Debug` never shows it.
#[derive(serde::Deserialize)]
#[serde(transparent)]
struct Secret(String);

impl std::fmt::Debug for Secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("[redacted]")
    }
}

/// Scopes as a list, or as OAuth writes them: one string, space-separated.
#[derive(Debug, serde::Deserialize)]
#[serde(
    untagged,
    expecting = "a list of scopes, or one string of scopes separated by spaces"
)]
enum Scopes {
    List(Vec<String>),
    Spaced(String),
}

/// The OAuth settings of the remote server `endpoint`, `${VAR}` expanded in `clientId`,
/// `clientSecret` and `clientMetadataUrl`.
pub(super) fn oauth(
    entry: OAuthEntry,
    endpoint: &HttpEndpoint,
    lookup: &dyn Fn(&str) -> Option<String>,
) -> Result<OAuthSettings, KeyError> {
    let problem = |key: &str, problem: &str| Err((format!("oauth.{key}"), problem.to_owned()));
    if !cfg!(feature = "oauth") {
        return Err((
            "oauth".into(),
            "asks for OAuth, but this mcp-client was built without the `oauth` feature: build it with `--features oauth`, or give a token in `headers`".into(),
        ));
    }
    if endpoint.has_static_authorization() {
        return Err((
            "oauth".into(),
            "is given with an `Authorization` header: the client either signs in with OAuth or sends that header, so remove one of them".into(),
        ));
    }
    let expanded = |key: &str, value: Option<String>| {
        value
            .map(|value| {
                expand(&value, lookup).map_err(|problem| (format!("oauth.{key}"), problem))
            })
            .transpose()
    };
    let client_id = expanded("clientId", entry.client_id)?.filter(|id| !id.is_empty());
    let client_secret = expanded("clientSecret", entry.client_secret.map(|secret| secret.0))?
        .filter(|s| !s.is_empty());
    let client_metadata_url = expanded("clientMetadataUrl", entry.client_metadata_url)?;
    if client_secret.is_some() && client_id.is_none() {
        return problem(
            "clientSecret",
            "is given without `oauth.clientId`: a secret belongs to a client registered beforehand, so give its id too",
        );
    }
    if let Some(url) = &client_metadata_url {
        let usable = is_cimd_address(url);
        if !usable {
            return problem(
                "clientMetadataUrl",
                "is not an https:// address with a path (such as https://example.com/mcp-client.json): a Client ID Metadata Document is served over HTTPS at its own path",
            );
        }
    }
    let grant = match entry.grant.as_deref() {
        None | Some("authorization_code") => OAuthGrant::AuthorizationCode,
        Some("client_credentials") => {
            if client_id.is_none() || client_secret.is_none() {
                return problem(
                    "grant",
                    "is \"client_credentials\", which needs `oauth.clientId` and `oauth.clientSecret` (the client signs in as itself)",
                );
            }
            OAuthGrant::ClientCredentials
        }
        Some(_) => {
            return problem(
                "grant",
                "is not one this client speaks: use \"authorization_code\" (a person signs in in a browser) or \"client_credentials\" (the client signs in as itself with clientId and clientSecret)",
            );
        }
    };
    let scopes = match entry.scopes {
        None => Vec::new(),
        Some(Scopes::List(scopes)) => scopes,
        Some(Scopes::Spaced(scopes)) => scopes.split_whitespace().map(str::to_owned).collect(),
    };
    if let Some(n) = scopes
        .iter()
        .position(|scope| scope.is_empty() || scope.contains(char::is_whitespace))
    {
        return Err((
            format!("oauth.scopes.{n}"),
            "is not a scope: a scope is one word without spaces".into(),
        ));
    }
    Ok(OAuthSettings {
        client_id,
        client_secret,
        scopes,
        redirect_port: entry.redirect_port.filter(|port| *port != 0),
        client_metadata_url,
        grant,
    })
}

/// Whether `url` is `https://host/path` with a path other than `/` (a Client ID Metadata
/// Document's address), read without an URL library so that files parse without `http`.
fn is_cimd_address(url: &str) -> bool {
    let Some(rest) = url.strip_prefix("https://") else {
        return false;
    };
    match rest.split_once('/') {
        Some((host, path)) => !host.is_empty() && !path.is_empty(),
        None => false,
    }
}

/// A character of an HTTP token (RFC 9110, section 5.6.2), which header names are.
fn is_token_byte(byte: u8) -> bool {
    byte.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&byte)
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::super::{ConfigError, Endpoint, ServerConfig, parse};
    #[cfg(feature = "oauth")]
    use crate::transport::http::oauth::{OAuthGrant, OAuthSettings};

    fn parse_str(text: &str) -> Result<Vec<ServerConfig>, ConfigError> {
        let vars = |name: &str| match name {
            "ZWAVE_MCP_TOKEN" => Some("s3cret".to_owned()),
            "PORT" => Some("8123".to_owned()),
            _ => None,
        };
        parse(Path::new("servers.json"), text, &vars)
    }

    fn error(text: &str) -> String {
        parse_str(text).unwrap_err().to_string()
    }

    #[cfg(feature = "http")]
    #[test]
    fn a_url_is_a_remote_server_with_its_headers_expanded() {
        let servers = parse_str(
            r#"{"mcpServers": {
                "a": {"type": "http", "url": "http://127.0.0.1:${PORT}/mcp",
                      "headers": {"Authorization": "Bearer ${ZWAVE_MCP_TOKEN}", "X-Home": "${NONE:-main}"},
                      "timeouts": {"call": "5s"}, "toolPrefix": "home"},
                "b": {"url": "https://home.example/mcp"},
                "c": {"type": "streamable-http", "url": "http://h/mcp"},
                "d": {"type": "streamableHttp", "url": "http://h/mcp", "maxLineBytes": 1024}
            }}"#,
        )
        .unwrap();
        let Endpoint::Http(a) = &servers[0].endpoint else {
            panic!("{:?}", servers[0]);
        };
        assert_eq!(a.url, "http://127.0.0.1:8123/mcp");
        assert_eq!(a.headers["Authorization"], "Bearer s3cret");
        assert_eq!(a.headers["X-Home"], "main");
        assert_eq!(servers[0].call_timeout, std::time::Duration::from_secs(5));
        assert_eq!(servers[0].tool_prefix.as_deref(), Some("home"));
        assert!(servers[0].command().is_none());
        for server in &servers[1..] {
            assert!(matches!(server.endpoint, Endpoint::Http(_)), "{server:?}");
        }
        let Endpoint::Http(d) = &servers[3].endpoint else {
            panic!("{:?}", servers[3]);
        };
        assert_eq!(d.max_message, 1024);
        // The token never shows in the configuration's Debug.
        assert!(!format!("{servers:?}").contains("s3cret"));
    }

    #[cfg(feature = "http")]
    #[test]
    fn remote_entries_that_cannot_work_name_the_key_and_what_would() {
        let cases = [
            (
                r#"{"mcpServers": {"s": {"url": "http://h/mcp", "headers": {"Authorization": "Bearer ${TOKEN}"}}}}"#,
                "\"servers.json\": server `s`: `headers.Authorization` refers to ${TOKEN}, which is not set (set it, or write ${TOKEN:-default})",
            ),
            (
                r#"{"mcpServers": {"s": {"url": "http://${HOST}/mcp"}}}"#,
                "\"servers.json\": server `s`: `url` refers to ${HOST}, which is not set (set it, or write ${HOST:-default})",
            ),
            (
                r#"{"mcpServers": {"s": {"type": "sse", "url": "http://h/sse"}}}"#,
                "\"servers.json\": server `s`: `type` is \"sse\", the HTTP+SSE transport of MCP 2024-11-05, deprecated and not supported: point `url` at the server's Streamable HTTP endpoint (often /mcp rather than /sse) and write \"type\": \"http\"",
            ),
            (
                r#"{"mcpServers": {"s": {"command": "x", "url": "http://h/mcp"}}}"#,
                "\"servers.json\": server `s`: `url` is given with `command`: an entry is a program to start (`command`) or a remote server (`url`), not both",
            ),
            (
                r#"{"mcpServers": {"s": {"type": "http"}}}"#,
                "\"servers.json\": server `s`: `url` is not an http:// or https:// URL: give the server's Streamable HTTP endpoint, such as http://127.0.0.1:8080/mcp",
            ),
            (
                r#"{"mcpServers": {"s": {"url": "ws://h/mcp"}}}"#,
                "\"servers.json\": server `s`: `url` is not an http:// or https:// URL: give the server's Streamable HTTP endpoint, such as http://127.0.0.1:8080/mcp",
            ),
            (
                r#"{"mcpServers": {"s": {"type": "stdio", "url": "http://h/mcp"}}}"#,
                "\"servers.json\": server `s`: `type` is \"stdio\", but the entry gives a `url`: write \"type\": \"http\" for a remote server",
            ),
            (
                r#"{"mcpServers": {"s": {"type": "websocket", "url": "http://h/mcp"}}}"#,
                "\"servers.json\": server `s`: `type` is \"websocket\": use \"stdio\" (a program started with `command`) or \"http\" (a remote server at `url`)",
            ),
            (
                r#"{"mcpServers": {"s": {"url": "http://h/mcp", "args": ["--x"]}}}"#,
                "\"servers.json\": server `s`: `args` is for a program started with `command`; a remote server (`url`) takes `headers`",
            ),
            (
                r#"{"mcpServers": {"s": {"command": "x", "headers": {"A": "b"}}}}"#,
                "\"servers.json\": server `s`: `headers` is for a remote server (`url`); a program started with `command` takes `env`",
            ),
            (
                r#"{"mcpServers": {"s": {"url": "http://h/mcp", "headers": {"Mcp-Session-Id": "1"}}}}"#,
                "\"servers.json\": server `s`: `headers.Mcp-Session-Id` is set by the client itself (MCP's session and stream headers): remove it",
            ),
            (
                r#"{"mcpServers": {"s": {"url": "http://h/mcp", "headers": {"Bad Name": "1"}}}}"#,
                "\"servers.json\": server `s`: `headers.Bad Name` is not a header name: use letters, digits and - (e.g. Authorization)",
            ),
            (
                r#"{"mcpServers": {"s": {"url": "http://h/mcp", "headers": {"X-Token": "s3cret\nInjected: 1"}}}}"#,
                "\"servers.json\": server `s`: `headers.X-Token` holds a line break or another control character, which a header cannot: check the variable it comes from",
            ),
            (
                r#"{"mcpServers": {"s": {"url": "http://h/mcp", "headers": {"X-Token": 5}}}}"#,
                "\"servers.json\": server `s`: `headers.X-Token` is 5: invalid type: integer `5`, expected a string",
            ),
        ];
        for (text, expected) in cases {
            assert_eq!(error(text), expected);
        }
    }

    #[cfg(feature = "oauth")]
    #[test]
    fn an_oauth_object_gives_the_sign_in_settings_with_the_secret_expanded() {
        let servers = parse_str(
            r#"{"mcpServers": {
                "a": {"url": "https://home.example/mcp",
                      "oauth": {"clientId": "home-agent", "clientSecret": "${ZWAVE_MCP_TOKEN}",
                                "scopes": "read write", "redirectPort": 8765,
                                "clientMetadataUrl": "https://agent.example/client.json"}},
                "b": {"url": "https://home.example/mcp", "oauth": {}},
                "c": {"url": "https://home.example/mcp",
                      "oauth": {"clientId": "m", "clientSecret": "x", "grant": "client_credentials", "scopes": ["a"]}},
                "d": {"url": "https://home.example/mcp"}
            }}"#,
        )
        .unwrap();
        let oauth = |n: usize| match &servers[n].endpoint {
            Endpoint::Http(endpoint) => endpoint.oauth.clone(),
            Endpoint::Stdio(_) => panic!("{:?}", servers[n]),
        };
        let a = oauth(0).unwrap();
        assert_eq!(a.client_id.as_deref(), Some("home-agent"));
        assert_eq!(a.client_secret.as_deref(), Some("s3cret"));
        assert_eq!(a.scopes, ["read", "write"]);
        assert_eq!(a.redirect_port, Some(8765));
        assert_eq!(a.grant, OAuthGrant::AuthorizationCode);
        assert_eq!(oauth(1), Some(OAuthSettings::default()));
        assert_eq!(oauth(2).unwrap().grant, OAuthGrant::ClientCredentials);
        assert_eq!(oauth(3), None);
        assert!(!format!("{servers:?}").contains("s3cret"));
    }

    #[cfg(feature = "oauth")]
    #[test]
    fn oauth_settings_that_cannot_work_name_the_key_and_what_would() {
        let cases = [
            (
                r#"{"mcpServers": {"s": {"url": "http://h/mcp", "headers": {"Authorization": "Bearer x"}, "oauth": {}}}}"#,
                "\"servers.json\": server `s`: `oauth` is given with an `Authorization` header: the client either signs in with OAuth or sends that header, so remove one of them",
            ),
            (
                r#"{"mcpServers": {"s": {"command": "x", "oauth": {}}}}"#,
                "\"servers.json\": server `s`: `oauth` is for a remote server (`url`); a program started with `command` takes `env`",
            ),
            (
                r#"{"mcpServers": {"s": {"url": "http://h/mcp", "oauth": {"clientSecret": "x"}}}}"#,
                "\"servers.json\": server `s`: `oauth.clientSecret` is given without `oauth.clientId`: a secret belongs to a client registered beforehand, so give its id too",
            ),
            (
                r#"{"mcpServers": {"s": {"url": "http://h/mcp", "oauth": {"grant": "password"}}}}"#,
                "\"servers.json\": server `s`: `oauth.grant` is not one this client speaks: use \"authorization_code\" (a person signs in in a browser) or \"client_credentials\" (the client signs in as itself with clientId and clientSecret)",
            ),
            (
                r#"{"mcpServers": {"s": {"url": "http://h/mcp", "oauth": {"grant": "client_credentials", "clientId": "m"}}}}"#,
                "\"servers.json\": server `s`: `oauth.grant` is \"client_credentials\", which needs `oauth.clientId` and `oauth.clientSecret` (the client signs in as itself)",
            ),
            (
                r#"{"mcpServers": {"s": {"url": "http://h/mcp", "oauth": {"clientMetadataUrl": "http://agent.example/c.json"}}}}"#,
                "\"servers.json\": server `s`: `oauth.clientMetadataUrl` is not an https:// address with a path (such as https://example.com/mcp-client.json): a Client ID Metadata Document is served over HTTPS at its own path",
            ),
            (
                r#"{"mcpServers": {"s": {"url": "http://h/mcp", "oauth": {"clientId": "${NOPE}"}}}}"#,
                "\"servers.json\": server `s`: `oauth.clientId` refers to ${NOPE}, which is not set (set it, or write ${NOPE:-default})",
            ),
            (
                r#"{"mcpServers": {"s": {"url": "http://h/mcp", "oauth": {"redirectPort": 70000}}}}"#,
                "\"servers.json\": server `s`: `oauth.redirectPort` is 70000: invalid value: integer `70000`, expected u16",
            ),
            (
                r#"{"mcpServers": {"s": {"url": "http://h/mcp", "oauth": {"scopes": ["read", ""]}}}}"#,
                "\"servers.json\": server `s`: `oauth.scopes.1` is not a scope: a scope is one word without spaces",
            ),
        ];
        for (text, expected) in cases {
            assert_eq!(error(text), expected);
        }
    }

    #[cfg(not(feature = "http"))]
    #[test]
    fn without_the_http_feature_a_url_is_refused_by_name() {
        assert_eq!(
            error(r#"{"mcpServers": {"s": {"type": "http", "url": "http://h/mcp"}}}"#),
            "\"servers.json\": server `s`: `url` names a remote server, but this mcp-client was built without the `http` feature (Streamable HTTP): build it with `--features http`"
        );
    }
}
