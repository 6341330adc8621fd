//! One live session with a server: connecting once (spawn, `initialize`, `tools/list`; over
//! HTTP see `remote`), the session's handles, requests with their timeouts and rmcp's errors
//! turned into ours, and closing it. [`ServerConnection`](super::ServerConnection) decides
//! when to connect again.

use std::{
    sync::{Arc, atomic::AtomicU64},
    time::{Duration, Instant},
};

use rmcp::{
    ServiceExt as _,
    model::{
        CancelledNotification, CancelledNotificationParam, ClientNotification, RequestId, Tool,
    },
    service::{Peer, RoleClient, RunningService, ServiceError},
};
use tokio::sync::Mutex;
use tracing::{debug, info, warn};

use super::{
    config::{Endpoint, ServerConfig},
    error::{ClientError, Failure},
    handler::{Elicitor, HostHandler},
    remote,
};
use crate::transport::{self, Exit, ServerProcess, ServerProcesses, SpawnError};

/// How long to wait for a dying server's exit status before reporting without it.
pub(super) const EXIT_GRACE: Duration = Duration::from_millis(500);

/// How long closing a session waits for the cancellations of abandoned requests to go out.
const CANCEL_GRACE: Duration = Duration::from_millis(500);

/// Tells the server that the request `id` is no longer wanted.
pub(super) async fn send_cancelled(peer: &Peer<RoleClient>, id: RequestId) {
    let notification = CancelledNotification::new(CancelledNotificationParam::new(
        Some(id),
        Some("the client stopped waiting for the result".into()),
    ));
    if let Err(err) = peer
        .send_notification(ClientNotification::CancelledNotification(notification))
        .await
    {
        debug!(error = %err, "could not send notifications/cancelled");
    }
}

/// How many requests of a session are unanswered and not yet cancelled: closing the session
/// waits (briefly) for this to reach zero, so the `notifications/cancelled` of a question
/// just cancelled go out before the server's stdin is closed.
#[derive(Debug, Default)]
pub(super) struct Outstanding {
    count: std::sync::atomic::AtomicUsize,
    settled: tokio::sync::Notify,
}

impl Outstanding {
    fn add(&self) {
        self.count.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    }

    fn done(&self) {
        if self.count.fetch_sub(1, std::sync::atomic::Ordering::SeqCst) == 1 {
            self.settled.notify_waiters();
        }
    }

