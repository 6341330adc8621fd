//! A connection to zwave-js-server that stays up: one task owns the socket, reconnects with
//! the workspace's backoff, and on every connection checks the API schema, asks for the whole
//! state (`start_listening`) and keeps the node cache current from the events; handles send
//! commands and get their results by `messageId`.
//!
//! A command is only ever sent on the connection that was up when it was asked for: one asked
//! for while the server is down is refused at once, and one whose connection drops before its
//! result comes is answered "lost (it may have been carried out)" — never sent again later.
//! `wss://` is checked against the CA given (the same PEM file as for `mqtts://`) or the
//! system's roots. (The seam to the tools comes next, issue 24.)

use std::{
    collections::HashMap,
    sync::{
        Arc, RwLock,
        atomic::{AtomicU64, Ordering},
    },
    time::Duration,
};

use futures_util::{SinkExt as _, StreamExt as _};
use serde_json::{Value, json};
use tokio::sync::{mpsc, oneshot, watch};
use tokio_tungstenite::tungstenite::{Message, protocol::WebSocketConfig};
use tracing::{debug, info, warn};

use super::{
    events::{self, Applied},
    protocol::{self, Incoming, SCHEMA_VERSION, ServerFailure},
    state::nodes_from_state,
};
use crate::gateway::{Backoff, Nodes, now_ms};

/// Most bytes of one message from the server: a large network's whole state fits.
const MAX_MESSAGE: usize = 64 * 1024 * 1024;
/// Commands waiting to be written.
const QUEUE: usize = 64;

/// Where zwave-js-server is: `ws://host:port` or `wss://host:port` (then checked against the
/// CA given, or the system's roots).
#[derive(Clone)]
pub struct Target {
    url: String,
    authority: String,
    host: String,
    tls: Option<Arc<rustls::ClientConfig>>,
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
        let (tls, rest) = if let Some(rest) = url.strip_prefix("ws://") {
            (false, rest)
        } else if let Some(rest) = url.strip_prefix("wss://") {
            (true, rest)
        } else {
            return Err(format!(
                "{url:?} is not a WebSocket URL: expected ws://host:port or wss://host:port (zwave-js-server listens on 3000)"
            ));
        };
        let authority = rest.split('/').next().unwrap_or_default();
        let (host, port) = match authority.rsplit_once(':') {
            Some((host, port)) if !port.is_empty() => (host, port),
            _ => (authority, if tls { "443" } else { "80" }),
        };
        if host.is_empty() || port.parse::<u16>().is_err() {
            return Err(format!(
                "{url:?} has no usable host and port: expected e.g. ws://192.168.1.10:3000"
            ));
        }
        let host = host
            .trim_start_matches('[')
            .trim_end_matches(']')
            .to_owned();
        Ok(Self {
            url: url.to_owned(),
            authority: if host.contains(':') {
                format!("[{host}]:{port}")
            } else {
                format!("{host}:{port}")
            },
            tls: if tls {
                Some(Arc::new(tls_config(ca_pem)?))
            } else {
                None
            },
            host,
        })
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
    #[error("zwave-js-server is not connected ({0}); nothing was sent")]
    Down(String),
    /// The connection dropped after the command was written.
    #[error(
        "the connection to zwave-js-server was lost before `{0}` was answered; it may have been carried out"
    )]
    Lost(String),
    /// No result in time.
    #[error(
        "zwave-js-server did not answer `{command}` within {after:?}; it may have been carried out"
    )]
    Timeout {
        /// The command.
        command: String,
        /// The limit.
        after: Duration,
    },
    /// The server refused it.
    #[error("zwave-js-server refused `{command}`: {failure}")]
    Failed {
        /// The command.
        command: String,
        /// Its error code and message.
        failure: ServerFailure,
    },
}

struct Request {
    /// The connection it was asked for on: never written on another.
    connection: u64,
    command: String,
    text: String,
    reply: oneshot::Sender<Result<Value, WsError>>,
}

struct Shared {
    nodes: RwLock<Nodes>,
    /// Bumped on every change of the cache, so waiters can look again.
    changes: watch::Sender<u64>,
    link: watch::Sender<Link>,
    /// Which connection is up (0: none yet); bumped on every connection.
    connection: AtomicU64,
    next_id: AtomicU64,
    /// Unique to this process, so ids never repeat across restarts.
    id_prefix: String,
}

/// A handle on the connection; cheap to clone.
#[derive(Clone)]
pub struct WsClient {
    shared: Arc<Shared>,
    requests: mpsc::Sender<Request>,
}

