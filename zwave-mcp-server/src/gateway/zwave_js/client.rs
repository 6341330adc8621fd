//! A connection to zwave-js-server that stays up: one task owns the socket, reconnects with
//! the workspace's backoff, and on every connection checks the API schema, asks for the whole
//! state (`start_listening`) and keeps the node cache current from the events; handles send
//! commands and get their results by `messageId`.
//!
//! A command is only ever sent on the connection that was up when it was asked for: one asked
//! for while the server is down is refused at once, and one whose connection drops before its
//! result comes is answered "lost (it may have been carried out)" — never sent again later.
//! `wss://` is checked against the CA given (the same PEM file as for `mqtts://`) or the
//! system's roots. The cache it keeps current is the backend-neutral core the tools read
//! ([`crate::gateway::Gateway`] holds a client when started with `--zwave-js-url`).

use std::{
    collections::HashMap,
    pin::Pin,
    sync::{
        Arc, Mutex,
        atomic::{AtomicU64, Ordering},
    },
    task::{Context, Poll},
    time::Duration,
};

use futures_util::{SinkExt as _, StreamExt as _};
use serde_json::{Value, json, value::RawValue};
use tokio::sync::{mpsc, oneshot, watch};
use tokio_tungstenite::tungstenite::{Bytes, Message, protocol::WebSocketConfig};
use tokio_util::sync::CancellationToken;
use tracing::{debug, info, warn};

use super::{
    events::{self, Applied},
    protocol::{self, Incoming, SCHEMA_VERSION, ServerFailure},
    state::nodes_from_result,
    url::ZwaveJsUrl,
};
use crate::gateway::{
    Backoff, LinkState, Nodes,
    core::{self, Core, InFlightWrite},
    now_ms,
};

/// Most bytes of one message from the server, as for one MQTT message (`MAX_PAYLOAD`): the
/// largest is the whole state (`start_listening`), some 8 KB per node recorded (124 KB for 15
/// nodes), so under 2 MB for a full network of 232 nodes. A larger frame ends the connection
/// before it is read. A frame is never built into a tree whole ([`protocol::read`]).
const MAX_MESSAGE: usize = 16 * 1024 * 1024;
/// Most bytes of a command's result other than the whole state: `node.set_value`'s and
/// `node.poll_value`'s are tens of bytes (`{"result":{"status":254}}`, `{"value":…}`; a polled
/// value is bounded as one value where it is stored), and `node.get_state`'s, one node's whole
/// state, some KiB (8 KiB a node in the recorded network).
const MAX_RESULT: usize = 1024 * 1024;
/// Commands waiting to be written.
const QUEUE: usize = 64;
/// The longest a TCP connection attempt, and then the WebSocket handshake, may take (as for
/// the MQTT broker).
const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);
/// How long after an unsupervised write's result its optimistic echo may still come. The
/// driver sends it a few milliseconds after the result; the device's own report (the
/// driver's verification Get) comes a second or more later (switches ~1.1 s, dimmers ~5 s,
/// `captures/confirm/FACTS.md`). Too short a window would take a late echo for a report, and
/// confirm a device that did nothing; too long a one, a real report for the echo (no
/// confirmation: the safe side). The echo, once seen, ends the window.
const ECHO_WINDOW: Duration = Duration::from_secs(1);
/// How often a ping goes to zwave-js-server (its `ws` library answers each with a pong).
const PING_EVERY: Duration = Duration::from_secs(5);
/// How long zwave-js-server may send nothing at all, not a byte, not even a pong, before the
/// connection is taken for dead and made again: three pings unanswered. A stopped process
/// (SIGSTOP, a hung event loop) or a host gone without a word keeps TCP open for hours; the
/// MQTT backend has rumqttc's keep-alive (30 s) for this. Bytes count, not whole messages: a
/// large network's whole state may take longer than this to arrive. A frame the socket does
/// not take within it is as dead.
const SILENT_FOR: Duration = Duration::from_secs(15);

