//! One open socket's conversation with zwave-js-server ([`Session`]): the handshake (its
//! version and schema checked, the whole state read into the core), then commands written and
//! matched to their results by `messageId`, events applied to the cache, pings, and the end of
//! the connection when the server falls silent.

use std::{
    collections::HashMap,
    sync::{Arc, Mutex},
    time::Duration,
};

use futures_util::{SinkExt as _, StreamExt as _};
use serde_json::{Value, json, value::RawValue};
use tokio::sync::{mpsc, oneshot};
use tokio_tungstenite::tungstenite::{Bytes, Message};
use tokio_util::sync::CancellationToken;
use tracing::{debug, info, warn};

use super::{
    Link, Target, ZwaveJsServerError,
    events::{self, Applied},
    protocol::{self, Incoming, RELOAD, SCHEMA_VERSION, ServerFailure},
    shared::{ECHO_WINDOW, Request, Shared},
    state::{StateError, controller_statistics, nodes_from_result},
};
use crate::network::{
    LinkState, Nodes,
    core::{self, InFlightWrite},
    now_ms,
};

/// Most bytes of a command's result other than the whole state: `node.set_value`'s and
/// `node.poll_value`'s are tens of bytes (`{"result":{"status":254}}`, `{"value":…}`; a polled
/// value is bounded as one value where it is stored), and `node.get_state`'s, one node's whole
/// state, some KiB (8 KiB a node in the recorded network).
const MAX_RESULT: usize = 1024 * 1024;

/// Commands written and not answered yet, by message id.
pub(super) type Pending = HashMap<String, Written>;

/// A command written and not answered yet.
pub(super) struct Written {
    pub(super) command: String,
    /// The write kept in flight, for `node.set_value`.
    pub(super) echo: Option<InFlightWrite>,
    pub(super) reply: oneshot::Sender<Result<Value, ZwaveJsServerError>>,
}

/// Why a connection ended, and whether it got as far as listening.
pub(super) struct Ended {
    pub(super) why: String,
    pub(super) listened: bool,
}

/// One open socket's conversation: the handshake (version, schema, the whole state), then
/// commands and events. The handshake's two commands use fixed ids: ids are per connection,
/// and nothing else is sent before they are answered.
pub(super) struct Session<'a> {
    shared: &'a Shared,
    connection: u64,
    pending: &'a mut Pending,
    /// A ping every this long; the connection ends after `silent_for` without a byte.
    ping_every: Duration,
    silent_for: Duration,
    /// When the last byte came from the server.
    heard: Arc<Mutex<tokio::time::Instant>>,
    /// Whether the whole state has been read on this connection.
    listened: bool,
    /// Whether a reload for an event the cache could not place is under way.
    reload_asked: bool,
    /// The server's and the driver's versions.
    versions: (String, String),
}

/// What to send after a message.
type Reply = Option<String>;

impl<'a> Session<'a> {
    /// The conversation of connection number `connection`, to `target`, over a stream whose
    /// last byte from the server `heard` notes; commands written go to `pending`.
    pub(super) fn new(
        shared: &'a Shared,
        connection: u64,
        pending: &'a mut Pending,
        target: &Target,
        heard: Arc<Mutex<tokio::time::Instant>>,
    ) -> Self {
        Self {
            shared,
            connection,
            pending,
            ping_every: target.ping_every,
            silent_for: target.silent_for,
            heard,
            listened: false,
            reload_asked: false,
            versions: (String::new(), String::new()),
        }
    }

