//! [`ServerConnection`]: one configured server, connected with retry, restarted after a
//! crash with backoff, its calls timed out and cancelled, shut down cleanly.

use std::{
    sync::{
        Arc,
        atomic::{AtomicU64, Ordering},
    },
    time::{Duration, Instant},
};

pub use super::state::ConnectionStatus;

use common::Backoff;
use rmcp::model::{
    CallToolResult, ClientRequest, DiscoverRequest, DiscoverRequestParams, JsonObject, PingRequest,
    Tool,
};
use tokio::sync::Mutex;
use tokio_util::sync::CancellationToken;
use tracing::{debug, info, warn};

use super::{
    ClientError, Failure, ProgressFn, ServerConfig, SessionInfo, call,
    live::{close, connect_once, request},
    session::{AttemptFailure, Live, list_tools_bounded},
    state::{Begin, State},
};
use crate::transport::{ServerProcess, ServerProcesses};

/// Waits between restarts of a server that keeps failing: 1 s, 2 s, 4 s … 30 s, each cut by up
/// to a quarter at random so servers that failed together do not restart together.
const RESTART_BACKOFF: Backoff =
    Backoff::exponential(Duration::from_secs(1), Duration::from_secs(30)).with_jitter(0.25);

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
    /// Who answers the server's questions to the user, if anyone.
    elicitor: Option<super::Elicitor>,
    /// The tool calls running, and the time people took to answer the server's questions.
    attention: Arc<super::handler::Attention>,
    /// Where the server's process is registered, so that its host can stop it on a signal.
    processes: ServerProcesses,
    /// Set by [`ServerConnection::shutdown`]: from then on nothing starts the server again.
    closed: std::sync::atomic::AtomicBool,
    /// Signing in to a remote server, kept across its sessions.
    auth: super::remote::RemoteAuth,
    /// Where the server's `resources/updated` notices go, across its sessions.
    pub(super) updates: super::ResourceUpdates,
    /// The resources the host subscribed to (and did not unsubscribe from): each new session
    /// subscribes to them again.
    pub(super) subscribed: std::sync::Mutex<std::collections::BTreeSet<String>>,
}

impl ServerConnection {
    /// A connection (not yet started) to the server `config` describes.
    pub fn new(config: ServerConfig) -> Self {
        Self {
            config,
            state: Mutex::new(State::Idle),
            tickets: AtomicU64::new(0),
            changes: Arc::default(),
            elicitor: None,
            attention: Arc::default(),
            processes: ServerProcesses::new(),
            closed: std::sync::atomic::AtomicBool::new(false),
            auth: super::remote::RemoteAuth::default(),
            updates: super::ResourceUpdates::default(),
            subscribed: std::sync::Mutex::default(),
        }
    }

    /// With `options` for signing in when the server is remote and asks for OAuth (who signs
    /// a person in, where tokens are kept); set before the first connection. Without them a
    /// server that needs a person to sign in cannot be reached.
    #[cfg(feature = "oauth")]
    #[must_use]
    pub fn with_oauth(mut self, options: crate::transport::http::oauth::OAuthOptions) -> Self {
        self.auth = super::remote::RemoteAuth::new(options);
        self
    }

    /// With the server's processes registered in `processes` (the host's registry, shared by
    /// its servers) instead of a registry of this connection's own; set before the first
    /// connection.
    #[must_use]
    pub fn with_processes(mut self, processes: ServerProcesses) -> Self {
        self.processes = processes;
        self
    }

    /// With `elicitor` answering the server's questions to the user (MCP elicitation); set
    /// before the first connection.
    #[must_use]
    pub fn with_elicitor(mut self, elicitor: Option<super::Elicitor>) -> Self {
        // Each question is withdrawn once no call of this server is running, and timed.
        self.elicitor = elicitor.map(|elicitor| self.attention.watching(elicitor));
        self
    }

    /// How long, in all, questions of this server waited for a person's answer (time during
    /// which at least one did). What a call spent of it is not the tool's time.
    pub fn waited_for_person(&self) -> Duration {
        self.attention.waited()
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

    /// Connects with the retry policy (3 attempts, 0/2/4 s by default). A failure that would
    /// repeat (a program that is missing or cannot be run, credentials refused) ends it at the
    /// first attempt. It also tries a server whose credentials were refused, which nothing
    /// else does: sign-ins are allowed again.
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
        self.auth.allow_again().await;
        let attempts = self.config.retry.run_if(
            self.name(),
            |attempt| async move {
                self.set_attempt(ticket, attempt, of).await;
                connect_once(
                    &self.config,
                    &self.changes,
                    &self.updates,
                    self.elicitor.as_ref(),
                    &self.processes,
                    &self.auth,
                )
                .await
            },
            |failed: &AttemptFailure| failed.retryable,
        );
        let result = tokio::select! {
            result = attempts => result,
            () = cancel.cancelled() => Err((self.shut_down_while_starting().into(), 1)),
        };
        match result {
            Ok(live) => self
                .finish_connect(ticket, live)
                .await
                .map(|live| live.info.clone()),
            Err((failed, attempts)) => {
                self.fail_connect(ticket, 0, &failed).await;
                Err(ClientError::ConnectFailed {
                    attempts,
                    failure: failed.failure,
                })
            }
        }
    }