/// Where zwave-js-server is: `ws://host:port` or `wss://host:port` (then checked against the
/// CA given, or the system's roots).
#[derive(Clone)]
pub struct Target {
    url: String,
    authority: String,
    host: String,
    tls: Option<Arc<rustls::ClientConfig>>,
    /// A ping every this long…
    ping_every: Duration,
    /// …and the connection given up after this long without a word from the server.
    silent_for: Duration,
}

impl std::fmt::Debug for Target {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.url)
    }
}

impl Target {
    /// Reads `url`; for `wss://`, `ca_pem` (PEM certificates) replaces the system's roots.
    ///
    /// # Errors
    /// Not a `ws://` or `wss://` URL with a host, or a CA without a certificate.
    pub fn new(url: &str, ca_pem: Option<&[u8]>) -> Result<Self, String> {
        Self::at(&url.parse()?, ca_pem)
    }

    /// zwave-js-server at `url`; for `wss://`, `ca_pem` (PEM certificates) replaces the
    /// system's roots.
    ///
    /// # Errors
    /// A CA without a certificate.
    pub fn at(url: &ZwaveJsUrl, ca_pem: Option<&[u8]>) -> Result<Self, String> {
        Ok(Self {
            url: url.as_str().to_owned(),
            authority: url.authority().to_owned(),
            host: url.host().to_owned(),
            tls: if url.is_tls() {
                Some(Arc::new(tls_config(ca_pem)?))
            } else {
                None
            },
            ping_every: PING_EVERY,
            silent_for: SILENT_FOR,
        })
    }

    /// Pings every `ping_every` (not zero), and gives the connection up after `silent_for`
    /// without a word from the server; 5 s and 15 s unless told (tests tell shorter).
    #[must_use]
    pub fn with_liveness(mut self, ping_every: Duration, silent_for: Duration) -> Self {
        self.ping_every = ping_every;
        self.silent_for = silent_for;
        self
    }
}

/// A TLS client configuration trusting `ca_pem`, or the system's roots.
fn tls_config(ca_pem: Option<&[u8]>) -> Result<rustls::ClientConfig, String> {
    use rustls::pki_types::{CertificateDer, pem::PemObject as _};
    let _ = rustls::crypto::ring::default_provider().install_default();
    let mut roots = rustls::RootCertStore::empty();
    match ca_pem {
        Some(pem) => {
            let certificates = CertificateDer::pem_slice_iter(pem).filter_map(Result::ok);
            let (usable, _) = roots.add_parsable_certificates(certificates);
            if usable == 0 {
                return Err("the CA file holds no usable PEM certificate".to_owned());
            }
        }
        None => {
            let found = rustls_native_certs::load_native_certs();
            roots.add_parsable_certificates(found.certs);
        }
    }
    Ok(rustls::ClientConfig::builder()
        .with_root_certificates(roots)
        .with_no_client_auth())
}

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

/// Why a command got no result.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum WsError {
    /// Not connected: nothing was sent.
    #[error(
        "cannot reach zwave-js-server at {url}: {why}; nothing was sent (is it running, with its WebSocket server on? check --zwave-js-url; reconnecting in the background)"
    )]
    Down {
        /// The server's URL.
        url: String,
        /// Why.
        why: String,
    },
    /// Too many commands wait to be written: this one was not sent.
    #[error(
        "`{command}` was not sent: {queued} commands are already waiting for zwave-js-server; try again in a moment"
    )]
    Busy {
        /// The command.
        command: String,
        /// The queue's size.
        queued: usize,
    },
    /// The connection dropped after the command was written.
    #[error(
        "the connection to zwave-js-server was lost before `{0}` was answered{after}",
        after = unanswered(.0)
    )]
    Lost(String),
    /// No result in time.
    #[error(
        "zwave-js-server did not answer `{command}` within {after:?}{}",
        unanswered(command)
    )]
    Timeout {
        /// The command.
        command: String,
        /// The limit.
        after: Duration,
    },
    /// The request it was for was cancelled before it was sent: nothing was sent.
    #[error("`{0}` was not sent: the request it was for was cancelled")]
    Cancelled(String),
    /// The server refused it.
    #[error("zwave-js-server refused `{command}`: {failure}")]
    Failed {
        /// The command.
        command: String,
        /// Its error code and message.
        failure: ServerFailure,
    },
}

