//! What every HTTP request passes before rmcp's Streamable HTTP service sees it: the path, the
//! bearer token, the body, read whole within a size and a deadline, the cap on sessions, and
//! who holds a session (`holders.rs`: a session is its opener's, a client's answers end with
//! its grant).
//! rmcp then checks `Host` and `Origin` (DNS rebinding, cross-site pages) and serves MCP; its
//! 202 to a session's DELETE goes out as 204.

use std::{
    convert::Infallible,
    future::Future,
    pin::Pin,
    sync::{
        Arc,
        atomic::{AtomicBool, Ordering},
    },
};

use http_body_util::{BodyExt as _, Full};
use hyper::{
    Method, Request, StatusCode,
    body::Incoming,
    header::{CONTENT_LENGTH, HOST, HeaderValue, ORIGIN, RETRY_AFTER},
};
use rmcp::{
    ServerHandler,
    transport::streamable_http_server::{SessionManager as _, StreamableHttpService},
};
use serde_json::Value;
use tracing::{debug, warn};

use super::{
    Sessions, Token,
    bearer::Doorman,
    body::{self, BODIES_HELD_BYTES, BODY_TIMEOUT, Budget, MAX_BODY_BYTES, Unread},
    holders::{self, Holders, Opening},
    refusals::Refusals,
    reply::{HttpResponse, json_refusal, refusal},
};
use crate::{
    auth::{AuthServer, Principal},
    transport::refusal::Refusal,
};

/// The path MCP is served at.
pub const MCP_PATH: &str = "/mcp";

/// The checks before rmcp, and rmcp's service behind them.
pub struct Gate<S> {
    mcp: StreamableHttpService<S, Sessions>,
    sessions: Arc<Sessions>,
    /// Who opened each session.
    holders: Arc<Holders>,
    doorman: Doorman,
    /// The address of this connection's peer.
    peer: Option<String>,
    /// Requests refused for want of the token, and those refused a session: each logged at
    /// most once per [`LOG_EVERY`](super::refusals::LOG_EVERY).
    refused: Arc<(Refusals, Refusals)>,
    /// The room all request bodies share.
    bodies: Budget,
    /// Set when a request on this connection had both `Transfer-Encoding` and
    /// `Content-Length` (hyper drops the length before the gate sees the request).
    smuggled: Arc<AtomicBool>,
}

impl<S> Clone for Gate<S> {
    fn clone(&self) -> Self {
        Self {
            mcp: self.mcp.clone(),
            sessions: Arc::clone(&self.sessions),
            holders: Arc::clone(&self.holders),
            doorman: self.doorman.clone(),
            peer: self.peer.clone(),
            refused: Arc::clone(&self.refused),
            bodies: self.bodies.clone(),
            smuggled: Arc::clone(&self.smuggled),
        }
    }
}

