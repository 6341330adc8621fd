//! Our side of the MCP session: the client identity we announce (with the pinned protocol
//! version), progress routing, and `tools/list_changed`.

use std::{
    collections::HashMap,
    sync::{
        Arc, Mutex, PoisonError,
        atomic::{AtomicBool, AtomicI64, Ordering},
    },
};

use rmcp::{
    ClientHandler,
    model::{
        ClientCapabilities, ClientConfig, Implementation, NumberOrString,
        ProgressNotificationParam, ProgressToken, ProtocolVersion,
    },
    service::{NotificationContext, RoleClient},
};
use tracing::{debug, info};

/// The protocol version we ask for. rmcp's default asks for 2026-07-28; servers that only
/// speak older versions answer with theirs, which rmcp accepts.
pub const PINNED_PROTOCOL_VERSION: ProtocolVersion = ProtocolVersion::V_2025_11_25;

/// A progress update of one call.
#[derive(Debug, Clone, PartialEq)]
pub struct Progress {
    /// Progress so far.
    pub progress: f64,
    /// Total, when known.
    pub total: Option<f64>,
    /// The server's message, if any.
    pub message: Option<String>,
}

/// Receives the progress of one call.
pub type ProgressFn = Arc<dyn Fn(Progress) + Send + Sync>;

/// The rmcp client handler of one connection.
#[derive(Clone)]
pub struct HostHandler {
    server: Arc<str>,
    next_token: Arc<AtomicI64>,
    progress: Arc<Mutex<HashMap<ProgressToken, ProgressFn>>>,
    tools_changed: Arc<AtomicBool>,
}

impl HostHandler {
    /// A handler for the server `server`.
    pub fn new(server: &str) -> Self {
        Self {
            server: Arc::from(server),
            next_token: Arc::new(AtomicI64::new(1)),
            progress: Arc::default(),
            tools_changed: Arc::new(AtomicBool::new(false)),
        }
    }

    /// Registers a progress callback and returns the token to send with the request.
    /// The registration ends when the returned guard is dropped.
    pub fn track_progress(&self, callback: ProgressFn) -> (ProgressToken, ProgressGuard) {
        let token = ProgressToken(NumberOrString::Number(
            self.next_token.fetch_add(1, Ordering::Relaxed),
        ));
        self.progress
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(token.clone(), callback);
        (
            token.clone(),
            ProgressGuard {
                token,
                progress: Arc::clone(&self.progress),
            },
        )
    }

    /// Whether the server said its tools changed since the last call; clears the flag.
    pub fn take_tools_changed(&self) -> bool {
        self.tools_changed.swap(false, Ordering::AcqRel)
    }
}

/// Unregisters a progress callback when dropped.
pub struct ProgressGuard {
    token: ProgressToken,
    progress: Arc<Mutex<HashMap<ProgressToken, ProgressFn>>>,
}

impl Drop for ProgressGuard {
    fn drop(&mut self) {
        self.progress
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(&self.token);
    }
}

impl ClientHandler for HostHandler {
    fn get_info(&self) -> ClientConfig {
        ClientConfig::new(
            ClientCapabilities::default(),
            Implementation::new("mcp-client", env!("CARGO_PKG_VERSION")),
        )
        .with_protocol_version(PINNED_PROTOCOL_VERSION)
    }

    async fn on_progress(
        &self,
        params: ProgressNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        let callback = self
            .progress
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(&params.progress_token)
            .cloned();
        match callback {
            Some(callback) => callback(Progress {
                progress: params.progress,
                total: params.total,
                message: params.message,
            }),
            None => {
                debug!(server = %self.server, token = ?params.progress_token, "progress for no waiting call")
            }
        }
    }

    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        info!(server = %self.server, "server says its tools changed; they will be listed again");
        self.tools_changed.store(true, Ordering::Release);
    }
}