/// Commands that only read the driver's state: unanswered, they changed nothing.
const READS: [&str; 3] = ["node.get_state", "node.poll_value", RELOAD];

/// What the caller of an unanswered `command` must know: one that only reads changed
/// nothing; any other may have been carried out.
fn unanswered(command: &str) -> &'static str {
    if READS.contains(&command) {
        ""
    } else {
        "; it may have been carried out"
    }
}

impl WsError {
    /// Whether the command was written and its result never came, so it may have been
    /// carried out (a read never changes anything).
    pub fn may_have_run(&self) -> bool {
        match self {
            Self::Lost(command) | Self::Timeout { command, .. } => {
                !READS.contains(&command.as_str())
            }
            Self::Down { .. } | Self::Busy { .. } | Self::Cancelled(_) | Self::Failed { .. } => {
                false
            }
        }
    }
}

struct Request {
    /// The connection it was asked for on: never written on another.
    connection: u64,
    command: String,
    message_id: String,
    text: String,
    /// A write, kept in flight by its caller from when it is asked for (`WriteInFlight`);
    /// settled here when answered or lost.
    echo: Option<InFlightWrite>,
    /// The request it is for: once cancelled, it is not sent (checked right before it is).
    cancelled: Option<CancellationToken>,
    reply: oneshot::Sender<Result<Value, WsError>>,
}

struct Shared {
    /// The backend-neutral core this connection feeds: nodes, values, the link's state.
    core: Arc<Core>,
    link: watch::Sender<Link>,
    /// Which connection is up (0: none yet); bumped on every connection.
    connection: AtomicU64,
    next_id: AtomicU64,
    /// Unique to this process, so ids never repeat across restarts.
    id_prefix: String,
    url: String,
}

/// A handle on the connection; cheap to clone.
#[derive(Clone)]
pub struct WsClient {
    shared: Arc<Shared>,
    requests: mpsc::Sender<Request>,
}

