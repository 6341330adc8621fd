//! MCP Streamable HTTP, for hosts on other machines: rmcp's [`StreamableHttpService`] (both
//! lifecycles: 2025-11-25's sessions with `Mcp-Session-Id`, SSE and DELETE; 2026-07-28's
//! stateless requests) on hyper's HTTP/1.1 connections, behind our checks.
//!
//! What stands between a socket and a tool, in order:
//!
//! | where | what | refused with |
//! |---|---|---|
//! | here | at most [`MAX_CONNECTIONS`] connections; headers within [`HEADER_TIMEOUT`] | the connection waits / is closed |
//! | `gate` | heads read two ways; the path `/mcp`; the bearer token (constant time); the body (`body`: its size, deadline and the bytes all bodies hold at once) and its shape; the cap on sessions (an `initialize` outside a session); a session named by someone other than its opener | 400, 404, 401, 413, 408, 503 |
//! | rmcp | `Host` and `Origin` against the allowed lists; MCP's HTTP rules (`MCP-Protocol-Version`, sessions) | 403, 400, 404 |
//! | `sessions` | each session's requests in flight ([`Bounded`](super::bounded), as on stdio); idle sessions expire | a JSON-RPC error |
//!
//! | module | owns |
//! |---|---|
//! | `settings` | [`HttpSettings`] (the owner's key, [`Token`], is `auth`'s) |
//! | `gate` | the checks before rmcp, as a hyper service; the authorization server's paths handed to it |
//! | `bearer` | who sent a request (the owner's key, a granted client's token); 401 and 403 `insufficient_scope` |
//! | `body` | request bodies read whole: each bounded, all of them bounded together |
//! | `framing` | a connection's bytes followed head to head, to flag `Transfer-Encoding` beside `Content-Length` before hyper drops the length |
//! | `reply` | a refusal: its status and a JSON-RPC error saying why |
//! | `refusals` | how often refused requests are logged: once per 10 s at most for each kind |
//! | `sessions` | rmcp's session manager, capped, with bounded transports |
//! | `holders` | who opened each session (the owner's key, or a client by its id); a client's answers ended within a second of its grant's revocation |

mod bearer;
mod body;
mod framing;
mod gate;
mod holders;
mod refusals;
mod reply;
mod sessions;
mod settings;

use std::{io, sync::Arc, time::Duration};

use hyper_util::rt::{TokioIo, TokioTimer};
use rmcp::{
    ServerHandler,
    transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService},
};
use tokio::{net::TcpListener, sync::Semaphore};
use tokio_util::sync::CancellationToken;
use tracing::{debug, info, warn};

pub use crate::auth::{MIN_TOKEN_CHARS, Token};
pub use body::MAX_BODY_BYTES;
pub use gate::MCP_PATH;
pub use settings::HttpSettings;

use gate::Gate;
use sessions::Sessions;

/// Connections open at once; one more waits in the kernel's backlog until one closes.
pub const MAX_CONNECTIONS: usize = 512;

/// How long a client has to send a request's headers (and, on a kept-alive connection, the
/// next request's): one that trickles them is dropped.
pub const HEADER_TIMEOUT: Duration = Duration::from_secs(10);

/// Serves over Streamable HTTP as `settings` say, until `stop` is cancelled; `new_session`
/// makes the server of each session (its subscriptions are its own). Sign-ins, grants and
/// revocations go to `audit`.
///
/// # Errors
/// The address cannot be bound.
pub async fn serve<S, F>(
    settings: HttpSettings,
    new_session: F,
    stop: CancellationToken,
    audit: Option<Arc<crate::audit::AuditTrail>>,
) -> io::Result<()>
where
    S: ServerHandler + Send + Sync + 'static,
    F: Fn() -> S + Send + Sync + 'static,
{
    let listener = TcpListener::bind(settings.addr).await?;
    let addr = listener.local_addr()?;
    if settings.token.is_none() {
        warn!(
            "serving HTTP without a token: any process on this machine can use the server, so sensitive actions are refused (set --http-token-file to allow them)"
        );
    }
    info!(url = %format!("http://{addr}{MCP_PATH}"), hosts = ?settings.allowed_hosts(), "serving MCP over Streamable HTTP");
    let sessions = Arc::new(Sessions::new(&settings));
    let config = StreamableHttpServerConfig::default()
        .with_allowed_hosts(settings.allowed_hosts())
        .with_allowed_origins(settings.allowed_origins())
        .enforce_origin_validation()
        .with_max_request_body_bytes(MAX_BODY_BYTES)
        .with_cancellation_token(stop.child_token());
    let mcp = StreamableHttpService::new(move || Ok(new_session()), Arc::clone(&sessions), config);
    let auth = match (&settings.auth, &settings.token) {
        (Some(auth), Some(owner)) => Some(Arc::new(
            crate::auth::AuthServer::open(
                auth,
                MCP_PATH,
                owner.clone(),
                settings.allowed_hosts(),
                audit,
            )
            .map_err(io::Error::other)?,
        )),
        _ => None,
    };
    if let Some(auth) = &auth {
        info!(issuer = %auth.issuer(), resource = %auth.resource(), "this server is its own OAuth authorization server: the owner approves clients at /oauth/authorize");
        if !addr.ip().is_loopback() {
            warn!(%addr, "OAuth pages are served over plain HTTP on an address other machines reach: put a TLS proxy in front and make it the only way in, or the owner's key typed on the approval page and every token cross the network in clear");
        }
    }
    let gate = Gate::new(mcp, sessions, settings.token, auth);
    let connections = Arc::new(Semaphore::new(MAX_CONNECTIONS));
    loop {
        let place = tokio::select! {
            place = Arc::clone(&connections).acquire_owned() => place,
            () = stop.cancelled() => return Ok(()),
        };
        let Ok(place) = place else { return Ok(()) };
        let accepted = tokio::select! {
            accepted = listener.accept() => accepted,
            () = stop.cancelled() => return Ok(()),
        };
        let (stream, peer) = match accepted {
            Ok((stream, peer)) => {
                // An answer goes out in several writes (headers, then SSE chunks): with
                // Nagle's algorithm each after the first waits for the client's delayed ACK,
                // 40 ms a call (measured: p50 44 ms, 0.1 ms without).
                if let Err(error) = stream.set_nodelay(true) {
                    debug!(%error, "could not turn Nagle's algorithm off");
                }
                (stream, peer)
            }
            Err(error) => {
                // Out of file descriptors, or a connection reset before it was accepted: the
                // listener itself is fine.
                warn!(%error, "could not accept a connection");
                tokio::time::sleep(Duration::from_millis(50)).await;
                continue;
            }
        };
        let stream = framing::Watched::new(stream);
        let gate = gate.for_connection(Arc::clone(&stream.flagged), Some(peer.ip().to_string()));
        let stop = stop.clone();
        tokio::spawn(async move {
            let _place = place;
            let connection = hyper::server::conn::http1::Builder::new()
                .timer(TokioTimer::new())
                .header_read_timeout(HEADER_TIMEOUT)
                .serve_connection(TokioIo::new(stream), gate);
            tokio::select! {
                ended = connection => {
                    if let Err(error) = ended {
                        debug!(%error, "HTTP connection ended with an error");
                    }
                }
                () = stop.cancelled() => {}
            }
        });
    }
}