impl<S: ServerHandler + Send + 'static> Gate<S> {
    /// `mcp` behind the checks; `token`, when set, is required of every request (or, with
    /// `auth`, a token it issued).
    pub fn new(
        mcp: StreamableHttpService<S, Sessions>,
        sessions: Arc<Sessions>,
        token: Option<Token>,
        auth: Option<Arc<AuthServer>>,
    ) -> Self {
        Self {
            mcp,
            sessions,
            holders: Arc::default(),
            doorman: Doorman {
                owner: token.map(Arc::new),
                auth,
                guesses: Arc::default(),
            },
            peer: None,
            refused: Arc::default(),
            bodies: Budget::default(),
            smuggled: Arc::default(),
        }
    }

    /// The gate of one connection from `peer`, told by `smuggled` when a request there had
    /// both `Transfer-Encoding` and `Content-Length`.
    pub fn for_connection(&self, smuggled: Arc<AtomicBool>, peer: Option<String>) -> Self {
        Self {
            smuggled,
            peer,
            ..self.clone()
        }
    }

    /// The body of a request with these `parts`, read whole within its bounds, or the refusal
    /// saying which bound it broke.
    async fn read_body(
        &self,
        parts: &hyper::http::request::Parts,
        body: Incoming,
    ) -> Result<body::Held, HttpResponse> {
        let declared = parts
            .headers
            .get(CONTENT_LENGTH)
            .and_then(|value| value.to_str().ok())
            .and_then(|value| value.parse::<u64>().ok());
        body::read(body, declared, &self.bodies)
            .await
            .map_err(|unread| unread_body(&unread))
    }

    /// The authorization server's answer to `request` (its metadata and pages), worked out
    /// on the blocking pool: it reads and writes the state directory, and may wait for
    /// another process holding it.
    async fn for_auth(&self, auth: &Arc<AuthServer>, request: Request<Incoming>) -> HttpResponse {
        let (parts, body) = request.into_parts();
        // Held until the answer is given: the body's room in the budget with it.
        let held = match self.read_body(&parts, body).await {
            Ok(held) => held,
            Err(refused) => return refused,
        };
        let (auth, bytes, peer) = (Arc::clone(auth), held.bytes.clone(), self.peer.clone());
        let answered =
            tokio::task::spawn_blocking(move || auth.answer(&parts, &bytes, peer.as_deref())).await;
        drop(held);
        match answered {
            Ok(answer) => answer.map(http_body_util::BodyExt::boxed),
            Err(_) => refusal(
                StatusCode::INTERNAL_SERVER_ERROR,
                "the authorization server failed to answer: its log says why",
            ),
        }
    }

    /// The answer to `request`.
    async fn answer(self, request: Request<Incoming>) -> HttpResponse {
        if self.smuggled.load(Ordering::Relaxed) {
            debug!("refused a request with both Transfer-Encoding and Content-Length");
            return refusal(
                StatusCode::BAD_REQUEST,
                "the request has both Transfer-Encoding and Content-Length, so its body can be read two ways (RFC 9112 §6.1): nothing was done",
            );
        }
        if let Some(refused) = ambiguous(&request) {
            return refused;
        }
        if let Some(auth) = &self.doorman.auth
            && AuthServer::serves(request.uri().path())
        {
            return self.for_auth(auth, request).await;
        }
        if request.uri().path() != MCP_PATH {
            return refusal(
                StatusCode::NOT_FOUND,
                &format!("nothing is served here: MCP is at {MCP_PATH}"),
            );
        }
        let principal = match self.doorman.principal(&request, self.peer.as_deref()) {
            Ok(principal) => principal,
            Err(refused) => {
                if let Some(refused) = self.refused.0.count() {
                    warn!(
                        refused,
                        "HTTP requests refused without this server's bearer token, since the last such line"
                    );
                }
                return *refused;
            }
        };
        let (mut parts, body) = request.into_parts();
        // Held until the answer is given: the body's room in the budget with it.
        let held = match self.read_body(&parts, body).await {
            Ok(held) => held,
            Err(refused) => return refused,
        };
        let body = held.bytes.clone();
        // The message's shape is checked before rmcp builds any tree of it, as on stdio.
        if parts.method == Method::POST
            && let Err(refused) = Refusal::check(&body)
        {
            debug!(%refused, "refused a request's body");
            return json_refusal(StatusCode::BAD_REQUEST, refused.reply());
        }
        if let Some(refused) = self.doorman.beyond_grant(&principal, &body) {
            return refused;
        }
        if let Some(refused) = self.holders.refuse(&parts, &principal) {
            return refused;
        }
        parts.extensions.insert(principal.clone());
        // Checked on the body, not the headers: an `initialize` opens a session whatever
        // revision its `MCP-Protocol-Version` names (rmcp routes every handshake to the
        // 2025-11-25 lifecycle), and no other message does. One that got past a check on the
        // header was failed by `Sessions::create_session` with a 500 and no `Retry-After`.
        // Held until the session is recorded (below): a client's place while it opens.
        let _opening = if opens_a_session(&parts, &body) {
            match self.no_room(&principal).await {
                Ok(opening) => opening,
                Err(refused) => return refused,
            }
        } else {
            None
        };
        let deleting = parts.method == Method::DELETE;
        if deleting && let Some(refused) = self.unknown_session(&parts).await {
            return refused;
        }
        let named = |name| {
            parts.headers.get(name).map(|value| {
                crate::network::text::echoed(&String::from_utf8_lossy(value.as_bytes()))
                    .into_owned()
            })
        };
        let (host, origin) = (named(HOST), named(ORIGIN));
        let session = parts
            .headers
            .get("mcp-session-id")
            .map(|id| String::from_utf8_lossy(id.as_bytes()).into_owned());
        let mut response = self
            .mcp
            .handle(Request::from_parts(parts, Full::new(body)))
            .await;
        if response.status() == StatusCode::FORBIDDEN {
            return forbidden(response, host.as_deref(), origin.as_deref()).await;
        }
        let ended = deleting && response.status() == StatusCode::ACCEPTED;
        if ended {
            // rmcp answers a session's DELETE with 202, but the session is closed by then:
            // RFC 9110 §9.3.5 says 204 for a deletion enacted, and the Python SDK logs
            // "Session termination failed: 202" for anything but 200 or 204.
            *response.status_mut() = StatusCode::NO_CONTENT;
        }
        let ended = session.as_deref().filter(|_| ended);
        self.holders
            .answered(&response, &principal, ended, &self.sessions)
            .await;
        match (&self.doorman.auth, principal) {
            (Some(auth), Principal::Client { grant, .. }) => {
                holders::ending_with_grant(response, Arc::clone(auth), grant)
            }
            _ => response,
        }
    }
}

