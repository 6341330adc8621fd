//! What one session with a server is, however it was reached: [`Live`] (its handles, its
//! first tools), [`SessionInfo`], the bounded `tools/list`, and [`AttemptFailure`], what a
//! failed connection attempt reports. Connecting is `live`'s (stdio) and `remote`'s (HTTP).

use std::{
    sync::Arc,
    time::{Duration, Instant},
};

use rmcp::{
    model::{SubscriptionFilter, Tool},
    service::{Peer, RoleClient, RunningService, ServiceError},
};
use tokio::sync::Mutex;
use tracing::{info, warn};

use super::{
    config::ServerConfig,
    error::Failure,
    handler::HostHandler,
    subscriptions::{Listening, ResourceSubscriptions},
};
use crate::transport::ServerProcess;

/// How many requests of a session are unanswered and not yet cancelled: closing the session
/// waits (briefly) for this to reach zero, so the `notifications/cancelled` of a question
/// just cancelled go out before the server's stdin is closed.
#[derive(Debug, Default)]
pub(super) struct Outstanding {
    count: std::sync::atomic::AtomicUsize,
    settled: tokio::sync::Notify,
}

impl Outstanding {
    pub(super) fn add(&self) {
        self.count.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    }

    pub(super) fn done(&self) {
        if self.count.fetch_sub(1, std::sync::atomic::Ordering::SeqCst) == 1 {
            self.settled.notify_waiters();
        }
    }

    /// Waits until none is outstanding, or `limit` has passed.
    pub(super) async fn settle(&self, limit: Duration) {
        let deadline = tokio::time::Instant::now() + limit;
        loop {
            let settled = self.settled.notified();
            if self.count.load(std::sync::atomic::Ordering::SeqCst) == 0 {
                return;
            }
            if tokio::time::timeout_at(deadline, settled).await.is_err() {
                return;
            }
        }
    }
}

/// A live session with a server.
pub(super) struct Live {
    /// The server's name.
    pub(super) name: String,
    pub(super) peer: Peer<RoleClient>,
    pub(super) service: Mutex<Option<RunningService<RoleClient, HostHandler>>>,
    pub(super) handler: HostHandler,
    /// The server's process, when the host started it (stdio); `None` for a remote server.
    pub(super) process: Option<Arc<ServerProcess>>,
    /// The remote server's session (Streamable HTTP); `None` for a process.
    pub(super) remote: Option<Remote>,
    pub(super) info: SessionInfo,
    pub(super) tools: std::sync::RwLock<Vec<Tool>>,
    /// Requests unanswered and not yet cancelled.
    pub(super) outstanding: Arc<Outstanding>,
    /// On 2026-07-28, the `subscriptions/listen` that brings `tools/list_changed`; ended with
    /// the session.
    pub(super) _listening: Option<Listening>,
    /// The resources the session is subscribed to; held while one is added or removed (only
    /// subscription changes wait for it, never calls).
    pub(super) subscriptions: Mutex<ResourceSubscriptions>,
}

/// What a remote session keeps to explain its failures.
pub(super) struct Remote {
    /// The server's URL as shown (query values redacted).
    pub(super) url: String,
    /// The SSE events its transport cut at `maxLineBytes`.
    #[cfg(feature = "http")]
    pub(super) cut: crate::transport::http::CutEvents,
}

/// What the handshake told us.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionInfo {
    /// Protocol version agreed.
    pub protocol_version: String,
    /// The server's name and version.
    pub server: String,
    /// Time from spawn to an answered `initialize`.
    pub init_time: Duration,
    /// Process id.
    pub pid: Option<u32>,
    /// Whether the server announced the tools capability.
    pub has_tools: bool,
}

impl SessionInfo {
    /// Whether the session started with `initialize` (revisions up to 2025-11-25); from
    /// 2026-07-28 it started with `server/discover`, and every request stands alone.
    pub fn has_initialize(&self) -> bool {
        // rmcp's rule: dated revisions compare as text.
        self.protocol_version.as_str() < rmcp::model::ProtocolVersion::NO_INITIALIZE.as_str()
    }
}

/// Most pages of `tools/list` read; a server that keeps sending cursors is stopped there.
pub const MAX_TOOL_PAGES: usize = super::pages::MAX_PAGES;
/// Most tools kept from one server.
pub const MAX_TOOLS: usize = 4096;

/// Every page of the server's `tools/list`, up to [`MAX_TOOL_PAGES`] pages and [`MAX_TOOLS`]
/// tools (rmcp's `list_all_tools` follows cursors without end), stopping at a cursor seen
/// before.
pub(super) async fn list_tools_bounded(
    peer: &Peer<RoleClient>,
    server: &str,
) -> Result<Vec<Tool>, ServiceError> {
    let listing = super::pages::Listing {
        server,
        method: "tools/list",
        items: "tools",
        max: MAX_TOOLS,
    };
    listing
        .all(|params| async move {
            let page = peer.list_tools(params).await?;
            Ok((page.tools, page.next_cursor))
        })
        .await
}

