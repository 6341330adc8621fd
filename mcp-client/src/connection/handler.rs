//! Our side of the MCP session: the client identity we announce (with the pinned protocol
//! version), progress routing, `tools/list_changed`, and a server's questions to the user
//! (MCP elicitation), answered by the host's [`Elicitor`] when it gave one.

use std::{
    collections::{HashMap, VecDeque},
    convert::Infallible,
    sync::{
        Arc, Mutex, PoisonError,
        atomic::{AtomicBool, AtomicU64, Ordering},
    },
    time::{Duration, Instant},
};

use rmcp::{
    ClientHandler,
    model::{
        ClientCapabilities, ClientConfig, ElicitRequestParams, ElicitResult, ElicitationAction,
        ElicitationCapability, ErrorData, FormElicitationCapability, Implementation,
        ProgressNotificationParam, ProgressToken, ProtocolVersion,
    },
    service::{NotificationContext, RequestContext, RoleClient},
};
use tokio_util::sync::CancellationToken;
use tracing::{debug, info};

/// The revision asked for in `initialize`: the newest that has the handshake. A server of an
/// older revision answers with its own, which rmcp accepts; newer revisions start with
/// `server/discover` instead (see [`super::lifecycle`]).
pub const PINNED_PROTOCOL_VERSION: ProtocolVersion = ProtocolVersion::LATEST_WITH_INITIALIZE;

/// Progress notifications kept for a token nobody has registered yet.
const EARLY_PROGRESS_KEPT: usize = 256;
/// Longest progress message passed on (characters): a progress line is for people, and the
/// early buffer must stay small (256 × 1 KiB) whatever a server sends.
pub const PROGRESS_MESSAGE_CAP: usize = 1024;

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

/// A question a server asks the person behind the host (MCP elicitation, form mode).
#[derive(Debug, Clone)]
pub struct Elicitation {
    /// The server asking.
    pub server: String,
    /// What it asks, in its words (show it without control characters).
    pub message: String,
    /// What the answer holds: a JSON Schema object of primitive properties.
    pub schema: serde_json::Value,
    /// The names of `schema`'s properties in the order the server gave them (`schema`, a
    /// `serde_json` map, holds them sorted by name): the order to ask for them in.
    pub order: Vec<String>,
    /// Cancelled once no answer is needed any more: the server withdrew the question
    /// (`notifications/cancelled`), or no tool call of this server is running (the call that
    /// asked it ended; also at once for a question asked outside any call). The answer then
    /// reaches nobody who waits for it: stop asking, and answer [`ElicitAnswer::Cancel`].
    pub withdrawn: CancellationToken,
}

/// Equal when server, message, schema and order are.
impl PartialEq for Elicitation {
    fn eq(&self, other: &Self) -> bool {
        self.server == other.server
            && self.message == other.message
            && self.schema == other.schema
            && self.order == other.order
    }
}

impl Elicitation {
    /// The schema's properties (name, schema) in the order the server gave them.
    pub fn fields(&self) -> Vec<(&String, &serde_json::Value)> {
        let Some(properties) = self.schema["properties"].as_object() else {
            return Vec::new();
        };
        let mut fields: Vec<_> = self
            .order
            .iter()
            .filter_map(|name| properties.get_key_value(name))
            .collect();
        // Any the order does not name, after those it does.
        fields.extend(
            properties
                .iter()
                .filter(|(name, _)| !self.order.contains(name)),
        );
        fields
    }
}

/// The person's answer to an [`Elicitation`].
#[derive(Debug, Clone, PartialEq)]
pub enum ElicitAnswer {
    /// Answered, with the content the schema asks for.
    Accept(serde_json::Value),
    /// Said no to answering.
    Decline,
    /// Dismissed the question (Ctrl-C, closed the prompt).
    Cancel,
}

/// Asks the person behind the host a server's question. A host without one does not declare
/// elicitation, so servers know nobody can be asked.
pub type Elicitor = Arc<
    dyn Fn(Elicitation) -> std::pin::Pin<Box<dyn Future<Output = ElicitAnswer> + Send>>
        + Send
        + Sync,