    /// Talks until the connection ends; `Ok` when every handle is gone.
    pub(super) async fn talk<S>(
        mut self,
        mut socket: tokio_tungstenite::WebSocketStream<S>,
        requests: &mut mpsc::Receiver<Request>,
    ) -> Result<(), Ended>
    where
        S: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin,
    {
        // Any byte from the server, of a pong too, says it is alive; a ping asks it to say
        // so. Its silence for `silent_for` (a stopped process: TCP stays open, nothing
        // answers, not even a ping) ends the connection, which is made again.
        let start = tokio::time::Instant::now();
        let mut ping = tokio::time::interval_at(start + self.ping_every, self.ping_every);
        ping.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        let silence = tokio::time::sleep_until(start + self.silent_for);
        tokio::pin!(silence);
        loop {
            tokio::select! {
                frame = socket.next() => {
                    let text = match frame {
                        Some(Ok(Message::Text(text))) => text,
                        Some(Ok(Message::Close(_))) | None => {
                            return Err(self.ended("the server closed the connection".to_owned()));
                        }
                        Some(Ok(_)) => continue,
                        Some(Err(err)) => {
                            return Err(self.ended(format!("the connection failed: {err}")));
                        }
                    };
                    if let Some(reply) = self.on_message(&text)? {
                        send(&mut socket, Message::text(reply), self.silent_for)
                            .await
                            .map_err(|why| self.ended(why))?;
                    }
                }
                request = requests.recv(), if self.listened => {
                    let Some(request) = request else { return Ok(()) };
                    if request.connection != self.connection {
                        request.refuse(&self.shared.url);
                        continue;
                    }
                    // Its caller stopped waiting while it queued (timed out, or gone): nobody
                    // would hear the answer, and a command never goes out late.
                    if request.reply.is_closed() {
                        debug!(command = %request.command, "not sending a command whose caller stopped waiting");
                        continue;
                    }
                    // The last moment a cancellation can stop it: after this, it is sent.
                    if request.cancelled.as_ref().is_some_and(CancellationToken::is_cancelled) {
                        debug!(command = %request.command, "not sending a command whose request was cancelled");
                        let _ = request.reply.send(Err(ZwaveJsServerError::Cancelled(request.command)));
                        continue;
                    }
                    // Commands whose callers stopped waiting: an answer, if one comes, goes to
                    // nobody, and their writes left flight with their callers.
                    self.pending.retain(|_, written| !written.reply.is_closed());
                    let sent = send(&mut socket, Message::text(request.text), self.silent_for).await;
                    // Written or not, its fate is now this connection's: lost if it ends.
                    let written = Written { command: request.command, echo: request.echo, reply: request.reply };
                    self.pending.insert(request.message_id, written);
                    sent.map_err(|why| self.ended(why))?;
                }
                _ = ping.tick() => {
                    self.pending.retain(|_, written| !written.reply.is_closed());
                    send(&mut socket, Message::Ping(Bytes::new()), self.silent_for)
                        .await
                        .map_err(|why| self.ended(why))?;
                }
                () = &mut silence => {
                    let heard = *core::lock(&self.heard);
                    if heard.elapsed() < self.silent_for {
                        silence.as_mut().reset(heard + self.silent_for);
                        continue;
                    }
                    return Err(self.ended(format!(
                        "zwave-js-server stopped answering: nothing from it, not even a pong, for {:?} (is it stopped or hung, or the network down?)",
                        self.silent_for
                    )));
                }
            }
        }
    }

    fn ended(&self, why: String) -> Ended {
        Ended {
            why,
            listened: self.listened,
        }
    }

    /// Handles one message from the server; what to send back, if anything.
    fn on_message(&mut self, text: &str) -> Result<Reply, Ended> {
        match protocol::read(text) {
            Ok(Incoming::Version(version)) => {
                version.check().map_err(|why| self.ended(why.to_string()))?;
                info!(server = %version.server, driver = %version.driver, "zwave-js-server connected");
                self.versions = (version.server, version.driver);
                Ok(Some(protocol::command(
                    "schema",
                    "set_api_schema",
                    json!({"schemaVersion": SCHEMA_VERSION}),
                )))
            }
            Ok(Incoming::Result {
                message_id,
                outcome,
            }) if message_id == "schema" => {
                outcome.map_err(|failure| {
                    self.ended(format!(
                        "set_api_schema {SCHEMA_VERSION} was refused: {failure}"
                    ))
                })?;
                Ok(Some(protocol::command("listen", RELOAD, json!({}))))
            }
            Ok(Incoming::Result {
                message_id,
                outcome,
            }) if message_id == "listen" => {
                let result = outcome.map_err(|failure| {
                    self.ended(format!("start_listening was refused: {failure}"))
                })?;
                self.listening(result)
                    .map_err(|why| self.ended(why.to_string()))?;
                Ok(None)
            }
            Ok(Incoming::Result {
                message_id,
                outcome,
            }) => {
                if let Some(Written {
                    command,
                    echo,
                    reply,
                }) = self.pending.remove(&message_id)
                {
                    let outcome = match outcome {
                        Ok(result) if command == RELOAD => self
                            .listening(result)
                            .map(|()| Value::Null)
                            .map_err(|why| ServerFailure {
                                code: "unreadable_state".to_owned(),
                                message: why.to_string(),
                            }),
                        Ok(result) => command_result(result),
                        Err(failure) => Err(failure),
                    };
                    if let Some(write) = echo {
                        self.answered(&write, &outcome);
                    }
                    let _ = reply.send(
                        outcome.map_err(|failure| ZwaveJsServerError::Failed { command, failure }),
                    );
                }
                Ok(None)
            }
            Ok(Incoming::Event(event)) => Ok(event.and_then(|event| self.on_event(event))),
            Err(err) => {
                warn!(error = %err, "a message from zwave-js-server that does not read");
                Ok(None)
            }
        }
    }

    /// A write was answered: an unsupervised success (254) is echoed after its result, so the
    /// write stays in flight a moment more; any other answer has been echoed, or never will.
    fn answered(&self, write: &InFlightWrite, outcome: &Result<Value, ServerFailure>) {
        let status = outcome.as_ref().ok().and_then(|result| {
            protocol::set_value_result(result)
                .get("status")
                .and_then(Value::as_i64)
        });
        if status == Some(254) {
            self.shared.core.expect_echo_within(write, ECHO_WINDOW);
        } else {
            self.shared.core.forget_write(write);
        }
    }

