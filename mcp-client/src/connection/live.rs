//! One live session with a server: connecting once (spawn, `initialize`, `tools/list`; over
//! HTTP see `remote`), the session's handles, requests with their timeouts and rmcp's errors
//! turned into ours, and closing it. [`ServerConnection`](super::ServerConnection) decides
//! when to connect again.

use std::{
    sync::{Arc, atomic::AtomicU64},
    time::{Duration, Instant},
};

use rmcp::{
    ClientServiceExt as _,
    model::{CancelledNotification, CancelledNotificationParam, ClientNotification, RequestId},
    service::{Peer, RoleClient, ServiceError},
};
use tracing::{debug, info, warn};

use super::{
    config::{Endpoint, ServerConfig},
    error::{ClientError, Failure},
    handler::{Elicitor, HostHandler},
    remote,
    session::{AttemptFailure, Live, Outstanding, session},
    updates::ResourceUpdates,
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
        // An answer of the wrong kind (rmcp's typed requests): the server is alive and its
        // session fine, so it is not restarted for it.
        ServiceError::UnexpectedResponse => ClientError::Refused {
            server,
            method: method.to_owned(),
            message: format!("its answer is not a result of `{method}`"),
        },
        other => {
            let Some(process) = &live.process else {
                return remote::transport_error(live, method, other);
            };
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

/// Whether `exit` is a shell's or an exec wrapper's "could not run it" (126) or "not found" (127).
fn could_not_run(exit: Option<&Exit>) -> bool {
    matches!(exit, Some(Exit::Status(status)) if matches!(status.code(), Some(126 | 127)))
}

/// One attempt: spawn (or reach the remote server), `initialize` (bounded by the init
/// timeout), `tools/list`.
pub(super) async fn connect_once(
    config: &ServerConfig,
    changes: &Arc<AtomicU64>,
    updates: &ResourceUpdates,
    elicitor: Option<&Elicitor>,
    processes: &ServerProcesses,
    auth: &remote::RemoteAuth,
) -> Result<Live, AttemptFailure> {
    let command = match &config.endpoint {
        Endpoint::Stdio(command) => command,
        Endpoint::Http(endpoint) => {
            return remote::connect_once(config, endpoint, changes, updates, elicitor, auth).await;
        }
    };
    let name = config.name().to_owned();
    let started = Instant::now();
    let (mut transport, process) =
        transport::spawn(command, processes).map_err(|err| not_spawned(&name, &err))?;
    let process = Arc::new(process);
    let handler = HostHandler::new(&name, Arc::clone(changes))
        .with_resource_updates(updates.clone())
        .with_elicitor(elicitor.cloned())
        .with_protocol_version(config.protocol_version.clone());
    transport.set_notification_tap(handler.tap());
    let service = match tokio::time::timeout(
        config.init_timeout,
        handler.clone().serve_with_lifecycle(
            transport,
            super::lifecycle::start(config.protocol_version.as_ref()),
        ),
    )
    .await
    {
        Ok(Ok(service)) => {
            if let Some(why) = service
                .peer_info()
                .and_then(|info| super::lifecycle::unspoken(&info.protocol_version))
            {
                drop(service);
                process.shutdown().await;
                return Err(AttemptFailure {
                    failure: Failure {
                        server: name,
                        reason: format!("initialize failed: {why}"),
                        exit: None,
                        stderr: process.stderr().lines(),
                        hint: None,
                    },
                    retryable: false,
                    authorization: false,
                });
            }
            service
        }
        Ok(Err(rmcp::service::ClientInitializeError::NoCompatibleProtocolVersion {
            server_supported,
            ..
        })) if config.protocol_version.is_none() => {
            // Found by the third hostile review: a `server/discover` answer naming only
            // revisions this client does not know ended the attempt. As with a server that
            // does not know the method, the session starts again with `initialize`.
            info!(server = %name, offered = ?server_supported, "server/discover named no revision this client speaks: starting again with initialize");
            let _ = process.shutdown().await;
            let mut legacy = config.clone();
            legacy.protocol_version = Some(super::PINNED_PROTOCOL_VERSION);
            // Both legs within the one timeout (found by the hostile review: each had its own).
            legacy.init_timeout = config.init_timeout.saturating_sub(started.elapsed());
            return Box::pin(connect_once(
                &legacy, changes, updates, elicitor, processes, auth,
            ))
            .await;
        }
        Ok(Err(err)) => {
            let err = super::lifecycle::failure(&err);
            return Err(not_initialized(&name, &err, &process).await);
        }
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

/// The server's command could not be started: what to check.
fn not_spawned(name: &str, err: &SpawnError) -> AttemptFailure {
    AttemptFailure {
        retryable: !err.is_permanent(),
        authorization: false,
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
        authorization: false,
    }
}