    /// Waits until none is outstanding, or `limit` has passed.
    async fn settle(&self, limit: Duration) {
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

/// A request the server has been sent and not yet answered. Dropped unanswered (the caller
/// stopped waiting), it sends `notifications/cancelled` for the request from a task of its own.
pub(super) struct Unanswered {
    pending: Option<(Peer<RoleClient>, RequestId)>,
    outstanding: Arc<Outstanding>,
}

impl Unanswered {
    pub(super) fn new(live: &Live, id: RequestId) -> Self {
        live.outstanding.add();
        Self {
            pending: Some((live.peer.clone(), id)),
            outstanding: Arc::clone(&live.outstanding),
        }
    }

    /// The answer came (or rmcp's own timeout cancelled the request): nothing to send.
    pub(super) fn answered(mut self) {
        self.pending = None;
    }
}

impl Drop for Unanswered {
    fn drop(&mut self) {
        let outstanding = Arc::clone(&self.outstanding);
        let Some((peer, id)) = self.pending.take() else {
            outstanding.done();
            return;
        };
        match tokio::runtime::Handle::try_current() {
            Ok(runtime) => {
                runtime.spawn(async move {
                    send_cancelled(&peer, id).await;
                    outstanding.done();
                });
            }
            Err(_) => {
                debug!(%id, "no runtime left to send notifications/cancelled");
                outstanding.done();
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
    /// The remote server's URL (Streamable HTTP); `None` for a process.
    pub(super) url: Option<String>,
    pub(super) info: SessionInfo,
    pub(super) tools: std::sync::RwLock<Vec<Tool>>,
    /// Requests unanswered and not yet cancelled.
    pub(super) outstanding: Arc<Outstanding>,
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

/// Most pages of `tools/list` read; a server that keeps sending cursors is stopped there.
pub const MAX_TOOL_PAGES: usize = 64;
/// Most tools kept from one server.
pub const MAX_TOOLS: usize = 4096;

/// Every page of the server's `tools/list`, up to [`MAX_TOOL_PAGES`] pages and [`MAX_TOOLS`]
/// tools (rmcp's `list_all_tools` follows cursors without end), stopping at a cursor seen
/// before.
pub(super) async fn list_tools_bounded(
    peer: &Peer<RoleClient>,
    server: &str,
) -> Result<Vec<Tool>, ServiceError> {
    let mut tools = Vec::new();
    let mut cursor = None;
    let mut seen = std::collections::HashSet::new();
    for _ in 0..MAX_TOOL_PAGES {
        let params = rmcp::model::PaginatedRequestParams::default().with_cursor(cursor);
        let page = peer.list_tools(Some(params)).await?;
        let room = MAX_TOOLS - tools.len();
        if page.tools.len() > room {
            warn!(
                server,
                max = MAX_TOOLS,
                "the server offers more tools than a host keeps; the rest are left out"
            );
            tools.extend(page.tools.into_iter().take(room));
            return Ok(tools);
        }
        tools.extend(page.tools);
        match page.next_cursor {
            None => return Ok(tools),
            Some(next) if !seen.insert(next.clone()) => {
                warn!(server, cursor = %next.escape_debug(), "tools/list sent a cursor it sent before; stopping there");
                return Ok(tools);
            }
            Some(next) => cursor = Some(next),
        }
    }
    warn!(
        server,
        pages = MAX_TOOL_PAGES,
        "tools/list has more pages than a host reads; the rest are left out"
    );
    Ok(tools)
}

/// Ends a session: closes it (bounded) and stops the server.
pub(super) async fn close(server: &str, live: &Live) {
    // Requests just abandoned (a cancelled question) send their notifications/cancelled
    // first; requests still awaited are not waited for long.
    live.outstanding.settle(CANCEL_GRACE).await;
    if let Some(service) = live.service.lock().await.take() {
        // rmcp's close waits for the transport, which waits for stdin: bounded, so a server
        // that stops reading cannot keep shutdown from reaching the signals.
        if tokio::time::timeout(transport::SHUTDOWN_GRACE, service.cancel())
            .await
            .is_err()
        {
            warn!(
                server,
                "the MCP session did not close in time; stopping the server"
            );
        }
    }
    match &live.process {
        Some(process) => {
            let exit = process.shutdown().await;
            info!(server, exit = ?exit, "MCP server stopped");
        }
        // rmcp's close sent DELETE for the session (bounded by its own 5 s).
        None => info!(server, "MCP session closed"),
    }
}

/// Runs one request with a timeout and turns rmcp's errors into ours.
pub(super) async fn request<T>(
    live: &Live,
    timeout: Duration,
    method: &str,
    call: impl Future<Output = Result<T, ServiceError>>,
) -> Result<T, ClientError> {
    match tokio::time::timeout(timeout, call).await {
        // Dropping rmcp's request future sends notifications/cancelled.
        Err(_) => Err(ClientError::Timeout {
            server: live.name.clone(),
            method: method.to_owned(),
            timeout,
        }),
        Ok(Ok(value)) => Ok(value),
        Ok(Err(err)) => Err(service_error(live, method, timeout, err).await),
    }
}

/// Turns an rmcp error into ours; a closed transport becomes the server's death, with its
/// exit status and stderr once known.
pub(super) async fn service_error(
    live: &Live,
    method: &str,
    timeout: Duration,
    err: ServiceError,
) -> ClientError {
    let server = live.name.clone();
    let Some(process) = &live.process else {
        return remote::service_error(live, method, timeout, err);
    };
    match err {
        ServiceError::Timeout { .. } => ClientError::Timeout {
            server,
            method: method.to_owned(),
            timeout,
        },
        ServiceError::McpError(error) => ClientError::Refused {
            server,
            method: method.to_owned(),
            message: error.message.to_string(),
        },
        other => {
            let exit = process.wait_exit(EXIT_GRACE).await;
            if exit.is_some() {
                process.stderr_drained(EXIT_GRACE).await;
            }
            let reason = match (&other, &exit) {
                (ServiceError::TransportClosed, Some(_)) => {
                    "the server exited before answering".to_owned()
                }
                (ServiceError::TransportClosed, None) => {
                    "the server closed its stdout before answering".to_owned()
                }
                _ => other.to_string(),
            };
            ClientError::ServerDied {
                method: method.to_owned(),
                failure: Failure {
                    server,
                    reason,
                    exit,
                    stderr: process.stderr().lines(),
                    hint: None,
                },
            }
        }
    }
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
}

impl From<Failure> for AttemptFailure {
    fn from(failure: Failure) -> Self {
        Self {
            failure,
            retryable: true,
        }
    }
}

impl std::fmt::Display for AttemptFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.failure.fmt(f)
    }
}

/// Whether `exit` is a shell's or an exec wrapper's "could not run it" (126) or "not found" (127).
fn could_not_run(exit: Option<&Exit>) -> bool {
    matches!(exit, Some(Exit::Status(status)) if matches!(status.code(), Some(126 | 127)))
}

/// One attempt: spawn (or reach the remote server), `initialize` (bounded by the init
/// timeout), `tools/list`.
pub(super) async fn connect_once(
    config: &ServerConfig,
    changes: &Arc<AtomicU64>,
    elicitor: Option<&Elicitor>,
    processes: &ServerProcesses,
) -> Result<Live, AttemptFailure> {
    let command = match &config.endpoint {
        Endpoint::Stdio(command) => command,
        Endpoint::Http(endpoint) => {
            return remote::connect_once(config, endpoint, changes, elicitor).await;
        }
    };
    let name = config.name().to_owned();
    let started = Instant::now();
    let (mut transport, process) =
        transport::spawn(command, processes).map_err(|err| not_spawned(&name, &err))?;
    let process = Arc::new(process);
    let handler = HostHandler::new(&name, Arc::clone(changes)).with_elicitor(elicitor.cloned());
    transport.set_notification_tap(handler.tap());
    let service = match tokio::time::timeout(config.init_timeout, handler.clone().serve(transport))
        .await
    {
        Ok(Ok(service)) => service,
        Ok(Err(err)) => return Err(not_initialized(&name, &err, &process).await),
        Err(_) => {
            let exit = process.shutdown().await;
            process.stderr_drained(EXIT_GRACE).await;
            return Err(Failure {
                server: name,
                reason: format!("no answer to initialize within {:?}", config.init_timeout),
                exit,
                stderr: process.stderr().lines(),
                hint: Some("the server may just be slow to start (first npx/uvx runs download packages): raise timeouts.initialize".into()),
            }
            .into());
        }
    };
    let pid = process.pid();
    Ok(session(config, service, handler, started, pid, Some(process), None).await)
}

/// The session `service` just initialized (`started` before it), with its first tools.
pub(super) async fn session(
    config: &ServerConfig,
    service: RunningService<RoleClient, HostHandler>,
    handler: HostHandler,
    started: Instant,
    pid: Option<u32>,
    process: Option<Arc<ServerProcess>>,
    url: Option<String>,
) -> Live {
    let name = config.name().to_owned();
    let init_time = started.elapsed();
    let peer = service.peer().clone();
    let info = session_info(&peer, init_time, pid);
    let tools = first_tools(&peer, &name, config.call_timeout).await;
    info!(server = %name, protocol = %info.protocol_version, tools = tools.len(), init = ?init_time, "MCP server connected");
    Live {
        name,
        peer,
        service: Mutex::new(Some(service)),
        handler,
        process,
        url,
        info,
        tools: std::sync::RwLock::new(tools),
        outstanding: Arc::default(),
    }
}

/// The server's command could not be started: what to check.
fn not_spawned(name: &str, err: &SpawnError) -> AttemptFailure {
    AttemptFailure {
        retryable: !err.is_permanent(),
        failure: Failure {
            server: name.to_owned(),
            hint: Some(match err {
                SpawnError::NotFound { command, .. } => format!(
                    "is `{command}` installed and on PATH? (or give its full path in `command`)"
                ),
                SpawnError::NotRunnable { .. } => "give the path of an executable file in `command` (a relative path in a configuration file starts from the file's folder, or from `cwd` when one is given)".to_owned(),
                _ => "is `command` an executable file? is `cwd` a directory?".to_owned(),
            }),
            reason: err.to_string(),
            exit: None,
            stderr: Vec::new(),
        },
    }
}

/// `initialize` failed (`err`): the server is stopped, and the failure says whether it
/// exited by itself and where to look.
async fn not_initialized(
    name: &str,
    err: &impl std::fmt::Display,
    process: &ServerProcess,
) -> AttemptFailure {
    let exit = process.wait_exit(EXIT_GRACE).await;
    if exit.is_some() {
        // Whatever it said before it went is what explains it.
        process.stderr_drained(EXIT_GRACE).await;
    }
    let said = process.stderr().total() > 0;
    let hint = match (&exit, said) {
        (Some(_), true) => {
            "the server exited right after starting: its stderr above says why".to_owned()
        }
        (Some(_), false) => "the server exited right after starting and wrote nothing to stderr: run its command in a terminal to see why".to_owned(),
        (None, _) => "does the command start an MCP server speaking stdio?".to_owned(),
    };
    process.shutdown().await;
    let retryable = !could_not_run(exit.as_ref());
    // Whether the server's exit shows as a broken pipe or a closed stream is a race;
    // what happened is that it exited.
    let reason = if exit.is_some() {
        debug!(server = %name, error = %err, "initialize failed");
        "initialize failed: the server exited before answering it".to_owned()
    } else {
        format!("initialize failed: {err}")
    };
    AttemptFailure {
        failure: Failure {
            server: name.to_owned(),
            reason,
            exit,
            stderr: process.stderr().lines(),
            hint: Some(hint),
        },
        retryable,
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

/// The tools listed right after connecting; none (with a warning) when the list fails or
/// takes longer than `timeout`: the session is usable without them.
async fn first_tools(peer: &Peer<RoleClient>, name: &str, timeout: Duration) -> Vec<Tool> {
    match tokio::time::timeout(timeout, list_tools_bounded(peer, name)).await {
        Ok(Ok(tools)) => tools,
        Ok(Err(err)) => {
            warn!(server = %name, error = %err, "tools/list failed; the server offers no tools for now");
            Vec::new()
        }
        Err(_) => {
            warn!(server = %name, timeout = ?timeout, "tools/list timed out; the server offers no tools for now");
            Vec::new()
        }
    }
}