    /// The whole state (`start_listening`'s result) replaces the cache.
    fn listening(&mut self, result: Option<&RawValue>) -> Result<(), StateError> {
        let mut nodes = nodes_from_result(result)?;
        let controller = controller_statistics(result);
        {
            let mut state = core::write(&self.shared.core.state);
            // The driver's cache holds its optimistic values of writes the devices have not
            // confirmed: their last reports stay.
            self.shared.core.keep_reports(&mut nodes, &state.nodes);
            state.nodes = Nodes::new(nodes);
            state.nodes_loaded = true;
            state.reload_error = None;
            state.link = LinkState::Connected;
            state.link_down_since = None;
        }
        // Every event before this result came before the state it carries: older news.
        self.shared
            .core
            .loaded(std::time::Instant::now(), controller);
        self.shared.core.changed();
        self.reload_asked = false;
        if !self.listened {
            self.listened = true;
            self.shared.link.send_replace(Link::Listening {
                server: self.versions.0.clone(),
                driver: self.versions.1.clone(),
            });
        }
        Ok(())
    }

    /// Applies an event to the cache; a reload to send when the cache cannot place it.
    fn on_event(&mut self, event: &RawValue) -> Reply {
        let mut event = match events::read(event) {
            Ok(event) => event,
            Err(err) => {
                debug!(error = %err, "an event that does not read");
                return None;
            }
        };
        if let events::Event::Refused { node, key, why } = &event {
            warn!(%node, %key, %why, "refused a value zwave-js-server reported: not stored (the cache keeps the value it had)");
            return None;
        }
        let core = &self.shared.core;
        match &event {
            // Kept beside the cache, waking nobody; only a later `lastSeen` moves the node.
            events::Event::Statistics { node, statistics }
                if !core.record_statistics(*node, statistics.clone()) =>
            {
                return None;
            }
            events::Event::ControllerStatistics(statistics) => {
                core.record_controller_statistics(statistics.clone());
                return None;
            }
            events::Event::RefusedStatistics(why) => {
                debug!(%why, "refused statistics zwave-js-server sent: not kept");
                return None;
            }
            events::Event::Upkeep { node, signal } => {
                // Nobody listening is no error: nothing waits for it.
                let _ = core.upkeep_signals.send((*node, signal.clone()));
                return None;
            }
            _ => {}
        }
        if let events::Event::Value { node, key, value } = &event
            && core.is_echo(*node, key, value.as_ref())
        {
            debug!(%node, %key, "not storing zwave-js's optimistic echo of a write: it is not the device's report");
            return None;
        }
        match &mut event {
            events::Event::Value { node, key, .. } => core.reported(*node, key),
            // A node's whole state (re-interviewed): the driver's cache, like a reload.
            events::Event::Node(info) => {
                let cached = core::read(&core.state).nodes.get(&info.id).cloned();
                core.keep_reports_of(info, cached.as_ref());
            }
            _ => {}
        }
        let status = match &event {
            events::Event::Status { node, status } => Some((*node, status.clone())),
            events::Event::Node(info) => info.status.clone().map(|status| (info.id, status)),
            _ => None,
        };
        let applied = events::apply(&mut core::write(&core.state).nodes, event, now_ms());
        if applied == Applied::Changed {
            if let Some((node, status)) = status {
                core.saw_status(node, &status);
            }
            core.changed();
        }
        if applied == Applied::Unknown && self.listened && !self.reload_asked {
            // Something the cache does not know: read the whole state again.
            self.reload_asked = true;
            return Some(protocol::command("listen", RELOAD, json!({})));
        }
        None
    }
}

/// A command's result as a tree, when it is within [`MAX_RESULT`] (`Null`: none).
fn command_result(result: Option<&RawValue>) -> Result<Value, ServerFailure> {
    let Some(result) = result else {
        return Ok(Value::Null);
    };
    if result.get().len() > MAX_RESULT {
        return Err(ServerFailure {
            code: "oversized_result".to_owned(),
            message: format!(
                "{} bytes, over the {MAX_RESULT}-byte limit of a command's result; not read",
                result.get().len()
            ),
        });
    }
    serde_json::from_str(result.get()).map_err(|err| ServerFailure {
        code: "unreadable_result".to_owned(),
        message: err.to_string(),
    })
}

/// Sends `message`; a server that takes nothing for `silent_for` (its socket buffer full: it
/// stopped reading) is as silent as one that sends nothing.
async fn send<S>(
    socket: &mut tokio_tungstenite::WebSocketStream<S>,
    message: Message,
    silent_for: Duration,
) -> Result<(), String>
where
    S: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin,
{
    match tokio::time::timeout(silent_for, socket.send(message)).await {
        Ok(sent) => sent.map_err(|err| format!("cannot send to zwave-js-server: {err}")),
        Err(_) => Err(format!(
            "zwave-js-server stopped answering: it took nothing from us for {silent_for:?} (is it stopped or hung, or the network down?)"
        )),
    }
}