impl WsClient {
    /// Starts the connection task for `target`.
    pub fn connect(target: Target, backoff: Backoff) -> Self {
        let (link, _) = watch::channel(Link::Connecting);
        let shared = Arc::new(Shared {
            nodes: RwLock::new(Nodes::default()),
            changes: watch::channel(0).0,
            link,
            connection: AtomicU64::new(0),
            next_id: AtomicU64::new(0),
            id_prefix: format!("zm-{}-{}", std::process::id(), now_ms()),
        });
        let (requests, incoming) = mpsc::channel(QUEUE);
        tokio::spawn(run(target, backoff, Arc::clone(&shared), incoming));
        Self { shared, requests }
    }

    /// Where the connection stands, and its changes.
    pub fn link(&self) -> watch::Receiver<Link> {
        self.shared.link.subscribe()
    }

    /// A counter bumped on every change of the node cache.
    pub fn changes(&self) -> watch::Receiver<u64> {
        self.shared.changes.subscribe()
    }

    /// Reads the node cache.
    pub fn with_nodes<R>(&self, read: impl FnOnce(&Nodes) -> R) -> R {
        read(
            &self
                .shared
                .nodes
                .read()
                .unwrap_or_else(std::sync::PoisonError::into_inner),
        )
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
        let link = self.shared.link.borrow().clone();
        if !matches!(link, Link::Listening { .. }) {
            return Err(WsError::Down(match link {
                Link::Down { why, .. } => why,
                _ => "still connecting".to_owned(),
            }));
        }
        let id = self.shared.next_id.fetch_add(1, Ordering::Relaxed) + 1;
        let message_id = format!("{}-{id}", self.shared.id_prefix);
        let (reply, answer) = oneshot::channel();
        let request = Request {
            connection: self.shared.connection.load(Ordering::SeqCst),
            command: command.to_owned(),
            text: protocol::command(&message_id, command, params),
            reply,
        };
        if self.requests.send(request).await.is_err() {
            return Err(WsError::Down("the connection task has stopped".to_owned()));
        }
        match tokio::time::timeout(timeout, answer).await {
            Ok(Ok(result)) => result,
            Ok(Err(_)) => Err(WsError::Lost(command.to_owned())),
            Err(_) => Err(WsError::Timeout {
                command: command.to_owned(),
                after: timeout,
            }),
        }
    }
}

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
        shared.link.send_replace(Link::Down {
            since_ms: now_ms(),
            why,
        });
        lose(&mut pending);
        failures = failures.saturating_add(1);
        // Commands asked for on the lost connection are refused, never sent on the next.
        let wait = tokio::time::sleep(backoff.after(failures));
        tokio::pin!(wait);
        loop {
            tokio::select! {
                () = &mut wait => break,
                request = requests.recv() => match request {
                    Some(request) => refuse(request),
                    None => return,
                },
            }
        }
    }
}

/// Commands written and not answered yet, by message id: the command and its caller.
type Pending = HashMap<String, (String, oneshot::Sender<Result<Value, WsError>>)>;

/// Why a connection ended, and whether it got as far as listening.
struct Ended {
    why: String,
    listened: bool,
}

