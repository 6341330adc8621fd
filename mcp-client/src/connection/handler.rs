//! Our side of the MCP session: the client identity we announce (with the pinned protocol
//! version), progress routing, and `tools/list_changed`.

use std::{
    collections::{HashMap, VecDeque},
    sync::{
        Arc, Mutex, PoisonError,
        atomic::{AtomicBool, Ordering},
    },
};

use rmcp::{
    ClientHandler,
    model::{
        ClientCapabilities, ClientConfig, Implementation, ProgressNotificationParam, ProgressToken,
        ProtocolVersion,
    },
    service::{NotificationContext, RoleClient},
};
use tracing::{debug, info};

/// The protocol version we ask for. rmcp's default asks for 2026-07-28; servers that only
/// speak older versions answer with theirs, which rmcp accepts.
pub const PINNED_PROTOCOL_VERSION: ProtocolVersion = ProtocolVersion::V_2025_11_25;

/// Progress notifications kept for a token nobody has registered yet.
const EARLY_PROGRESS_KEPT: usize = 256;

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

/// Progress callbacks by token. rmcp picks the token when it sends the request, so a fast
/// server can report progress before the caller has registered: such early notifications
/// are kept (bounded) and replayed on registration.
#[derive(Default)]
struct ProgressRoutes {
    callbacks: HashMap<ProgressToken, ProgressFn>,
    early: VecDeque<(ProgressToken, Progress)>,
}

/// The rmcp client handler of one connection.
#[derive(Clone)]
pub struct HostHandler {
    server: Arc<str>,
    progress: Arc<Mutex<ProgressRoutes>>,
    tools_changed: Arc<AtomicBool>,
}

impl HostHandler {
    /// A handler for the server `server`.
    pub fn new(server: &str) -> Self {
        Self {
            server: Arc::from(server),
            progress: Arc::default(),
            tools_changed: Arc::new(AtomicBool::new(false)),
        }
    }

    /// Sends the progress of the request with `token` to `callback` (including any that
    /// arrived already), until the returned guard is dropped.
    pub fn track_progress(&self, token: ProgressToken, callback: ProgressFn) -> ProgressGuard {
        let early: Vec<Progress> = {
            let mut routes = self.progress.lock().unwrap_or_else(PoisonError::into_inner);
            routes
                .callbacks
                .insert(token.clone(), Arc::clone(&callback));
            let (mine, others): (Vec<_>, Vec<_>) =
                routes.early.drain(..).partition(|(t, _)| *t == token);
            routes.early = others.into();
            mine.into_iter().map(|(_, progress)| progress).collect()
        };
        for progress in early {
            callback(progress);
        }
        ProgressGuard {
            token,
            progress: Arc::clone(&self.progress),
        }
    }

    /// The transport tap that routes `notifications/progress` to the registered callbacks in
    /// stream order (see [`crate::transport::ChildTransport::set_notification_tap`]).
    pub fn progress_tap(&self) -> crate::transport::NotificationTap {
        let routes = Arc::clone(&self.progress);
        let server = Arc::clone(&self.server);
        Arc::new(move |message: &serde_json::Value| {
            if message.get("method").and_then(serde_json::Value::as_str)
                != Some("notifications/progress")
            {
                return;
            }
            let Some(params) = message.get("params") else {
                return;
            };
            let Ok(params) = serde_json::from_value::<ProgressNotificationParam>(params.clone())
            else {
                debug!(server = %server, "a progress notification that does not parse");
                return;
            };
            route(&routes, &server, params);
        })
    }

    /// Whether the server said its tools changed since the last call; clears the flag.
    pub fn take_tools_changed(&self) -> bool {
        self.tools_changed.swap(false, Ordering::AcqRel)
    }
}

/// Unregisters a progress callback when dropped.
pub struct ProgressGuard {
    token: ProgressToken,
    progress: Arc<Mutex<ProgressRoutes>>,
}

impl Drop for ProgressGuard {
    fn drop(&mut self) {
        self.progress
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .callbacks
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
        _params: ProgressNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        // Already routed, in stream order, by the transport tap (`progress_tap`).
    }

    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        info!(server = %self.server, "server says its tools changed; they will be listed again");
        self.tools_changed.store(true, Ordering::Release);
    }
}

/// Hands one progress notification to its callback, or keeps it until one registers.
fn route(routes: &Mutex<ProgressRoutes>, server: &str, params: ProgressNotificationParam) {
    let progress = Progress {
        progress: params.progress,
        total: params.total,
        message: params.message,
    };
    let callback = {
        let mut routes = routes.lock().unwrap_or_else(PoisonError::into_inner);
        let callback = routes.callbacks.get(&params.progress_token).cloned();
        if callback.is_none() {
            debug!(server, token = ?params.progress_token, "progress for no registered call (yet)");
            if routes.early.len() == EARLY_PROGRESS_KEPT {
                routes.early.pop_front();
            }
            routes
                .early
                .push_back((params.progress_token, progress.clone()));
        }
        callback
    };
    if let Some(callback) = callback {
        callback(progress);
    }
}