>;

/// What a connection knows of the people it asks: its tool calls running (a question whose
/// call ended is withdrawn) and how long people took to answer (time a tool call spent waiting
/// for a person is not the tool's time).
pub(super) struct Attention {
    calls: tokio::sync::watch::Sender<usize>,
    clock: Mutex<AnswerClock>,
}

/// The time at least one question was waiting for its answer.
#[derive(Default)]
struct AnswerClock {
    open: usize,
    since: Option<Instant>,
    total: Duration,
}

impl Default for Attention {
    fn default() -> Self {
        Self {
            calls: tokio::sync::watch::Sender::new(0),
            clock: Mutex::default(),
        }
    }
}

impl Attention {
    /// A tool call starts; it ends when the guard is dropped.
    pub(super) fn call(self: &Arc<Self>) -> CallGuard {
        self.calls.send_modify(|calls| *calls += 1);
        CallGuard(Arc::clone(self))
    }

    /// How long, in all, at least one question of this connection was waiting for an answer.
    pub(super) fn waited(&self) -> Duration {
        let clock = self.clock.lock().unwrap_or_else(PoisonError::into_inner);
        clock.total + clock.since.map_or(Duration::ZERO, |since| since.elapsed())
    }

    /// `elicitor`, with each question withdrawn once no call is running, and timed.
    pub(super) fn watching(self: &Arc<Self>, elicitor: Elicitor) -> Elicitor {
        let attention = Arc::clone(self);
        Arc::new(move |question: Elicitation| {
            let attention = Arc::clone(&attention);
            let mut calls = attention.calls.subscribe();
            let withdrawn = question.withdrawn.clone();
            if *calls.borrow_and_update() == 0 {
                withdrawn.cancel();
            }
            let answer = elicitor(question);
            Box::pin(async move {
                let _timing = Answering::start(&attention);
                let ended = async {
                    let _ = calls.wait_for(|calls| *calls == 0).await;
                    withdrawn.cancel();
                    std::future::pending::<Infallible>().await
                };
                tokio::select! {
                    answer = answer => answer,
                    never = ended => match never {},
                }
            })
        })
    }
}

/// A tool call running on a connection.
pub(super) struct CallGuard(Arc<Attention>);

impl Drop for CallGuard {
    fn drop(&mut self) {
        self.0
            .calls
            .send_modify(|calls| *calls = calls.saturating_sub(1));
    }
}

/// A question waiting for its answer, on the [`AnswerClock`].
struct Answering<'a>(&'a Attention);

impl<'a> Answering<'a> {
    fn start(attention: &'a Attention) -> Self {
        let mut clock = attention
            .clock
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        clock.open += 1;
        clock.since.get_or_insert_with(Instant::now);
        Self(attention)
    }
}

impl Drop for Answering<'_> {
    fn drop(&mut self) {
        let mut clock = self.0.clock.lock().unwrap_or_else(PoisonError::into_inner);
        clock.open = clock.open.saturating_sub(1);
        if clock.open == 0
            && let Some(since) = clock.since.take()
        {
            clock.total += since.elapsed();
        }
    }
}

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
    changes: Arc<AtomicU64>,
    elicitor: Option<Elicitor>,
    protocol_version: Option<ProtocolVersion>,
    /// Where `notifications/resources/updated` go.
    updates: Option<super::ResourceUpdates>,
}

impl HostHandler {
    /// A handler for the server `server`; each `tools/list_changed` adds one to `changes`.
    pub fn new(server: &str, changes: Arc<AtomicU64>) -> Self {
        Self {
            server: Arc::from(server),
            progress: Arc::default(),
            tools_changed: Arc::new(AtomicBool::new(false)),
            changes,
            elicitor: None,
            protocol_version: None,
            updates: None,
        }
    }