fn refuse(request: Request) {
    let _ = request.reply.send(Err(WsError::Down(
        "the connection it was asked on is gone".to_owned(),
    )));
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
    let stream = tokio::net::TcpStream::connect(&target.authority)
        .await
        .map_err(|err| ended(format!("cannot connect to {}: {err}", target.authority)))?;
    let _ = stream.set_nodelay(true);
    match &target.tls {
        None => {
            let socket = handshake(url, stream).await.map_err(ended)?;
            talk(socket, shared, connection, requests, pending).await
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
            talk(socket, shared, connection, requests, pending).await
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
    tokio_tungstenite::client_async_with_config(url, stream, Some(config))
        .await
        .map(|(socket, _)| socket)
        .map_err(|err| format!("the WebSocket handshake with {url} failed: {err}"))
}

/// The conversation on one open socket.
async fn talk<S>(
    mut socket: tokio_tungstenite::WebSocketStream<S>,
    shared: &Shared,
    connection: u64,
    requests: &mut mpsc::Receiver<Request>,
    pending: &mut Pending,
) -> Result<(), Ended>
where
    S: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin,
{
    let mut listened = false;
    let mut reload_asked = false;
    // The handshake: version, schema, the whole state; then commands and events.
    let mut versions = (String::new(), String::new());
    loop {
        tokio::select! {
            frame = socket.next() => {
                let text = match frame {
                    Some(Ok(Message::Text(text))) => text,
                    Some(Ok(Message::Close(_))) | None => {
                        return Err(Ended { why: "the server closed the connection".to_owned(), listened });
                    }
                    Some(Ok(_)) => continue,
                    Some(Err(err)) => {
                        return Err(Ended { why: format!("the connection failed: {err}"), listened });
                    }
                };
                match protocol::read(&text) {
                    Ok(Incoming::Version(version)) => {
                        version.check().map_err(|why| Ended { why, listened })?;
                        info!(server = %version.server, driver = %version.driver, "zwave-js-server connected");
                        let schema = protocol::command("schema", "set_api_schema", json!({"schemaVersion": SCHEMA_VERSION}));
                        send(&mut socket, schema).await.map_err(|why| Ended { why, listened })?;
                        versions = (version.server, version.driver);
                    }
                    Ok(Incoming::Result { message_id, outcome }) if message_id == "schema" => {
                        outcome.map_err(|failure| Ended { why: format!("set_api_schema {SCHEMA_VERSION} was refused: {failure}"), listened })?;
                        send(&mut socket, protocol::command("listen", "start_listening", json!({}))).await.map_err(|why| Ended { why, listened })?;
                    }
                    Ok(Incoming::Result { message_id, outcome }) if message_id == "listen" => {
                        let state = outcome.map_err(|failure| Ended { why: format!("start_listening was refused: {failure}"), listened })?;
                        let nodes = nodes_from_state(state.get("state").unwrap_or(&Value::Null))
                            .map_err(|why| Ended { why, listened })?;
                        *shared.nodes.write().unwrap_or_else(std::sync::PoisonError::into_inner) = Nodes::new(nodes);
                        shared.changes.send_modify(|count| *count += 1);
                        reload_asked = false;
                        if !listened {
                            listened = true;
                            shared.link.send_replace(Link::Listening {
                                server: versions.0.clone(),
                                driver: versions.1.clone(),
                            });
                        }
                    }
                    Ok(Incoming::Result { message_id, outcome }) => {
                        if let Some((command, reply)) = pending.remove(&message_id) {
                            let _ = reply.send(outcome.map_err(|failure| WsError::Failed { command, failure }));
                        }
                    }
                    Ok(Incoming::Event(event)) => match events::read(&event) {
                        Ok(event) => {
                            let applied = events::apply(
                                &mut shared.nodes.write().unwrap_or_else(std::sync::PoisonError::into_inner),
                                event,
                                now_ms(),
                            );
                            if applied == Applied::Changed {
                                shared.changes.send_modify(|count| *count += 1);
                            }
                            if applied == Applied::Unknown && listened && !reload_asked {
                                // Something the cache does not know: read the whole state again.
                                reload_asked = true;
                                send(&mut socket, protocol::command("listen", "start_listening", json!({}))).await.map_err(|why| Ended { why, listened })?;
                            }
                        }
                        Err(err) => debug!(error = %err, "an event that does not read"),
                    },
                    Err(err) => warn!(error = %err, "a message from zwave-js-server that does not read"),
                }
            }
            request = requests.recv(), if listened => {
                let Some(request) = request else { return Ok(()) };
                if request.connection != connection {
                    refuse(request);
                    continue;
                }
                let message_id = serde_json::from_str::<Value>(&request.text)
                    .ok()
                    .and_then(|sent| sent.get("messageId").and_then(Value::as_str).map(str::to_owned))
                    .unwrap_or_default();
                if let Err(why) = send(&mut socket, request.text).await {
                    pending.insert(message_id, (request.command, request.reply));
                    return Err(Ended { why, listened });
                }
                pending.insert(message_id, (request.command, request.reply));
            }
        }
    }
}

async fn send<S>(
    socket: &mut tokio_tungstenite::WebSocketStream<S>,
    text: String,
) -> Result<(), String>
where
    S: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin,
{
    socket
        .send(Message::text(text))
        .await
        .map_err(|err| format!("cannot send to zwave-js-server: {err}"))
}

/// Every command still waiting: lost with its connection.
fn lose(pending: &mut Pending) {
    for (_, (command, reply)) in pending.drain() {
        let _ = reply.send(Err(WsError::Lost(command)));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_error_says_whether_the_command_may_have_run() {
        let said = |err: WsError| err.to_string();
        assert_eq!(
            said(WsError::Down("still connecting".into())),
            "zwave-js-server is not connected (still connecting); nothing was sent"
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
