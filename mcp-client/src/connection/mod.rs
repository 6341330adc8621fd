//! Connections to MCP servers: connect with retry, restart after a crash, time out requests,
//! and shut down cleanly. Every failure says which server, what happened, its exit status and
//! the last lines of its stderr.
//!
//! Locks are never held across an MCP request (one held lock would serialise parallel calls):
//! a call clones the live session's handles out of the lock and then awaits.

pub mod config;
mod error;
mod handler;
pub mod pool;
pub mod retry;

use std::{
    sync::{
        Arc,
        atomic::{AtomicU64, Ordering},
    },
    time::{Duration, Instant},
};

use rmcp::{
    ServiceExt as _,
    model::{
        CallToolRequest, CallToolRequestParams, CallToolResult, CancelledNotification,
        CancelledNotificationParam, ClientNotification, ClientRequest, JsonObject, PingRequest,
        RequestId, ServerResult, Tool,
    },
    service::{Peer, PeerRequestOptions, RoleClient, RunningService, ServiceError},
};
use tokio::sync::Mutex;
use tokio_util::sync::CancellationToken;
use tracing::{debug, info, warn};

pub use config::{ConfigError, ServerConfig};
pub use error::{ClientError, Failure};
pub use handler::{HostHandler, PINNED_PROTOCOL_VERSION, Progress, ProgressFn};
pub use retry::RetryPolicy;

use crate::transport::{self, ServerProcess, SpawnError};

/// Shortest wait before restarting a crashed server; doubled per failure up to the longest.
const RESTART_BACKOFF_MIN: Duration = Duration::from_secs(1);
const RESTART_BACKOFF_MAX: Duration = Duration::from_secs(30);
/// With progress, a call may run this many times its timeout in total.
const MAX_TOTAL_FACTOR: u32 = 4;
/// How long to wait for a dying server's exit status before reporting without it.
const EXIT_GRACE: Duration = Duration::from_millis(500);

