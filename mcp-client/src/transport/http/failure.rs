//! [`HttpProblem`]: what rmcp's Streamable HTTP client reported, said so that the user knows
//! what to check: a refused connection, a TLS failure, a token refused (401), a client
//! forbidden (403), a wrong path (404), an answer that is not MCP or over `maxLineBytes`, a
//! redirect not followed, a session the server forgot.

use std::error::Error;

use rmcp::transport::streamable_http_client::StreamableHttpError;

use super::{
    client::{HttpError, MAX_REDIRECTS, RedirectRefused},
    guarded::CutEvents,
};

/// What went wrong talking to a remote server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HttpProblem {
    /// What failed.
    pub reason: String,
    /// What to check.
    pub hint: Option<String>,
    /// Whether trying again could succeed without anyone changing anything.
    pub retryable: bool,
    /// The server answered 404 to a request of our session: it no longer knows the session
    /// (it restarted, or ended it), so it did not run the request.
    pub session_expired: bool,
    /// The server refused our credentials (401, 403), or signing in failed: trying again
    /// later needs someone to change something (a token, a sign-in, a right), never just time.
    pub authorization: bool,
}

impl HttpProblem {
    fn new(reason: String, hint: Option<String>, retryable: bool) -> Self {
        Self {
            reason,
            hint,
            retryable,
            session_expired: false,
            authorization: false,
        }
    }

    fn authorization(mut self) -> Self {
        self.authorization = true;
        self.retryable = false;
        self
    }
}