/// One failed connection attempt: what is known, and whether another attempt could succeed
/// without anyone changing anything.
#[derive(Debug)]
pub(super) struct AttemptFailure {
    pub(super) failure: Failure,
    /// False when starting the server again would fail the same way: its program is missing
    /// or cannot be run, its `cwd` is missing, or it exited at once with 126 or 127 (how shells
    /// and exec wrappers say a program could not be run or found).
    pub(super) retryable: bool,
    /// The server refused our credentials, or signing in failed: no later try by time.
    pub(super) authorization: bool,
}

impl From<Failure> for AttemptFailure {
    fn from(failure: Failure) -> Self {
        Self {
            failure,
            retryable: true,
            authorization: false,
        }
    }
}

impl std::fmt::Display for AttemptFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.failure.fmt(f)
    }
}

/// From 2026-07-28 a server says its tools changed only to a client that listens
/// (`subscriptions/listen`, a request whose answer is a stream of notifications). Opened when
/// the server says it sends `tools/list_changed`, and acknowledged before the session counts
/// as connected (within `timeout`); what arrives is marked by the handler's tap, which sees
/// every notification in stream order.
async fn listen_for_tool_changes(
    peer: &Peer<RoleClient>,
    name: &str,
    timeout: Duration,
) -> Option<Listening> {
    let info = peer.peer_info()?;
    let changes_told = info
        .capabilities
        .tools
        .as_ref()
        .and_then(|tools| tools.list_changed)
        == Some(true);
    if info.protocol_version.has_initialize() || !changes_told {
        return None;
    }
    let filter = SubscriptionFilter::builder().tools_list_changed().build();
    let subscription = match tokio::time::timeout(timeout, peer.listen(filter)).await {
        Ok(Ok(subscription)) => subscription,
        failed => {
            let error = match failed {
                Ok(Err(err)) => err.to_string(),
                _ => format!("no acknowledgment within {timeout:?}"),
            };
            warn!(server = %name, %error, "subscriptions/listen failed: changes to the tools are seen only when they are listed again");
            return None;
        }
    };
    Some(Listening::drain(subscription, name, "tools/list_changed"))
}

/// The session `service` just initialized (`started` before it), with its first tools.
pub(super) async fn session(
    config: &ServerConfig,
    service: RunningService<RoleClient, HostHandler>,
    handler: HostHandler,
    started: Instant,
    pid: Option<u32>,
    process: Option<Arc<ServerProcess>>,
    remote: Option<Remote>,
) -> Live {
    let name = config.name().to_owned();
    let init_time = started.elapsed();
    let peer = service.peer().clone();
    let info = session_info(&peer, init_time, pid);
    let tools = first_tools(&peer, &name, config.call_timeout)
        .await
        .unwrap_or_else(|| {
            // Asked again when the tools are next wanted.
            handler.mark_tools_changed();
            Vec::new()
        });
    info!(server = %name, protocol = %info.protocol_version, tools = tools.len(), init = ?init_time, "MCP server connected");
    let listening = listen_for_tool_changes(&peer, &name, config.call_timeout).await;
    Live {
        name,
        peer,
        service: Mutex::new(Some(service)),
        handler,
        process,
        remote,
        info,
        tools: std::sync::RwLock::new(tools),
        outstanding: Arc::default(),
        _listening: listening,
        subscriptions: Mutex::default(),
    }
}

/// What the handshake told us, `init_time` after the spawn.
fn session_info(peer: &Peer<RoleClient>, init_time: Duration, pid: Option<u32>) -> SessionInfo {
    SessionInfo {
        protocol_version: peer
            .peer_info()
            .map(|i| i.protocol_version.to_string())
            .unwrap_or_default(),
        server: peer
            .peer_info()
            .and_then(|i| {
                i.server_info
                    .as_ref()
                    .map(|s| format!("{} {}", s.name, s.version))
            })
            .unwrap_or_default(),
        init_time,
        pid,
        has_tools: peer
            .peer_info()
            .is_some_and(|i| i.capabilities.tools.is_some()),
    }
}

/// The tools listed right after connecting; `None` (with a warning) when the list fails or
/// takes longer than `timeout`: the session is usable without them.
async fn first_tools(peer: &Peer<RoleClient>, name: &str, timeout: Duration) -> Option<Vec<Tool>> {
    match tokio::time::timeout(timeout, list_tools_bounded(peer, name)).await {
        Ok(Ok(tools)) => Some(tools),
        Ok(Err(err)) => {
            warn!(server = %name, error = %err, "tools/list failed; the server offers no tools until it is listed again");
            None
        }
        Err(_) => {
            warn!(server = %name, timeout = ?timeout, "tools/list timed out; the server offers no tools until it is listed again");
            None
        }
    }
}