/// Tells the server that the request `id` is no longer wanted.
async fn send_cancelled(peer: &Peer<RoleClient>, id: RequestId) {
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

/// A request the server has been sent and not yet answered. Dropped unanswered (the caller
/// stopped waiting), it sends `notifications/cancelled` for the request from a task of its own.
struct Unanswered {
    pending: Option<(Peer<RoleClient>, RequestId)>,
}

impl Unanswered {
    fn new(peer: &Peer<RoleClient>, id: RequestId) -> Self {
        Self {
            pending: Some((peer.clone(), id)),
        }
    }

    /// The answer came (or rmcp's own timeout cancelled the request): nothing to send.
    fn answered(mut self) {
        self.pending = None;
    }
}

impl Drop for Unanswered {
    fn drop(&mut self) {
        let Some((peer, id)) = self.pending.take() else {
            return;
        };
        match tokio::runtime::Handle::try_current() {
            Ok(runtime) => {
                runtime.spawn(async move { send_cancelled(&peer, id).await });
            }
            Err(_) => debug!(%id, "no runtime left to send notifications/cancelled"),
        }
    }
}

/// A live session with a server.
struct Live {
    peer: Peer<RoleClient>,
    service: Mutex<Option<RunningService<RoleClient, HostHandler>>>,
    handler: HostHandler,
    process: Arc<ServerProcess>,
    info: SessionInfo,
    tools: std::sync::RwLock<Vec<Tool>>,
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

/// Where a connection stands (see [`ServerConnection::status`]).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ConnectionStatus {
    /// Never started, or shut down.
    Idle,
    /// A connection attempt is running.
    Connecting {
        /// The attempt running now (1-based).
        attempt: u32,
        /// Attempts planned.
        of: u32,
    },
    /// Connected (the process may have died since; the next call finds out).
    Live(SessionInfo),
    /// The last attempt failed, or the server died.
    Down {
        /// Why.
        reason: String,
    },
}

enum State {
    Idle,
    /// An attempt is running without the lock held; `ticket` tells whether the state was
    /// replaced (by `shutdown`) while it ran.
    Connecting {
        ticket: u64,
        attempt: u32,
        of: u32,
        /// Cancelled by `shutdown`: the attempt stops and its server is stopped.
        cancel: CancellationToken,
    },
    Live(Arc<Live>),
    Down {
        since: Instant,
        failures: u32,
        reason: String,
    },
}

/// A connection to one configured server, restarted on demand after a crash.
///
/// The state lock is held only to read or replace the state, never across a connection
/// attempt or its retry delays: while one runs, calls fail at once with
/// [`ClientError::Connecting`].
pub struct ServerConnection {
    config: ServerConfig,
    state: Mutex<State>,
    /// Tickets of connection attempts.
    tickets: AtomicU64,
    /// Grows each time a session starts or the server says its tools changed.
    changes: Arc<AtomicU64>,
}

/// Whether [`ServerConnection::begin_connect`] may start an attempt.
enum Begin {
    Start {
        ticket: u64,
        failures: u32,
        cancel: CancellationToken,
    },
    Ready(Arc<Live>),
    Refuse(ClientError),
}

impl ServerConnection {
    /// A connection (not yet started) to the server `config` describes.
    pub fn new(config: ServerConfig) -> Self {
        Self {
            config,
            state: Mutex::new(State::Idle),
            tickets: AtomicU64::new(0),
            changes: Arc::default(),
        }
    }

    /// A number that grows whenever this server's tools may have changed: a session started
    /// (first connection, restart) or the server sent `notifications/tools/list_changed`.
    pub fn generation(&self) -> u64 {
        self.changes.load(Ordering::Acquire)
    }

    /// The server's configuration.
    pub fn config(&self) -> &ServerConfig {
        &self.config
    }

    /// The server's name.
    pub fn name(&self) -> &str {
        self.config.name()
    }

    /// Connects with the retry policy (3 attempts, 0/2/4 s by default).
    ///
    /// # Errors
    /// [`ClientError::ConnectFailed`] with the last attempt's failure, or
    /// [`ClientError::Connecting`] when another attempt is under way.
    pub async fn connect(&self) -> Result<SessionInfo, ClientError> {
        let of = self.config.retry.attempts.max(1);
        let (ticket, cancel) = match self.begin_connect(of, true).await {
            Begin::Ready(live) => return Ok(live.info.clone()),
            Begin::Refuse(err) => return Err(err),
            Begin::Start { ticket, cancel, .. } => (ticket, cancel),
        };
        let attempts = self.config.retry.run(self.name(), |attempt| async move {
            self.set_attempt(ticket, attempt, of).await;
            connect_once(&self.config, &self.changes).await
        });
        let result = tokio::select! {
            result = attempts => result,
            () = cancel.cancelled() => Err((self.shut_down_while_starting(), 1)),
        };
        match result {
            Ok(live) => self
                .finish_connect(ticket, live)
                .await
                .map(|live| live.info.clone()),
            Err((failure, attempts)) => {
                self.fail_connect(ticket, 0, &failure).await;
                Err(ClientError::ConnectFailed { attempts, failure })
            }
        }
    }

    /// Decides, under the lock, whether to start an attempt; marks the state as connecting.
    /// `fresh` (an explicit connect) ignores the restart backoff.
    async fn begin_connect(&self, of: u32, fresh: bool) -> Begin {
        let mut state = self.state.lock().await;
        let failures = match &*state {
            State::Live(live) => match live.process.exit() {
                None if !live.peer.is_transport_closed() => return Begin::Ready(Arc::clone(live)),
                exit => {
                    let reason = exit.map_or_else(
                        || "its stdout closed".to_owned(),
                        |exit| format!("it exited ({})", exit.status),
                    );
                    warn!(server = self.name(), %reason, "MCP server is gone; restarting it");
                    0
                }
            },
            State::Connecting { attempt, of, .. } => {
                return Begin::Refuse(ClientError::Connecting {
                    server: self.name().to_owned(),
                    attempt: *attempt,
                    of: *of,
                });
            }
            State::Down {
                since,
                failures,
                reason,
            } => {
                let wait = restart_delay(*failures);
                let elapsed = since.elapsed();
                if !fresh && elapsed < wait {
                    return Begin::Refuse(ClientError::BackingOff {
                        server: self.name().to_owned(),
                        retry_in: wait - elapsed,
                        last: reason.clone(),
                    });
                }
                *failures
            }
            State::Idle => 0,
        };
        let ticket = self.tickets.fetch_add(1, Ordering::Relaxed) + 1;
        let cancel = CancellationToken::new();
        *state = State::Connecting {
            ticket,
            attempt: 1,
            of,
            cancel: cancel.clone(),
        };
        Begin::Start {
            ticket,
            failures,
            cancel,
        }
    }

    /// Why an attempt ended that `shutdown` cancelled.
    fn shut_down_while_starting(&self) -> Failure {
        Failure {
            server: self.name().to_owned(),
            reason: "the connection was shut down while the server was starting".into(),
            exit: None,
            stderr: Vec::new(),
            hint: None,
        }
    }

    /// Records which attempt of connection `ticket` is running.
    async fn set_attempt(&self, ticket: u64, attempt: u32, of: u32) {
        if let State::Connecting {
            ticket: current,
            attempt: running,
            of: planned,
            ..
        } = &mut *self.state.lock().await
            && *current == ticket
        {
            *running = attempt;
            *planned = of;
        }
    }

    /// Installs the session of connection `ticket`, unless the connection was shut down
    /// meanwhile: then the new server is stopped and the call fails.
    async fn finish_connect(&self, ticket: u64, live: Live) -> Result<Arc<Live>, ClientError> {
        let live = Arc::new(live);
        {
            let mut state = self.state.lock().await;
            if matches!(&*state, State::Connecting { ticket: t, .. } if *t == ticket) {
                *state = State::Live(Arc::clone(&live));
                self.changes.fetch_add(1, Ordering::AcqRel);
                return Ok(live);
            }
        }
        warn!(
            server = self.name(),
            "the connection was shut down while it was starting; stopping the new server"
        );
        close(self.name(), &live).await;
        Err(ClientError::ConnectFailed {
            attempts: 1,
            failure: self.shut_down_while_starting(),
        })
    }

    /// Records a failed connection `ticket` (unless it was shut down meanwhile).
    async fn fail_connect(&self, ticket: u64, failures: u32, failure: &Failure) {
        let mut state = self.state.lock().await;
        if matches!(&*state, State::Connecting { ticket: t, .. } if *t == ticket) {
            *state = State::Down {
                since: Instant::now(),
                failures: failures + 1,
                reason: failure.reason.clone(),
            };
        }
    }

    /// Where the connection stands.
    pub async fn status(&self) -> ConnectionStatus {
        match &*self.state.lock().await {
            State::Idle => ConnectionStatus::Idle,
            State::Connecting { attempt, of, .. } => ConnectionStatus::Connecting {
                attempt: *attempt,
                of: *of,
            },
            State::Live(live) => ConnectionStatus::Live(live.info.clone()),
            State::Down { reason, .. } => ConnectionStatus::Down {
                reason: reason.clone(),
            },
        }
    }

    /// The session info, when connected.
    pub async fn session(&self) -> Option<SessionInfo> {
        match &*self.state.lock().await {
            State::Live(live) => Some(live.info.clone()),
            _ => None,
        }
    }

    /// The live server process, when connected (stderr tail, counters, exit).
    pub async fn process(&self) -> Option<Arc<ServerProcess>> {
        match &*self.state.lock().await {
            State::Live(live) => Some(Arc::clone(&live.process)),
            _ => None,
        }
    }

    /// The server's tools, listed again when it announced a change.
    ///
    /// # Errors
    /// As [`ServerConnection::call_tool`].
    pub async fn tools(&self) -> Result<Vec<Tool>, ClientError> {
        let live = self.live().await?;
        if live.handler.take_tools_changed() {
            let tools = request(
                &live,
                self.config.call_timeout,
                "tools/list",
                list_tools_bounded(&live.peer, self.name()),
            )
            .await?;
            *live
                .tools
                .write()
                .unwrap_or_else(std::sync::PoisonError::into_inner) = tools;
        }
        Ok(live
            .tools
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone())
    }

    /// Calls a tool, restarting the server first if it had crashed (with backoff).
    ///
    /// # Errors
    /// Timeouts (the request is cancelled), a server that died (with its exit status and
    /// stderr), a server backing off after crashes, or a JSON-RPC error from the server.
    pub async fn call_tool(
        &self,
        name: &str,
        arguments: JsonObject,
    ) -> Result<CallToolResult, ClientError> {
        self.call_tool_with_progress(name, arguments, None).await
    }

    /// [`ServerConnection::call_tool`], with progress notifications sent to `progress`.
    ///
    /// # Errors
    /// As [`ServerConnection::call_tool`].
    pub async fn call_tool_with_progress(
        &self,
        name: &str,
        arguments: JsonObject,
        progress: Option<ProgressFn>,
    ) -> Result<CallToolResult, ClientError> {
        let live = self.live().await?;
        let method = format!("tools/call {name}");
        let timeout = self.config.call_timeout;
        let mut options = PeerRequestOptions::no_options();
        // rmcp times the request out and sends notifications/cancelled for it. Progress resets
        // the timeout, but never beyond a total of MAX_TOTAL_FACTOR × the timeout.
        options.timeout = Some(timeout);
        let reset_on_progress = progress.is_some();
        if reset_on_progress {
            options.reset_timeout_on_progress = true;
            options.max_total_timeout = Some(timeout.saturating_mul(MAX_TOTAL_FACTOR));
        }
        let params = CallToolRequestParams::new(name.to_owned()).with_arguments(arguments);
        let request = ClientRequest::CallToolRequest(CallToolRequest::new(params));
        // The request is sent from this future (no task per call: a task costs two
        // cross-thread wake-ups per call). If the caller stops waiting once the request is
        // queued, `Unanswered` tells the server with `notifications/cancelled` when dropped;
        // before that, nothing was queued and there is nothing to cancel. rmcp itself cancels
        // only the requests its timeout ends.
        let exchange = async {
            let handle = live.peer.send_request_with_option(request, options).await?;
            let _registration = progress.map(|callback| {
                live.handler
                    .track_progress(handle.progress_token.clone(), callback)
            });
            let unanswered = Unanswered::new(&live.peer, handle.id.clone());
            let response = handle.await_response().await;
            unanswered.answered();
            response
        };
        // rmcp's timeout starts once the request is handed over; handing it over can itself
        // block (a server that stops reading stdin fills the pipe). The caller's deadline
        // covers both.
        let budget = if reset_on_progress {
            timeout.saturating_mul(MAX_TOTAL_FACTOR)
        } else {
            timeout
        } + EXIT_GRACE;
        let Ok(outcome) = tokio::time::timeout(budget, exchange).await else {
            return Err(ClientError::Timeout {
                server: self.name().to_owned(),
                method,
                timeout,
            });
        };
        let result = match outcome {
            Ok(ServerResult::CallToolResult(result)) => Ok(result),
            Ok(other) => Err(ClientError::Refused {
                server: self.name().to_owned(),
                method: method.clone(),
                message: format!("unexpected answer {other:?}"),
            }),
            Err(err) => Err(service_error(&live, &method, timeout, err).await),
        };
        if let Err(ClientError::ServerDied { failure, .. }) = &result {
            self.mark_down(&live, failure.reason.clone()).await;
        }
        result
    }

    /// Sends `ping` and returns the round-trip time.
    ///
    /// # Errors
    /// As [`ServerConnection::call_tool`].
    pub async fn ping(&self) -> Result<Duration, ClientError> {
        let live = self.live().await?;
        let started = Instant::now();
        let ping = ClientRequest::PingRequest(PingRequest {
            method: Default::default(),
            extensions: Default::default(),
        });
        request(
            &live,
            self.config.call_timeout,
            "ping",
            live.peer.send_request(ping),
        )
        .await?;
        Ok(started.elapsed())
    }

    /// Stops the server (close stdin, wait, SIGTERM, SIGKILL) and forgets the session.
    pub async fn shutdown(&self) {
        let previous = std::mem::replace(&mut *self.state.lock().await, State::Idle);
        match previous {
            State::Live(live) => close(self.name(), &live).await,
            // The attempt stops; the server it started is killed with its process group.
            State::Connecting { cancel, .. } => cancel.cancel(),
            State::Idle | State::Down { .. } => {}
        }
    }

    /// The live session, restarting the server if it died and its backoff has passed.
    async fn live(&self) -> Result<Arc<Live>, ClientError> {
        let (ticket, failures, cancel) = match self.begin_connect(1, false).await {
            Begin::Ready(live) => return Ok(live),
            Begin::Refuse(err) => return Err(err),
            Begin::Start {
                ticket,
                failures,
                cancel,
            } => (ticket, failures, cancel),
        };
        let attempt = tokio::select! {
            attempt = connect_once(&self.config, &self.changes) => attempt,
            () = cancel.cancelled() => Err(self.shut_down_while_starting()),
        };
        match attempt {
            Ok(live) => {
                let live = self.finish_connect(ticket, live).await?;
                info!(server = self.name(), "MCP server (re)started");
                Ok(live)
            }
            Err(failure) => {
                self.fail_connect(ticket, failures, &failure).await;
                Err(ClientError::ConnectFailed {
                    attempts: 1,
                    failure,
                })
            }
        }
    }

    /// Starts the server again in the background when it is down and its restart backoff
    /// has passed (or it was never started); returns at once. A server that failed at
    /// start-up thus joins later, and [`ServerConnection::generation`] tells when.
    pub fn revive(self: &Arc<Self>) {
        let server = Arc::clone(self);
        tokio::spawn(async move {
            let due = match &*server.state.lock().await {
                State::Idle => true,
                State::Down {
                    since, failures, ..
                } => since.elapsed() >= restart_delay(*failures),
                State::Connecting { .. } | State::Live(_) => false,
            };
            if due
                && !server.config.disabled
                && let Err(err) = server.live().await
            {
                debug!(server = server.name(), error = %err, "the server is still down");
            }
        });
    }

    async fn mark_down(&self, dead: &Arc<Live>, reason: String) {
        let mut state = self.state.lock().await;
        if let State::Live(live) = &*state
            && Arc::ptr_eq(live, dead)
        {
            // Restart on the next use without waiting: the first restart after a crash is free.
            *state = State::Down {
                since: Instant::now() - RESTART_BACKOFF_MAX,
                failures: 0,
                reason,
            };
        }
    }
}

/// Most pages of `tools/list` read; a server that keeps sending cursors is stopped there.
pub const MAX_TOOL_PAGES: usize = 64;
/// Most tools kept from one server.
pub const MAX_TOOLS: usize = 4096;

/// Every page of the server's `tools/list`, up to [`MAX_TOOL_PAGES`] pages and [`MAX_TOOLS`]
/// tools (rmcp's `list_all_tools` follows cursors without end), stopping at a cursor seen
/// before.
async fn list_tools_bounded(
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
async fn close(server: &str, live: &Live) {
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
    let exit = live.process.shutdown().await;
    info!(server, exit = ?exit, "MCP server stopped");
}

/// The wait before restart number `failures + 1`.
fn restart_delay(failures: u32) -> Duration {
    if failures == 0 {
        Duration::ZERO
    } else {
        RESTART_BACKOFF_MIN
            .saturating_mul(1 << (failures - 1).min(8))
            .min(RESTART_BACKOFF_MAX)
    }
}

/// Runs one request with a timeout and turns rmcp's errors into ours.
async fn request<T>(
    live: &Live,
    timeout: Duration,
    method: &str,
    call: impl Future<Output = Result<T, ServiceError>>,
) -> Result<T, ClientError> {
    match tokio::time::timeout(timeout, call).await {
        // Dropping rmcp's request future sends notifications/cancelled.
        Err(_) => Err(ClientError::Timeout {
            server: live.process.name().to_owned(),
            method: method.to_owned(),
            timeout,
        }),
        Ok(Ok(value)) => Ok(value),
        Ok(Err(err)) => Err(service_error(live, method, timeout, err).await),
    }
}

/// Turns an rmcp error into ours; a closed transport becomes the server's death, with its
/// exit status and stderr once known.
async fn service_error(
    live: &Live,
    method: &str,
    timeout: Duration,
    err: ServiceError,
) -> ClientError {
    let server = live.process.name().to_owned();
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
            let exit = live.process.wait_exit(EXIT_GRACE).await;
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
                    exit: exit.map(|e| e.status),
                    stderr: live.process.stderr().lines(),
                    hint: None,
                },
            }
        }
    }
}