impl<S: ServerHandler + Send + 'static> hyper::service::Service<Request<Incoming>> for Gate<S> {
    type Response = HttpResponse;
    type Error = Infallible;
    type Future = Pin<Box<dyn Future<Output = Result<HttpResponse, Infallible>> + Send>>;

    fn call(&self, request: Request<Incoming>) -> Self::Future {
        let gate = self.clone();
        Box::pin(async move { Ok(gate.answer(request).await) })
    }
}

impl<S> Gate<S> {
    /// A client's place for the session `principal` opens, or the 503 when there is no room
    /// for it: one client holds at most `MAX_SESSIONS_A_CLIENT`; with every place taken, the
    /// sessions of clients whose grant was revoked are closed first.
    async fn no_room(&self, principal: &Principal) -> Result<Option<Opening>, HttpResponse> {
        let opening = self
            .holders
            .place(principal, &self.sessions, self.doorman.auth.as_deref())
            .await?;
        if !self.sessions.full().await {
            return Ok(opening);
        }
        let count = self.sessions.count().await;
        if let Some(refused) = self.refused.1.count() {
            warn!(
                sessions = count,
                refused, "new MCP sessions refused since the last such line: the most are open"
            );
        }
        let mut refused = refusal(
            StatusCode::SERVICE_UNAVAILABLE,
            &format!(
                "{count} MCP sessions are open, the most this server keeps (--http-max-sessions): try again when one has ended or expired"
            ),
        );
        refused
            .headers_mut()
            .insert(RETRY_AFTER, HeaderValue::from_static("30"));
        Err(refused)
    }

    /// The 404 for a DELETE of a session that is not (or no longer) here, as MCP says: rmcp
    /// answers it as if the session had been ended.
    async fn unknown_session(&self, parts: &hyper::http::request::Parts) -> Option<HttpResponse> {
        let id = parts.headers.get("mcp-session-id")?;
        let id: rmcp::transport::streamable_http_server::SessionId =
            String::from_utf8_lossy(id.as_bytes()).into();
        if self.sessions.has_session(&id).await.unwrap_or(false) {
            return None;
        }
        Some(holders::no_session(&id, true))
    }
}

/// The 400 for a request whose head can be read two ways, if it can (RFC 9112): two `Host`
/// or two `Origin` headers (a check may read one and a proxy the other), an absolute-form
/// target naming another host than `Host` (the target's wins, RFC 9112 §3.2.2, and rmcp
/// checks only `Host`). `Transfer-Encoding` beside `Content-Length` is found below hyper,
/// which drops the length before this sees the request ([`framing`](super::framing)).
fn ambiguous<B>(request: &Request<B>) -> Option<HttpResponse> {
    let headers = request.headers();
    let count = |name| headers.get_all(name).iter().count();
    let why = if headers
        .get(HOST)
        .is_some_and(|host| host.as_bytes().contains(&b'@'))
    {
        "the request's Host header holds a user (`@`), which a Host never does (RFC 9110 §7.2)"
            .to_owned()
    } else if count(HOST) > 1 {
        format!(
            "the request has {} Host headers; HTTP/1.1 allows exactly one (RFC 9112 §3.2)",
            count(HOST)
        )
    } else if count(ORIGIN) > 1 {
        format!(
            "the request has {} Origin headers; a request comes from one origin (RFC 6454 §7)",
            count(ORIGIN)
        )
    } else if let Some(target) = request.uri().authority()
        && headers.get(HOST).is_none_or(|host| {
            !host
                .as_bytes()
                .eq_ignore_ascii_case(target.as_str().as_bytes())
        })
    {
        let host = headers.get(HOST).map_or_else(
            || "(none)".to_owned(),
            |host| String::from_utf8_lossy(host.as_bytes()).into_owned(),
        );
        format!(
            "the request's target names the host {} but its Host header says {}; they must be the same (RFC 9112 §3.2.2)",
            Value::from(&*crate::network::text::echoed(target.as_str())),
            Value::from(&*crate::network::text::echoed(&host))
        )
    } else {
        return None;
    };
    debug!(%why, "refused an ambiguous request");
    Some(refusal(
        StatusCode::BAD_REQUEST,
        &format!("{why}: nothing was done"),
    ))
}