impl WsClient {
    /// Starts the connection task for `target`, with a cache of its own.
    pub fn connect(target: Target, backoff: Backoff) -> Self {
        Self::feeding(
            Arc::new(Core::new(crate::gateway::Backend::ZwaveJsServer)),
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
        tokio::spawn(run(target, backoff, Arc::clone(&shared), incoming));
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
    /// See [`WsError`].
    pub async fn reload(&self, timeout: Duration) -> Result<(), WsError> {
        self.request(RELOAD, json!({}), timeout).await.map(drop)
    }

    /// Sends `command` with `params` and waits at most `timeout` for its result.
    ///
    /// # Errors
    /// See [`WsError`].
    pub async fn request(
        &self,
        command: &str,
        params: Value,
        timeout: Duration,
    ) -> Result<Value, WsError> {
        self.send(command, params, None, None, timeout).await
    }

    /// Sends `node.set_value` with `params`, and waits at most `timeout` for its result.
    /// `echo`, the write as the cache knows it, is kept in flight from when it is asked for:
    /// zwave-js's optimistic echo (sent after an unsupervised write's result, before a
    /// supervised one's) is not taken for the device's report. Not sent once `cancelled` is
    /// ([`WsError::Cancelled`]): it is looked at right before the frame goes out.
    ///
    /// # Errors
    /// See [`WsError`].
    pub(crate) async fn write(
        &self,
        params: Value,
        echo: Option<InFlightWrite>,
        cancelled: &CancellationToken,
        timeout: Duration,
    ) -> Result<Value, WsError> {
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
    ) -> Result<Value, WsError> {
        if cancelled.is_some_and(CancellationToken::is_cancelled) {
            return Err(WsError::Cancelled(command.to_owned()));
        }
        let link = self.shared.link.borrow().clone();
        if !matches!(link, Link::Listening { .. }) {
            return Err(WsError::Down {
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
                return Err(WsError::Busy {
                    command: command.to_owned(),
                    queued: QUEUE,
                });
            }
            Err(mpsc::error::TrySendError::Closed(_)) => {
                flight.not_sent();
                return Err(WsError::Down {
                    url: self.shared.url.clone(),
                    why: "the connection task has stopped".to_owned(),
                });
            }
        }
        match tokio::time::timeout(timeout, answer).await {
            Ok(Ok(result)) => {
                // Refused by the task (its connection gone, or the request cancelled): never
                // sent. Any other answer, the task settled the write when it saw it.
                if matches!(result, Err(WsError::Down { .. } | WsError::Cancelled(_))) {
                    flight.not_sent();
                } else {
                    flight.settled();
                }
                result
            }
            // The task went without a word: it may have been sent; the guard keeps it for
            // the echo window, as after a timeout.
            Ok(Err(_)) => Err(WsError::Lost(command.to_owned())),
            Err(_) => Err(WsError::Timeout {
                command: command.to_owned(),
                after: timeout,
            }),
        }
    }
}

/// The command that reads the whole state; its result replaces the cache.
const RELOAD: &str = "start_listening";

/// The connection task: connect, listen, serve, and again after a failure.
async fn run(
    target: Target,
    backoff: Backoff,
    shared: Arc<Shared>,
    mut requests: mpsc::Receiver<Request>,
) {
    let mut failures = 0u32;
    loop {
        let connection = shared.connection.fetch_add(1, Ordering::SeqCst) + 1;
        shared.link.send_replace(Link::Connecting);
        let mut pending = Pending::new();
        let why = match serve(&target, &shared, connection, &mut requests, &mut pending).await {
            Ok(()) => return, // Every handle is gone.
            Err(Ended { why, listened }) => {
                if listened {
                    failures = 0;
                }
                why
            }
        };
        warn!(url = %target.url, error = %why, "zwave-js-server connection down");
        // Down first: a caller told its command was lost sees the link down.
        went_down(&shared, &why);
        lose(&mut pending, &shared.core);
        failures = failures.saturating_add(1);
        // Commands asked for on the lost connection are refused, never sent on the next.
        let wait = tokio::time::sleep(backoff.after(failures));
        tokio::pin!(wait);
        loop {
            tokio::select! {
                () = &mut wait => break,
                request = requests.recv() => match request {
                    Some(request) => refuse(request, &target.url),
                    None => return,
                },
            }
        }
    }
}

/// The link and the core say the connection is down, since now if it was up.
fn went_down(shared: &Shared, why: &str) {
    let since_ms = now_ms();
    shared.link.send_replace(Link::Down {
        since_ms,
        why: why.to_owned(),
    });
    {
        let mut state = core::write(&shared.core.state);
        if state.link == LinkState::Connected {
            state.link_down_since.get_or_insert(since_ms);
        }
        state.link = LinkState::Down {
            reason: why.to_owned(),
        };
        state.nodes_loaded = false;
    }
    shared.core.changed();
}

/// Commands written and not answered yet, by message id.
type Pending = HashMap<String, Written>;

/// A command written and not answered yet.
struct Written {
    command: String,
    /// The write kept in flight, for `node.set_value`.
    echo: Option<InFlightWrite>,
    reply: oneshot::Sender<Result<Value, WsError>>,
}

/// Why a connection ended, and whether it got as far as listening.
struct Ended {
    why: String,
    listened: bool,
}

fn refuse(request: Request, url: &str) {
    let _ = request.reply.send(Err(WsError::Down {
        url: url.to_owned(),
        why: "the connection it was asked on is gone".to_owned(),
    }));
}

/// One connection, from the handshake until it ends. `Ok` when every handle is gone.
/// Commands it leaves unanswered stay in `pending`, for the caller to tell them lost.
async fn serve(
    target: &Target,
    shared: &Shared,
    connection: u64,
    requests: &mut mpsc::Receiver<Request>,
    pending: &mut Pending,
) -> Result<(), Ended> {
    let ended = |why: String| Ended {
        why,
        listened: false,
    };
    let url = &target.url;
    // A host that drops packets would hold a connection attempt for minutes.
    let stream = tokio::time::timeout(
        CONNECT_TIMEOUT,
        tokio::net::TcpStream::connect(&target.authority),
    )
    .await
    .map_err(|_| {
        ended(format!(
            "cannot connect to {}: no answer within {CONNECT_TIMEOUT:?}",
            target.authority
        ))
    })?
    .map_err(|err| ended(format!("cannot connect to {}: {err}", target.authority)))?;
    let _ = stream.set_nodelay(true);
    let heard = Arc::new(Mutex::new(tokio::time::Instant::now()));
    let stream = Heard {
        stream,
        at: Arc::clone(&heard),
    };
    let session = Session {
        shared,
        connection,
        pending,
        ping_every: target.ping_every,
        silent_for: target.silent_for,
        heard,
        listened: false,
        reload_asked: false,
        versions: (String::new(), String::new()),
    };
    match &target.tls {
        None => {
            let socket = handshake(url, stream).await.map_err(ended)?;
            session.talk(socket, requests).await
        }
        Some(tls) => {
            let name =
                rustls::pki_types::ServerName::try_from(target.host.clone()).map_err(|err| {
                    ended(format!(
                        "{} cannot be checked against a certificate: {err}",
                        target.host
                    ))
                })?;
            let stream = tokio_rustls::TlsConnector::from(Arc::clone(tls))
                .connect(name, stream)
                .await
                .map_err(|err| ended(format!("TLS with {} failed: {err}", target.authority)))?;
            let socket = handshake(url, stream).await.map_err(ended)?;
            session.talk(socket, requests).await
        }
    }
}

/// The WebSocket handshake on an open stream, with the message size bounded.
async fn handshake<S>(url: &str, stream: S) -> Result<tokio_tungstenite::WebSocketStream<S>, String>
where
    S: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin,
{
    let config = WebSocketConfig::default()
        .max_message_size(Some(MAX_MESSAGE))
        .max_frame_size(Some(MAX_MESSAGE));
    tokio::time::timeout(
        CONNECT_TIMEOUT,
        tokio_tungstenite::client_async_with_config(url, stream, Some(config)),
    )
    .await
    .map_err(|_| {
        format!("the WebSocket handshake with {url} got no answer within {CONNECT_TIMEOUT:?}")
    })?
    .map(|(socket, _)| socket)
    .map_err(|err| format!("the WebSocket handshake with {url} failed: {err}"))
}

/// One open socket's conversation: the handshake (version, schema, the whole state), then
/// commands and events. The handshake's two commands use fixed ids: ids are per connection,
/// and nothing else is sent before they are answered.
struct Session<'a> {
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

impl Session<'_> {
    async fn talk<S>(
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
                        refuse(request, &self.shared.url);
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
                        let _ = request.reply.send(Err(WsError::Cancelled(request.command)));
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
                version.check().map_err(|why| self.ended(why))?;
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
                self.listening(result).map_err(|why| self.ended(why))?;
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
                                message: why,
                            }),
                        Ok(result) => command_result(result),
                        Err(failure) => Err(failure),
                    };
                    if let Some(write) = echo {
                        self.answered(&write, &outcome);
                    }
                    let _ =
                        reply.send(outcome.map_err(|failure| WsError::Failed { command, failure }));
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
    fn listening(&mut self, result: Option<&RawValue>) -> Result<(), String> {
        let mut nodes = nodes_from_result(result)?;
        {
            let mut state = core::write(&self.shared.core.state);
            // The driver's cache holds its optimistic values of writes the devices have not
            // confirmed: their last reports stay.
            self.shared.core.keep_reports(&mut nodes, &state.nodes);
            state.nodes = Nodes::new(nodes);
            state.nodes_loaded = true;
            state.refresh_error = None;
            state.link = LinkState::Connected;
            state.link_down_since = None;
        }
        self.shared.core.loaded();
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
        let applied = events::apply(&mut core::write(&core.state).nodes, event, now_ms());
        if applied == Applied::Changed {
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

/// The stream under the WebSocket, noting when a byte last came from the server.
struct Heard<S> {
    stream: S,
    at: Arc<Mutex<tokio::time::Instant>>,
}

impl<S: tokio::io::AsyncRead + Unpin> tokio::io::AsyncRead for Heard<S> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut tokio::io::ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let before = buf.filled().len();
        let read = Pin::new(&mut self.stream).poll_read(cx, buf);
        if matches!(read, Poll::Ready(Ok(()))) && buf.filled().len() > before {
            *core::lock(&self.at) = tokio::time::Instant::now();
        }
        read
    }
}

impl<S: tokio::io::AsyncWrite + Unpin> tokio::io::AsyncWrite for Heard<S> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        Pin::new(&mut self.stream).poll_write(cx, buf)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.stream).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.stream).poll_shutdown(cx)
    }
}