/// One attempt: spawn, `initialize` (bounded by the init timeout), `tools/list`.
async fn connect_once(config: &ServerConfig, changes: &Arc<AtomicU64>) -> Result<Live, Failure> {
    let name = config.name().to_owned();
    let started = Instant::now();
    let (mut transport, process) = transport::spawn(&config.command).map_err(|err| Failure {
        server: name.clone(),
        hint: Some(match &err {
            SpawnError::NotFound { command, .. } => format!(
                "is `{command}` installed and on PATH? (or give its full path in `command`)"
            ),
            _ => "is `command` an executable file? is `cwd` a directory?".to_owned(),
        }),
        reason: err.to_string(),
        exit: None,
        stderr: Vec::new(),
    })?;
    let process = Arc::new(process);
    let handler = HostHandler::new(&name, Arc::clone(changes));
    transport.set_notification_tap(handler.tap());
    let failure = |reason: String,
                   exit: Option<String>,
                   hint: Option<String>,
                   process: &ServerProcess| Failure {
        server: name.clone(),
        reason,
        exit,
        stderr: process.stderr().lines(),
        hint,
    };
    let service = match tokio::time::timeout(config.init_timeout, handler.clone().serve(transport))
        .await
    {
        Ok(Ok(service)) => service,
        Ok(Err(err)) => {
            let exit = process.wait_exit(EXIT_GRACE).await;
            let hint = if exit.is_some() {
                "the server exited right after starting: its stderr above says why".to_owned()
            } else {
                "does the command start an MCP server speaking stdio?".to_owned()
            };
            process.shutdown().await;
            return Err(failure(
                format!("initialize failed: {err}"),
                exit.map(|e| e.status),
                Some(hint),
                &process,
            ));
        }
        Err(_) => {
            let exit = process.shutdown().await;
            return Err(failure(
                format!("no answer to initialize within {:?}", config.init_timeout),
                exit.map(|e| e.status),
                Some("the server may just be slow to start (first npx/uvx runs download packages): raise timeouts.initialize".into()),
                &process,
            ));
        }
    };
    let init_time = started.elapsed();
    let peer = service.peer().clone();
    let info = SessionInfo {
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
        pid: process.pid(),
        has_tools: peer
            .peer_info()
            .is_some_and(|i| i.capabilities.tools.is_some()),
    };
    let tools = match tokio::time::timeout(config.call_timeout, list_tools_bounded(&peer, &name))
        .await
    {
        Ok(Ok(tools)) => tools,
        Ok(Err(err)) => {
            warn!(server = %name, error = %err, "tools/list failed; the server offers no tools for now");
            Vec::new()
        }
        Err(_) => {
            warn!(server = %name, timeout = ?config.call_timeout, "tools/list timed out; the server offers no tools for now");
            Vec::new()
        }
    };
    info!(server = %name, protocol = %info.protocol_version, tools = tools.len(), init = ?init_time, "MCP server connected");
    Ok(Live {
        peer,
        service: Mutex::new(Some(service)),
        handler,
        process,
        info,
        tools: std::sync::RwLock::new(tools),
    })
}