    /// Decides, under the lock, whether to start an attempt; marks the state as connecting.
    /// `fresh` (an explicit connect) ignores the restart backoff.
    async fn begin_connect(&self, of: u32, fresh: bool) -> Begin {
        let mut state = self.state.lock().await;
        // Checked under the state lock `shutdown` also takes: an attempt never starts after it.
        if self.closed.load(Ordering::Acquire) {
            return Begin::Refuse(ClientError::ShutDown {
                server: self.name().to_owned(),
            });
        }
        let failures = match &*state {
            State::Live(live) => match live.process.as_ref().and_then(|process| process.exit()) {
                None if !live.peer.is_transport_closed() => return Begin::Ready(Arc::clone(live)),
                exit => {
                    let reason = match (exit, &live.process) {
                        (Some(exit), _) => format!("it exited ({exit})"),
                        (None, Some(_)) => "its stdout closed".to_owned(),
                        (None, None) => "its HTTP session ended".to_owned(),
                    };
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
                retry_at: None,
                reason,
                ..
            } if !fresh => {
                return Begin::Refuse(ClientError::NotAuthorized {
                    server: self.name().to_owned(),
                    last: reason.clone(),
                });
            }
            State::Down {
                retry_at,
                failures,
                reason,
            } => {
                let now = Instant::now();
                if let Some(retry_at) = *retry_at
                    && !fresh
                    && now < retry_at
                {
                    return Begin::Refuse(ClientError::BackingOff {
                        server: self.name().to_owned(),
                        retry_in: retry_at - now,
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
        let installed = {
            let mut state = self.state.lock().await;
            let ours = matches!(&*state, State::Connecting { ticket: t, .. } if *t == ticket);
            if ours {
                *state = State::Live(Arc::clone(&live));
                self.changes.fetch_add(1, Ordering::AcqRel);
            }
            ours
        };
        if installed {
            self.subscribe_again(&live).await;
            return Ok(live);
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

    /// Records a failed connection `ticket` (unless it was shut down meanwhile). Refused
    /// credentials are not tried again by time: only the host connecting anew tries them.
    async fn fail_connect(&self, ticket: u64, failures: u32, failed: &AttemptFailure) {
        let mut state = self.state.lock().await;
        if matches!(&*state, State::Connecting { ticket: t, .. } if *t == ticket) {
            *state = State::Down {
                retry_at: (!failed.authorization)
                    .then(|| Instant::now() + RESTART_BACKOFF.after(failures.saturating_add(1))),
                failures: failures.saturating_add(1),
                reason: failed.failure.reason.clone(),
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

    /// The live server process, when connected to a server the host started (stderr tail,
    /// counters, exit); `None` for a remote server.
    pub async fn process(&self) -> Option<Arc<ServerProcess>> {
        match &*self.state.lock().await {
            State::Live(live) => live.process.clone(),
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
            let listed = request(
                &live,
                self.config.call_timeout,
                "tools/list",
                list_tools_bounded(&live.peer, self.name()),
            )
            .await;
            if listed.is_err() {
                // Listed again by the next session, or on the next try.
                live.handler.mark_tools_changed();
            }
            let tools = self.settle(&live, listed).await?;
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
        // While it runs, the server's questions are for it (see `Attention`).
        let _running = self.attention.call();
        let live = self.live().await?;
        // A remote server that forgot the session answers 404 without running the call: the
        // session is marked down (the next request starts a new one) and the call is not sent
        // again: whether to repeat a command is the caller's choice, never the transport's.
        let result = self.call_once(&live, name, arguments, progress).await;
        if let Err(ClientError::SessionExpired { .. }) = &result {
            self.mark_down(&live, "its HTTP session expired".into())
                .await;
        }
        result
    }

    /// One `tools/call` on the session `live`; a failure that ends the session marks it down.
    async fn call_once(
        &self,
        live: &Arc<Live>,
        name: &str,
        arguments: JsonObject,
        progress: Option<ProgressFn>,
    ) -> Result<CallToolResult, ClientError> {
        let result =
            call::call_tool(live, self.config.call_timeout, name, arguments, progress).await;
        self.settle(live, result).await
    }

    /// `result` of a request on `live`; an error that ends the session marks it down, so the
    /// next request starts a new one (at once: the first restart after a failure is free).
    pub(super) async fn settle<T>(
        &self,
        live: &Arc<Live>,
        result: Result<T, ClientError>,
    ) -> Result<T, ClientError> {
        if let Err(err) = &result
            && err.ends_session()
        {
            let (reason, retry) = match err {
                ClientError::ServerDied { failure, .. }
                | ClientError::Unreachable { failure, .. } => (failure.reason.clone(), true),
                ClientError::NotAuthorized { last, .. } => (last.clone(), false),
                other => (other.to_string(), true),
            };
            self.mark_down_for(live, reason, retry).await;
        }
        result
    }

    /// Sends `ping` and returns the round-trip time. Protocol 2026-07-28 has no `ping`: its
    /// sessions are asked `server/discover` instead, the lightest request it has.
    ///
    /// # Errors
    /// As [`ServerConnection::call_tool`].
    pub async fn ping(&self) -> Result<Duration, ClientError> {
        let live = self.live().await?;
        let started = Instant::now();
        let (method, probe) = if live.info.has_initialize() {
            let ping = PingRequest {
                method: Default::default(),
                extensions: Default::default(),
            };
            ("ping", ClientRequest::PingRequest(ping))
        } else {
            let discover = DiscoverRequest::new(DiscoverRequestParams {});
            ("server/discover", ClientRequest::DiscoverRequest(discover))
        };
        let answered = request(
            &live,
            self.config.call_timeout,
            method,
            live.peer.send_request(probe),
        )
        .await;
        self.settle(&live, answered).await?;
        Ok(started.elapsed())
    }

    /// Stops the server (close stdin, wait, SIGTERM, SIGKILL) and forgets the session. It is
    /// final: the connection never starts the server again, and a call after it fails with
    /// [`ClientError::ShutDown`], nothing sent.
    pub async fn shutdown(&self) {
        let mut state = self.state.lock().await;
        self.closed.store(true, Ordering::Release);
        let previous = std::mem::replace(&mut *state, State::Idle);
        drop(state);
        match previous {
            State::Live(live) => close(self.name(), &live).await,
            // The attempt stops; the server it started is killed with its process group.
            State::Connecting { cancel, .. } => cancel.cancel(),
            State::Idle | State::Down { .. } => {}
        }
    }

    /// The live session, restarting the server if it died and its backoff has passed.
    pub(super) async fn live(&self) -> Result<Arc<Live>, ClientError> {
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
            attempt = connect_once(&self.config, &self.changes, &self.updates, self.elicitor.as_ref(), &self.processes, &self.auth) => attempt,
            () = cancel.cancelled() => Err(self.shut_down_while_starting().into()),
        };
        match attempt {
            Ok(live) => {
                let live = self.finish_connect(ticket, live).await?;
                info!(server = self.name(), "MCP server (re)started");
                Ok(live)
            }
            Err(failed) => {
                self.fail_connect(ticket, failures, &failed).await;
                Err(ClientError::ConnectFailed {
                    attempts: 1,
                    failure: failed.failure,
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
                State::Down { retry_at, .. } => retry_at.is_some_and(|at| Instant::now() >= at),
                State::Connecting { .. } | State::Live(_) => false,
            };
            if due
                && !server.config.disabled
                && !server.closed.load(Ordering::Acquire)
                && let Err(err) = server.live().await
            {
                debug!(server = server.name(), error = %err, "the server is still down");
            }
        });
    }

    async fn mark_down(&self, dead: &Arc<Live>, reason: String) {
        self.mark_down_for(dead, reason, true).await;
    }

    /// Marks the session `dead` down; `retry` false when only the host connecting anew may
    /// start another (credentials refused).
    async fn mark_down_for(&self, dead: &Arc<Live>, reason: String, retry: bool) {
        let mut state = self.state.lock().await;
        if let State::Live(live) = &*state
            && Arc::ptr_eq(live, dead)
        {
            // Restart on the next use without waiting: the first restart after a crash is free.
            *state = State::Down {
                retry_at: retry.then(Instant::now),
                failures: 0,
                reason,
            };
            if dead.process.is_none() {
                // A remote session is closed (DELETE) in the background; a process is gone.
                let (server, dead) = (self.name().to_owned(), Arc::clone(dead));
                tokio::spawn(async move { close(&server, &dead).await });
            }
        }
    }
}
