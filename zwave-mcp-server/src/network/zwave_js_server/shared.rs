//! What the handles ([`ZwaveJsServerClient`](super::ZwaveJsServerClient)) and the connection task share: the core
//! they feed, where the link stands ([`Link`]), and the commands asked for ([`Request`]).

use std::{
    sync::{Arc, atomic::AtomicU64},
    time::Duration,
};

use serde_json::Value;
use tokio::sync::{oneshot, watch};
use tokio_util::sync::CancellationToken;

use super::ZwaveJsServerError;
use crate::network::core::{Core, InFlightWrite};

/// How long after an unsupervised write's result its optimistic echo may still come. The
/// driver sends it a few milliseconds after the result; the device's own report (the
/// driver's verification Get) comes a second or more later (switches ~1.1 s, dimmers ~5 s,
/// `captures/confirm/FACTS.md`). Too short a window would take a late echo for a report, and
/// confirm a device that did nothing; too long a one, a real report for the echo (no
/// confirmation: the safe side). The echo, once seen, ends the window.
pub(super) const ECHO_WINDOW: Duration = Duration::from_secs(1);

/// Where the connection stands.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Link {
    /// Connecting (or waiting to connect again).
    Connecting,
    /// Up, and the cache holds the server's state.
    Listening {
        /// zwave-js-server's version.
        server: String,
        /// The driver's.
        driver: String,
    },
    /// Down, since `since_ms` (epoch ms), because of `why`.
    Down {
        /// When it went down.
        since_ms: i64,
        /// Why.
        why: String,
    },
}

/// A command asked for by a handle, on its way to the connection task.
pub(super) struct Request {
    /// The connection it was asked for on: never written on another.
    pub(super) connection: u64,
    pub(super) command: String,
    pub(super) message_id: String,
    pub(super) text: String,
    /// A write, kept in flight by its caller from when it is asked for (`WriteInFlight`);
    /// settled here when answered or lost.
    pub(super) echo: Option<InFlightWrite>,
    /// The request it is for: once cancelled, it is not sent (checked right before it is).
    pub(super) cancelled: Option<CancellationToken>,
    pub(super) reply: oneshot::Sender<Result<Value, ZwaveJsServerError>>,
}

impl Request {
    /// Refuses it: the connection it was asked on is gone, and it is never sent on another.
    pub(super) fn refuse(self, url: &str) {
        let _ = self.reply.send(Err(ZwaveJsServerError::Down {
            url: url.to_owned(),
            why: "the connection it was asked on is gone".to_owned(),
        }));
    }
}

/// What the handles and the connection task share.
pub(super) struct Shared {
    /// The backend-neutral core this connection feeds: nodes, values, the link's state.
    pub(super) core: Arc<Core>,
    pub(super) link: watch::Sender<Link>,
    /// Which connection is up (0: none yet); bumped on every connection.
    pub(super) connection: AtomicU64,
    pub(super) next_id: AtomicU64,
    /// Unique to this process, so ids never repeat across restarts.
    pub(super) id_prefix: String,
    pub(super) url: String,
}
