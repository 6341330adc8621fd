//! The handle on a connection to zwave-js-server that stays up ([`ZwaveJsServerClient`]): cheap to
//! clone, it reads the node cache the connection task keeps current and sends commands,
//! getting their results by `messageId`.
//!
//! A command is only ever sent on the connection that was up when it was asked for: one asked
//! for while the server is down is refused at once, and one whose connection drops before its
//! result comes is answered "lost (it may have been carried out)" — never sent again later.
//! The cache it reads is the backend-neutral core the tools read
//! ([`crate::network::Network`] holds a client when started with `--zwave-js-url`).

use std::{
    sync::{
        Arc,
        atomic::{AtomicU64, Ordering},
    },
    time::Duration,
};

use serde_json::{Value, json};
use tokio::sync::{mpsc, oneshot, watch};
use tokio_util::sync::CancellationToken;

pub use super::target::Target;
use super::{
    Link, ZwaveJsServerError, connection,
    protocol::{self, RELOAD},
    shared::{ECHO_WINDOW, Request, Shared},
};
use crate::network::{
    Backoff, Nodes,
    core::{self, Core, InFlightWrite},
    now_ms,
};

/// Commands waiting to be written.
const QUEUE: usize = 64;

/// A handle on the connection; cheap to clone.
#[derive(Clone)]
pub struct ZwaveJsServerClient {
    shared: Arc<Shared>,
    requests: mpsc::Sender<Request>,
}

impl ZwaveJsServerClient {
    /// Starts the connection task for `target`, with a cache of its own.
    pub fn connect(target: Target, backoff: Backoff) -> Self {
        Self::feeding(
            Arc::new(Core::new(crate::network::Backend::ZwaveJsServer)),
            target,
            backoff,
        )
    }

    /// Starts the connection task for `target`, keeping `core` current.
    pub(crate) fn feeding(core: Arc<Core>, target: Target, backoff: Backoff) -> Self {
        let (link, _) = watch::channel(Link::Connecting);
        let shared = Arc::new(Shared {
            core,
            link,
            connection: AtomicU64::new(0),
            next_id: AtomicU64::new(0),
            id_prefix: format!("zm-{}-{}", std::process::id(), now_ms()),
            url: target.url.clone(),
        });
        let (requests, incoming) = mpsc::channel(QUEUE);
        tokio::spawn(connection::run(
            target,
            backoff,
            Arc::clone(&shared),
            incoming,
        ));
        Self { shared, requests }
    }

    /// Where the connection stands, and its changes.
    pub fn link(&self) -> watch::Receiver<Link> {
        self.shared.link.subscribe()
    }

    /// The server's URL.
    pub fn url(&self) -> &str {
        &self.shared.url
    }

    /// A counter bumped on every change of the node cache.
    pub fn changes(&self) -> watch::Receiver<u64> {
        self.shared.core.changes.subscribe()
    }

    /// Reads the node cache.
    pub fn with_nodes<R>(&self, read: impl FnOnce(&Nodes) -> R) -> R {
        read(&core::read(&self.shared.core.state).nodes)
    }

    /// Reads the whole state again (`start_listening`) and replaces the cache with it: nodes
    /// renamed, added or removed by another client are known from then on.
    ///
    /// # Errors
    /// See [`ZwaveJsServerError`].
    pub async fn reload(&self, timeout: Duration) -> Result<(), ZwaveJsServerError> {
        self.request(RELOAD, json!({}), timeout).await.map(drop)
    }

    /// Sends `command` with `params` and waits at most `timeout` for its result.
    ///
    /// # Errors
    /// See [`ZwaveJsServerError`].
    pub async fn request(
        &self,
        command: &str,
        params: Value,
        timeout: Duration,
    ) -> Result<Value, ZwaveJsServerError> {
        self.send(command, params, None, None, timeout).await
    }

    /// Sends `node.set_value` with `params`, and waits at most `timeout` for its result.
    /// `echo`, the write as the cache knows it, is kept in flight from when it is asked for:
    /// zwave-js's optimistic echo (sent after an unsupervised write's result, before a
    /// supervised one's) is not taken for the device's report. Not sent once `cancelled` is
    /// ([`ZwaveJsServerError::Cancelled`]): it is looked at right before the frame goes out.
    ///
    /// # Errors
    /// See [`ZwaveJsServerError`].
    pub(crate) async fn write(
        &self,
        params: Value,
        echo: Option<InFlightWrite>,
        cancelled: &CancellationToken,
        timeout: Duration,
    ) -> Result<Value, ZwaveJsServerError> {
        self.send("node.set_value", params, echo, Some(cancelled), timeout)
            .await
    }

    async fn send(
        &self,
        command: &str,
        params: Value,
        echo: Option<InFlightWrite>,
        cancelled: Option<&CancellationToken>,
        timeout: Duration,
    ) -> Result<Value, ZwaveJsServerError> {
        if cancelled.is_some_and(CancellationToken::is_cancelled) {
            return Err(ZwaveJsServerError::Cancelled(command.to_owned()));
        }
        let link = self.shared.link.borrow().clone();
        if !matches!(link, Link::Listening { .. }) {
            return Err(ZwaveJsServerError::Down {
                url: self.shared.url.clone(),
                why: match link {
                    Link::Down { why, .. } => why,
                    _ => "still connecting".to_owned(),
                },
            });
        }
        let id = self.shared.next_id.fetch_add(1, Ordering::Relaxed) + 1;
        let message_id = format!("{}-{id}", self.shared.id_prefix);
        let (reply, answer) = oneshot::channel();
        // In flight until the task settles it (answered, or lost with its connection), or for
        // the echo window once this caller stops waiting: its time ran out, or its future was
        // dropped. Never for ever: a report after that is the device's.
        let flight = self.shared.core.keep_in_flight(echo.as_ref(), ECHO_WINDOW);
        let request = Request {
            connection: self.shared.connection.load(Ordering::SeqCst),
            command: command.to_owned(),
            text: protocol::command(&message_id, command, params),
            message_id,
            echo,
            cancelled: cancelled.cloned(),
            reply,
        };
        // A full queue is an error at once, never a wait that could end after the caller
        // gave up.
        match self.requests.try_send(request) {
            Ok(()) => {}
            Err(mpsc::error::TrySendError::Full(_)) => {
                flight.not_sent();
                return Err(ZwaveJsServerError::Busy {
                    command: command.to_owned(),
                    queued: QUEUE,
                });
            }
            Err(mpsc::error::TrySendError::Closed(_)) => {
                flight.not_sent();
                return Err(ZwaveJsServerError::Down {
                    url: self.shared.url.clone(),
                    why: "the connection task has stopped".to_owned(),
                });
            }
        }
        match tokio::time::timeout(timeout, answer).await {
            Ok(Ok(result)) => {
                // Refused by the task (its connection gone, or the request cancelled): never
                // sent. Any other answer, the task settled the write when it saw it.
                if matches!(
                    result,
                    Err(ZwaveJsServerError::Down { .. } | ZwaveJsServerError::Cancelled(_))
                ) {
                    flight.not_sent();
                } else {
                    flight.settled();
                }
                result
            }
            // The task went without a word: it may have been sent; the guard keeps it for
            // the echo window, as after a timeout.
            Ok(Err(_)) => Err(ZwaveJsServerError::Lost(command.to_owned())),
            Err(_) => Err(ZwaveJsServerError::Timeout {
                command: command.to_owned(),
                after: timeout,
            }),
        }
    }
}