/// Every command still waiting: lost with its connection (its echo will not come on it).
fn lose(pending: &mut Pending, core: &Core) {
    for (_, written) in pending.drain() {
        if let Some(write) = &written.echo {
            core.forget_write(write);
        }
        let _ = written.reply.send(Err(WsError::Lost(written.command)));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_error_says_whether_the_command_may_have_run() {
        let said = |err: WsError| err.to_string();
        assert_eq!(
            said(WsError::Down {
                url: "ws://hub.local:3000".into(),
                why: "still connecting".into()
            }),
            "cannot reach zwave-js-server at ws://hub.local:3000: still connecting; nothing was sent (is it running, with its WebSocket server on? check --zwave-js-url; reconnecting in the background)"
        );
        assert_eq!(
            said(WsError::Busy {
                command: "node.set_value".into(),
                queued: 64
            }),
            "`node.set_value` was not sent: 64 commands are already waiting for zwave-js-server; try again in a moment"
        );
        assert_eq!(
            said(WsError::Lost("node.set_value".into())),
            "the connection to zwave-js-server was lost before `node.set_value` was answered; it may have been carried out"
        );
        assert_eq!(
            said(WsError::Timeout {
                command: "node.set_value".into(),
                after: Duration::from_secs(5)
            }),
            "zwave-js-server did not answer `node.set_value` within 5s; it may have been carried out"
        );
        // A read that was not answered changed nothing, and does not say otherwise.
        assert_eq!(
            said(WsError::Timeout {
                command: "node.get_state".into(),
                after: Duration::from_secs(5)
            }),
            "zwave-js-server did not answer `node.get_state` within 5s"
        );
        assert!(
            !WsError::Lost("node.get_state".into()).may_have_run()
                && WsError::Lost("node.set_value".into()).may_have_run()
        );
        assert_eq!(
            said(WsError::Cancelled("node.set_value".into())),
            "`node.set_value` was not sent: the request it was for was cancelled"
        );
        assert_eq!(
            said(WsError::Failed {
                command: "node.set_value".into(),
                failure: ServerFailure {
                    code: "zwave_error".into(),
                    message: "The node did not acknowledge the command (ZW0204)".into()
                }
            }),
            "zwave-js-server refused `node.set_value`: zwave_error: The node did not acknowledge the command (ZW0204)"
        );
    }
}