/// Whether a request with these head and body opens a session: a POST, outside any session,
/// of an `initialize` request.
fn opens_a_session(parts: &hyper::http::request::Parts, body: &[u8]) -> bool {
    /// The one field looked at.
    #[derive(serde::Deserialize)]
    struct Message {
        method: Option<String>,
    }
    parts.method == Method::POST
        && !parts.headers.contains_key("mcp-session-id")
        && serde_json::from_slice::<Message>(body)
            .is_ok_and(|message| message.method.as_deref() == Some("initialize"))
}

/// rmcp's 403 for a `Host` or `Origin` not allowed, said again with the flag that allows it.
async fn forbidden(
    response: HttpResponse,
    host: Option<&str>,
    origin: Option<&str>,
) -> HttpResponse {
    let said = match response.into_body().collect().await {
        Ok(collected) => String::from_utf8_lossy(&collected.to_bytes()).into_owned(),
        Err(never) => match never {},
    };
    let why = if said.contains("Host") {
        let host = host.unwrap_or("(none)");
        let name = host.rsplit_once(':').map_or(host, |(name, _)| name);
        format!(
            "the Host header {host:?} is not a name this server answers to (a guard against DNS rebinding): if clients reach it by that name, start it with --http-allowed-host {name}"
        )
    } else if said.contains("Origin") {
        let origin = origin.unwrap_or("(none)");
        format!(
            "requests from the web page at {origin:?} are refused (a guard against cross-site requests): to allow that page, start the server with --http-allowed-origin {origin}"
        )
    } else {
        said
    };
    refusal(StatusCode::FORBIDDEN, &why)
}

fn too_large() -> HttpResponse {
    refusal(
        StatusCode::PAYLOAD_TOO_LARGE,
        &format!("a request's body may hold at most {MAX_BODY_BYTES} bytes: nothing was done"),
    )
}

