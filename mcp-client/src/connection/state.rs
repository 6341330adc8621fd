//! Where a [`ServerConnection`](super::ServerConnection) stands: the public
//! [`ConnectionStatus`], and the state it keeps under its lock.

use std::{sync::Arc, time::Instant};

use tokio_util::sync::CancellationToken;

use super::{ClientError, SessionInfo, session::Live};

/// Where a connection stands (see [`ServerConnection::status`](super::ServerConnection::status)).
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

pub(super) enum State {
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
        /// When a restart may be tried (decided once, when the failure happened); `None`
        /// when only the host connecting anew may try (credentials refused: a try could ask a
        /// person to sign in each time).
        retry_at: Option<Instant>,
        failures: u32,
        reason: String,
    },
}

/// Whether [`ServerConnection::begin_connect`] may start an attempt.
pub(super) enum Begin {
    Start {
        ticket: u64,
        failures: u32,
        cancel: CancellationToken,
    },
    Ready(Arc<Live>),
    Refuse(ClientError),
}