    /// With the resources the session subscribes to told of, as they change, to `updates`.
    #[must_use]
    pub fn with_resource_updates(mut self, updates: super::ResourceUpdates) -> Self {
        self.updates = Some(updates);
        self
    }

    /// Announcing `version` in `initialize` (a configuration that pins a revision with the
    /// handshake); `None`: [`PINNED_PROTOCOL_VERSION`].
    #[must_use]
    pub fn with_protocol_version(mut self, version: Option<ProtocolVersion>) -> Self {
        self.protocol_version = version;
        self
    }

    /// With `elicitor` answering the server's questions to the user (declared to the server
    /// as the elicitation capability).
    #[must_use]
    pub fn with_elicitor(mut self, elicitor: Option<Elicitor>) -> Self {
        self.elicitor = elicitor;
        self
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

    /// The transport tap that sees notifications in stream order (see
    /// [`crate::transport::ChildTransport::set_notification_tap`]): it routes
    /// `notifications/progress` to the registered callbacks and `resources/updated` to the
    /// resource updates, and marks the tools as changed on
    /// `notifications/tools/list_changed` before any response that follows it is delivered
    /// (rmcp's own handler runs on a task of its own, possibly later).
    pub fn tap(&self) -> crate::transport::NotificationTap {
        let routes = Arc::clone(&self.progress);
        let server = Arc::clone(&self.server);
        let tools_changed = Arc::clone(&self.tools_changed);
        let changes = Arc::clone(&self.changes);
        let updates = self.updates.clone();
        Arc::new(move |message: &serde_json::Value| {
            match message.get("method").and_then(serde_json::Value::as_str) {
                Some("notifications/progress") => {}
                // Either revision: `resources/subscribe`'s, or those of a `subscriptions/listen`
                // stream (which rmcp hands to the stream, not to the handler).
                Some("notifications/resources/updated") => {
                    if let Some(updates) = &updates {
                        updates.note(&server, message.get("params"));
                    }
                    return;
                }
                Some("notifications/tools/list_changed") => {
                    info!(server = %server, "server says its tools changed; they will be listed again");
                    tools_changed.store(true, Ordering::Release);
                    changes.fetch_add(1, Ordering::AcqRel);
                    return;
                }
                _ => return,
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

    /// Marks the tools as changed, so that they are listed again (a listing that failed).
    pub fn mark_tools_changed(&self) {
        self.tools_changed.store(true, Ordering::Release);
    }

    /// Whether the server said its tools changed since the last call; clears the flag.
    pub fn take_tools_changed(&self) -> bool {
        self.tools_changed.swap(false, Ordering::AcqRel)
    }

    /// A server's question (`elicitation/create`, or an input request of a 2026-07-28
    /// `InputRequiredResult`) put to the host's [`Elicitor`]; declined when nobody can be
    /// asked or it is not a form. `withdrawn` is cancelled once nobody waits for the answer.
    pub(super) async fn ask(
        &self,
        request: ElicitRequestParams,
        withdrawn: CancellationToken,
    ) -> ElicitResult {
        let (
            Some(elicitor),
            ElicitRequestParams::FormElicitationParams {
                message,
                requested_schema,
                ..
            },
        ) = (&self.elicitor, request)
        else {
            // Nobody to ask (or a URL to open, which this host does not do).
            info!(server = %self.server, "declined a server's question: nobody here can answer it");
            return ElicitResult::new(ElicitationAction::Decline);
        };
        // rmcp keeps the properties' order as the message has it (the transport types this
        // request from its text for that).
        let order = requested_schema
            .property_order
            .clone()
            .unwrap_or_else(|| requested_schema.properties.keys().cloned().collect());
        let question = Elicitation {
            server: self.server.to_string(),
            message,
            schema: serde_json::to_value(&requested_schema).unwrap_or_default(),
            order,
            withdrawn,
        };
        match elicitor(question).await {
            ElicitAnswer::Accept(content) => {
                ElicitResult::new(ElicitationAction::Accept).with_content(content)
            }
            ElicitAnswer::Decline => ElicitResult::new(ElicitationAction::Decline),
            ElicitAnswer::Cancel => ElicitResult::new(ElicitationAction::Cancel),
        }
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
        let mut capabilities = ClientCapabilities::default();
        if self.elicitor.is_some() {
            capabilities.elicitation =
                Some(ElicitationCapability::new().with_form(FormElicitationCapability::new()));
        }
        ClientConfig::new(
            capabilities,
            Implementation::new("mcp-client", env!("CARGO_PKG_VERSION")),
        )
        .with_protocol_version(
            self.protocol_version
                .clone()
                .unwrap_or(PINNED_PROTOCOL_VERSION),
        )
    }

    async fn create_elicitation(
        &self,
        request: ElicitRequestParams,
        context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        // Withdrawn with the server's notifications/cancelled for this request.
        Ok(self.ask(request, context.ct.child_token()).await)
    }

    async fn on_progress(
        &self,
        _params: ProgressNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        // Already routed, in stream order, by the transport tap (`progress_tap`).
    }

    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        // Already marked, in stream order, by the transport tap (`tap`).
    }
}

/// Hands one progress notification to its callback, or keeps it until one registers.
fn route(routes: &Mutex<ProgressRoutes>, server: &str, params: ProgressNotificationParam) {
    let progress = Progress {
        progress: params.progress,
        total: params.total,
        message: params
            .message
            .map(|message| cap_message(message, PROGRESS_MESSAGE_CAP)),
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

/// `message` cut to `cap` characters, with `…` when cut.
fn cap_message(message: String, cap: usize) -> String {
    match message.char_indices().nth(cap) {
        Some((end, _)) => format!("{}…", &message[..end]),
        None => message,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn handler() -> HostHandler {
        HostHandler::new("s", Arc::default())
    }

    fn progress(token: &str, message: String) -> serde_json::Value {
        serde_json::json!({
            "jsonrpc": "2.0",
            "method": "notifications/progress",
            "params": {"progressToken": token, "progress": 1, "message": message},
        })
    }

    #[test]
    fn early_progress_is_bounded_in_count_and_size() {
        let handler = handler();
        let tap = handler.tap();
        let huge = "x".repeat(4 * 1024 * 1024);
        for n in 0..1000 {
            tap(&progress(&format!("t{n}"), huge.clone()));
        }
        let routes = handler.progress.lock().unwrap();
        assert_eq!(routes.early.len(), EARLY_PROGRESS_KEPT);
        let kept: usize = routes
            .early
            .iter()
            .map(|(_, p)| p.message.as_ref().map_or(0, String::len))
            .sum();
        assert!(
            kept <= EARLY_PROGRESS_KEPT * (PROGRESS_MESSAGE_CAP + 3),
            "{kept} bytes kept"
        );
    }

    #[test]
    fn a_long_progress_message_is_cut_at_the_cap() {
        let handler = handler();
        let seen = Arc::new(Mutex::new(Vec::new()));
        let sink = Arc::clone(&seen);
        let _guard = handler.track_progress(
            ProgressToken(rmcp::model::NumberOrString::String("t".into())),
            Arc::new(move |p: Progress| sink.lock().unwrap().push(p.message.unwrap())),
        );
        handler.tap()(&progress("t", "é".repeat(5000)));
        let seen = seen.lock().unwrap();
        assert_eq!(seen[0].chars().count(), PROGRESS_MESSAGE_CAP + 1);
        assert!(seen[0].ends_with('…'));
    }

    #[test]
    fn tools_list_changed_is_marked_by_the_tap_and_counted() {
        let changes = Arc::new(AtomicU64::new(0));
        let handler = HostHandler::new("s", Arc::clone(&changes));
        handler.tap()(
            &serde_json::json!({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}),
        );
        assert!(handler.take_tools_changed());
        assert!(!handler.take_tools_changed());
        assert_eq!(changes.load(Ordering::Acquire), 1);
    }
}
