//! The connection task: one task owns the socket to zwave-js-server, connects (TCP, TLS for
//! `wss://`, the WebSocket handshake, each within a timeout), hands the open socket to a
//! [`Session`], and after it ends tells the link down, loses what it left unanswered and
//! connects again with the workspace's backoff.

use std::{
    sync::{Arc, Mutex, atomic::Ordering},
    time::Duration,
};

use tokio::sync::mpsc;
use tokio_tungstenite::tungstenite::protocol::WebSocketConfig;
use tracing::warn;

use super::{
    Link, Target, ZwaveJsServerError,
    heard::Heard,
    session::{Ended, Pending, Session},
    shared::{Request, Shared},
};
use crate::network::{
    Backoff, LinkState,
    core::{self, Core},
    now_ms,
};

/// Most bytes of one message from the server, as for one MQTT message (`MAX_PAYLOAD`): the
/// largest is the whole state (`start_listening`), some 8 KB per node recorded (124 KB for 15
/// nodes), so under 2 MB for a full network of 232 nodes. A larger frame ends the connection
/// before it is read. A frame is never built into a tree whole ([`protocol::read`]).
///
/// [`protocol::read`]: super::protocol::read
const MAX_MESSAGE: usize = 16 * 1024 * 1024;
/// The longest a TCP connection attempt, and then the WebSocket handshake, may take (as for
/// the MQTT broker).
const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);

/// The connection task: connect, listen, serve, and again after a failure.
pub(super) async fn run(
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
                    Some(request) => request.refuse(&target.url),
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
    let session = Session::new(shared, connection, pending, target, heard);
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

/// Every command still waiting: lost with its connection (its echo will not come on it).
fn lose(pending: &mut Pending, core: &Core) {
    for (_, written) in pending.drain() {
        if let Some(write) = &written.echo {
            core.forget_write(write);
        }
        let _ = written
            .reply
            .send(Err(ZwaveJsServerError::Lost(written.command)));
    }
}