/// The refusal of a body not read: larger than [`MAX_BODY_BYTES`] (413), broken off (400),
/// not all there within [`BODY_TIMEOUT`] (408), or no room for it now (503).
fn unread_body(unread: &Unread) -> HttpResponse {
    match unread {
        Unread::TooLarge => too_large(),
        Unread::Broken => refusal(
            StatusCode::BAD_REQUEST,
            "the request's body could not be read",
        ),
        Unread::Late => {
            debug!("a request's body did not arrive in time");
            refusal(
                StatusCode::REQUEST_TIMEOUT,
                &format!("the request's body did not arrive within {BODY_TIMEOUT:?}"),
            )
        }
        Unread::Busy => {
            let mut refused = refusal(
                StatusCode::SERVICE_UNAVAILABLE,
                &format!(
                    "the request bodies being read or handled hold all {} MiB this server keeps for them: try again in a moment",
                    BODIES_HELD_BYTES / (1024 * 1024)
                ),
            );
            refused
                .headers_mut()
                .insert(RETRY_AFTER, HeaderValue::from_static("1"));
            refused
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parts(method: &str, headers: &[(&str, &str)]) -> hyper::http::request::Parts {
        let mut request = Request::builder().method(method);
        for (name, value) in headers {
            request = request.header(*name, *value);
        }
        request.body(()).unwrap().into_parts().0
    }

    #[test]
    fn only_an_initialize_outside_a_session_opens_one_whatever_revision_it_names() {
        let initialize = br#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{}}"#;
        let call = br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{}}"#;
        assert!(opens_a_session(&parts("POST", &[]), initialize));
        for version in ["2026-07-28", "9999-01-01", "2025-11-25"] {
            let named = parts("POST", &[("mcp-protocol-version", version)]);
            assert!(opens_a_session(&named, initialize), "{version}");
        }
        let inside = parts("POST", &[("mcp-session-id", "abc")]);
        assert!(!opens_a_session(&inside, initialize));
        assert!(!opens_a_session(&parts("POST", &[]), call));
        assert!(!opens_a_session(&parts("GET", &[]), initialize));
        assert!(!opens_a_session(&parts("POST", &[]), b"not json"));
        assert!(!opens_a_session(&parts("POST", &[]), b"[]"));
    }

    /// What a refusal says: its status and its JSON-RPC error's message.
    async fn said(refused: HttpResponse) -> (StatusCode, String) {
        let status = refused.status();
        let body = refused.into_body().collect().await.unwrap().to_bytes();
        let body: serde_json::Value = serde_json::from_slice(&body).unwrap();
        (
            status,
            body["error"]["message"].as_str().unwrap().to_owned(),
        )
    }

    #[tokio::test]
    async fn a_head_that_can_be_read_two_ways_is_refused_with_400_saying_why() {
        let request = |target: &str, headers: &[(&str, &str)]| {
            let mut request = Request::builder().method("POST").uri(target);
            for (name, value) in headers {
                request = request.header(*name, *value);
            }
            request.body(()).unwrap()
        };
        let host = ("host", "127.0.0.1:8080");
        let cases = [
            (
                request("/mcp", &[host, ("host", "evil.example")]),
                "the request has 2 Host headers; HTTP/1.1 allows exactly one (RFC 9112 §3.2): nothing was done",
            ),
            (
                request(
                    "/mcp",
                    &[
                        host,
                        ("origin", "http://127.0.0.1:8080"),
                        ("origin", "https://evil.example"),
                    ],
                ),
                "the request has 2 Origin headers; a request comes from one origin (RFC 6454 §7): nothing was done",
            ),
            (
                request("http://evil.example/mcp", &[host]),
                "the request's target names the host \"evil.example\" but its Host header says \"127.0.0.1:8080\"; they must be the same (RFC 9112 §3.2.2): nothing was done",
            ),
            (
                request("http://127.0.0.1:8080/mcp", &[]),
                "the request's target names the host \"127.0.0.1:8080\" but its Host header says \"(none)\"; they must be the same (RFC 9112 §3.2.2): nothing was done",
            ),
        ];
        for (request, words) in cases {
            let refused = ambiguous(&request).expect(words);
            assert_eq!(
                said(refused).await,
                (StatusCode::BAD_REQUEST, words.to_owned())
            );
        }
        for fine in [
            request("/mcp", &[host, ("origin", "http://127.0.0.1:8080")]),
            request("http://127.0.0.1:8080/mcp", &[("host", "127.0.0.1:8080")]),
            request("http://LOCALHOST:1/mcp", &[("host", "localhost:1")]),
            request("/mcp", &[host, ("transfer-encoding", "chunked")]),
        ] {
            assert!(ambiguous(&fine).is_none(), "{fine:?}");
        }
        // Found by the third hostile review: a user before the host was let through.
        let user = request("/mcp", &[("host", "evil.example@127.0.0.1:8080")]);
        assert_eq!(
            said(ambiguous(&user).unwrap()).await,
            (
                StatusCode::BAD_REQUEST,
                "the request's Host header holds a user (`@`), which a Host never does (RFC 9110 §7.2): nothing was done".to_owned()
            )
        );
    }

    #[tokio::test]
    async fn a_body_not_read_is_refused_saying_why() {
        use super::super::body::Unread;
        let cases = [
            (
                Unread::TooLarge,
                StatusCode::PAYLOAD_TOO_LARGE,
                "a request's body may hold at most 1048576 bytes: nothing was done",
            ),
            (
                Unread::Broken,
                StatusCode::BAD_REQUEST,
                "the request's body could not be read",
            ),
            (
                Unread::Late,
                StatusCode::REQUEST_TIMEOUT,
                "the request's body did not arrive within 30s",
            ),
            (
                Unread::Busy,
                StatusCode::SERVICE_UNAVAILABLE,
                "the request bodies being read or handled hold all 32 MiB this server keeps for them: try again in a moment",
            ),
        ];
        for (unread, status, words) in cases {
            let refused = unread_body(&unread);
            let retry = refused.headers().get(RETRY_AFTER).cloned();
            assert_eq!(said(refused).await, (status, words.to_owned()));
            assert_eq!(retry.is_some(), status == StatusCode::SERVICE_UNAVAILABLE);
        }
    }
}