/// What `error` (or an error it was caused by) says about the server at `url`; `None` when
/// it holds nothing from the HTTP client.
pub fn explain(error: &(dyn Error + 'static), url: &str) -> Option<HttpProblem> {
    chain(error)
        .find_map(|error| error.downcast_ref::<HttpError>())
        .map(|error| classify(error, url))
}

/// `error` and its causes, looking inside `io::Error`s too (their `source` skips the error
/// they wrap, which is where rustls puts its own).
fn chain<'a>(error: &'a (dyn Error + 'static)) -> impl Iterator<Item = &'a (dyn Error + 'static)> {
    std::iter::successors(Some(error), |&error: &&'a (dyn Error + 'static)| {
        error
            .downcast_ref::<std::io::Error>()
            .and_then(|io| io.get_ref())
            .map(|inner| inner as &(dyn Error + 'static))
            .or_else(|| error.source())
    })
}

/// The host and port of `url`, for messages.
fn authority(url: &str) -> String {
    reqwest::Url::parse(url).map_or_else(
        |_| url.to_owned(),
        |parsed| match (parsed.host_str(), parsed.port_or_known_default()) {
            (Some(host), Some(port)) => format!("{host}:{port}"),
            (Some(host), None) => host.to_owned(),
            _ => url.to_owned(),
        },
    )
}

fn classify(error: &HttpError, url: &str) -> HttpProblem {
    match error {
        StreamableHttpError::Client(error) => client(error, url),
        StreamableHttpError::AuthRequired(_) => unauthorized(),
        StreamableHttpError::InsufficientScope(_) => forbidden(None),
        #[cfg(feature = "oauth")]
        StreamableHttpError::Auth(error) => sign_in_failed(error),
        StreamableHttpError::UnexpectedServerResponse(text) => {
            // rmcp (=3.11.0) says a refusal without a JSON-RPC error as "HTTP {status}: {body}".
            let (status, body) = status_of(text);
            match status {
                Some(401) => unauthorized(),
                Some(403) => forbidden(body),
                Some(404) => HttpProblem::new(
                    format!("nothing is served at {url} (HTTP 404)"),
                    Some("wrong URL path? check `url` against the path the server serves MCP at (often /mcp)".into()),
                    false,
                ),
                _ => HttpProblem::new(
                    format!("unexpected answer: {}", printable(text)),
                    Some(format!("is {url} the server's MCP Streamable HTTP endpoint?")),
                    true,
                ),
            }
        }
        StreamableHttpError::UnexpectedContentType(content_type) => HttpProblem::new(
            format!(
                "the answer is {}, not MCP (application/json or text/event-stream)",
                content_type.as_deref().map_or_else(|| "without a content type".to_owned(), |ct| format!("`{}`", printable(ct)))
            ),
            Some(format!("is {url} the server's MCP Streamable HTTP endpoint? a web page or another API answers like this")),
            false,
        ),
        StreamableHttpError::HttpStatus(status) => HttpProblem::new(
            format!("the server answered HTTP {}", status.status),
            Some("the server (or a proxy in front of it) is failing or overloaded: its log says why".into()),
            true,
        ),
        StreamableHttpError::SessionExpired => HttpProblem {
            reason: "the server no longer knows this session (HTTP 404): it restarted, or ended the session".into(),
            hint: None,
            retryable: true,
            session_expired: true,
            authorization: false,
        },
        StreamableHttpError::ResponseBodyTooLarge { max_size } => too_large("an answer", *max_size),
        other => HttpProblem::new(other.to_string(), None, true),
    }
}

/// What the session's transport cut since it was last asked: an SSE event over `maxLineBytes`
/// (rmcp then ends the answer's stream, and the request fails without saying why).
pub(crate) fn cut_event(cut: &CutEvents) -> Option<HttpProblem> {
    cut.take()
        .map(|max_size| too_large("an SSE event", max_size))
}

/// The server sent `what` over `maxLineBytes` (`max_size`), so the client stopped reading.
fn too_large(what: &str, max_size: usize) -> HttpProblem {
    HttpProblem::new(
        format!(
            "the server sent {what} over `maxLineBytes` ({max_size} bytes): the client stopped reading it"
        ),
        Some(
            "raise `maxLineBytes` in the entry if the server's messages are really this large"
                .into(),
        ),
        false,
    )
}

/// A failure of the HTTP client itself: no connection, no TLS, no answer, a redirect refused.
fn client(error: &reqwest::Error, url: &str) -> HttpProblem {
    let at = authority(url);
    let causes: Vec<&(dyn Error + 'static)> = chain(error).collect();
    if let Some(refused) = causes
        .iter()
        .find_map(|cause| cause.downcast_ref::<RedirectRefused>())
    {
        return redirect_refused(refused, &at);
    }
    if causes.iter().any(|cause| {
        cause
            .downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::ConnectionRefused)
    }) {
        return HttpProblem::new(
            format!("connection refused by {at}"),
            Some("is the server running, and listening at that address and port?".into()),
            true,
        );
    }
    if let Some(tls) = causes
        .iter()
        .find_map(|cause| cause.downcast_ref::<rustls::Error>())
    {
        return HttpProblem::new(
            format!("the TLS handshake with {at} failed: {tls}"),
            Some("does the server speak https at that port (a plain-HTTP server needs an http:// URL)? is its certificate valid for that name and issued by a CA this machine trusts?".into()),
            false,
        );
    }
    let innermost = causes
        .last()
        .map_or_else(|| error.to_string(), ToString::to_string);
    if error.is_timeout() {
        return HttpProblem::new(
            format!("no connection to {at} in time: {innermost}"),
            Some("is the host reachable from here (address, firewall)?".into()),
            true,
        );
    }
    if error.is_connect() {
        return HttpProblem::new(
            format!("cannot connect to {at}: {innermost}"),
            Some("is the host name right, and the server reachable from here?".into()),
            true,
        );
    }
    HttpProblem::new(
        format!("the HTTP exchange with {at} failed: {innermost}"),
        None,
        true,
    )
}

fn redirect_refused(refused: &RedirectRefused, at: &str) -> HttpProblem {
    match refused {
        RedirectRefused::Loop => HttpProblem::new(
            format!("{at} redirected the request more than {MAX_REDIRECTS} times (a redirect loop?)"),
            Some("give in `url` the address the server serves MCP at itself (`curl -i` on `url` shows where it redirects)".into()),
            false,
        ),
        RedirectRefused::Elsewhere(origin) => HttpProblem::new(
            format!("{at} redirects to another server, {origin}: not followed, so that the entry's `headers` go only where `url` says"),
            Some(format!("if {origin} is where the MCP server is, write its address in `url`")),
            false,
        ),
    }
}

fn unauthorized() -> HttpProblem {
    HttpProblem::new(
        "the server refused our credentials (HTTP 401)".into(),
        Some("check the token in the entry's `headers` (\"Authorization\": \"Bearer ${TOKEN}\"): is the variable set, to this server's token?".into()),
        false,
    )
    .authorization()
}

/// Signing in with OAuth failed: what rmcp (or our sign-in) said, and what to check.
#[cfg(feature = "oauth")]
fn sign_in_failed(error: &rmcp::transport::auth::AuthError) -> HttpProblem {
    use rmcp::transport::auth::AuthError;
    let retryable = matches!(
        error,
        AuthError::TokenRefreshFailed(_)
            | AuthError::HttpError(_)
            | AuthError::DiscoveryRequestFailed { .. }
    );
    let hint = match error {
        AuthError::TokenRefreshFailed(_)
        | AuthError::HttpError(_)
        | AuthError::DiscoveryRequestFailed { .. } => {
            "is the authorization server reachable from here?"
        }
        AuthError::MetadataError(_) => {
            "the authorization server must be reached over https (plain http only on this machine): its operator can fix it; no code, token or secret was sent"
        }
        AuthError::ProtectedResourceMetadataInvalid { .. }
        | AuthError::AuthorizationServersUnavailable { .. }
        | AuthError::PkceUnsupported => {
            "the server's OAuth setup is not one this client may trust or use: its operator can fix it; nothing was sent to the authorization server beyond reading its metadata"
        }
        AuthError::AuthorizationFailed(reason)
            if reason.contains("`code_challenge_methods_supported`") =>
        {
            "the server's OAuth setup is not one this client may trust or use: its operator can fix it"
        }
        AuthError::AuthorizationServerMismatch { .. }
        | AuthError::AuthorizationServerMissingIssuer { .. } => {
            "the answer came from another authorization server than the one the server names (RFC 9207): the sign-in was stopped before any token was asked for; its operator can fix it"
        }
        _ => {
            "check the entry's `oauth` settings (clientId, clientSecret, scopes, redirectPort); signing in starts again when the host connects anew"
        }
    };
    let mut problem = HttpProblem::new(
        format!(
            "signing in with OAuth failed: {}",
            common::printable(&common::clip(error.to_string().trim(), 600))
        ),
        Some(hint.into()),
        retryable,
    );
    problem.authorization = !retryable;
    problem
}

fn forbidden(said: Option<&str>) -> HttpProblem {
    HttpProblem::new(
        match said {
            Some(said) if !said.trim().is_empty() => {
                format!("the server forbids this client (HTTP 403): {}", printable(said))
            }
            _ => "the server forbids this client (HTTP 403)".to_owned(),
        },
        Some("the token may lack the rights this needs, or the server may refuse the host name in `url`: its log says why".into()),
        false,
    )
    .authorization()
}

/// The status and body of rmcp's "HTTP 404 Not Found: body".
fn status_of(text: &str) -> (Option<u16>, Option<&str>) {
    let Some(rest) = text.strip_prefix("HTTP ") else {
        return (None, None);
    };
    let status = rest.get(..3).and_then(|code| code.parse().ok());
    (status, rest.split_once(": ").map(|(_, body)| body))
}

/// What a server said, on one line and short: it may be a whole HTML page.
fn printable(text: &str) -> String {
    common::printable(&common::clip(text.trim(), 200)).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rmcps_refusal_text_gives_its_status_and_body() {
        assert_eq!(
            status_of("HTTP 404 Not Found: Cannot POST /nope"),
            (Some(404), Some("Cannot POST /nope"))
        );
        assert_eq!(status_of("expect json"), (None, None));
    }

    #[test]
    fn a_401_names_the_token_and_a_404_the_path() {
        let url = "http://127.0.0.1:1/mcp";
        let unauthorized = classify(
            &StreamableHttpError::UnexpectedServerResponse("HTTP 401 Unauthorized: no".into()),
            url,
        );
        assert!(unauthorized.hint.unwrap().contains("token"));
        assert!(!unauthorized.retryable);
        let wrong_path = classify(
            &StreamableHttpError::UnexpectedServerResponse("HTTP 404 Not Found: <html>".into()),
            url,
        );
        assert_eq!(
            wrong_path.reason,
            "nothing is served at http://127.0.0.1:1/mcp (HTTP 404)"
        );
        assert!(wrong_path.hint.unwrap().starts_with("wrong URL path?"));
        let expired = classify(&StreamableHttpError::SessionExpired, url);
        assert!(expired.session_expired && expired.retryable);
    }
}
