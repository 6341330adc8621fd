//! One connection to the simulated zwave-js-server: the `version` message, then each command
//! answered in order (late, when a knob says so) and every listener's events, until the client
//! goes or the server stops; a frozen server touches nothing.

use std::{
    sync::{Arc, atomic::Ordering},
    time::Duration,
};

use futures_util::{SinkExt as _, StreamExt as _};
use serde_json::{Value, json};
use tokio::{net::TcpListener, sync::broadcast};
use tokio_tungstenite::tungstenite::Message;
use tracing::{debug, warn};

use super::{commands::answer, shared::ServerSim, state::HOME_ID};
use crate::sim::state::lock;

/// The versions the simulated server gives (those of the recorded sessions).
const SERVER_VERSION: &str = "3.10.2";
const DRIVER_VERSION: &str = "15.29.0";

pub(super) async fn accept(listener: TcpListener, sim: Arc<ServerSim>) {
    while let Ok((stream, _)) = listener.accept().await {
        if !sim.running.load(Ordering::SeqCst) {
            // As a server that is down: the connection goes at once.
            drop(stream);
            continue;
        }
        let _ = stream.set_nodelay(true);
        let sim = Arc::clone(&sim);
        tokio::spawn(async move {
            // A frozen process does not get to the WebSocket handshake.
            let _ = sim.frozen.subscribe().wait_for(|frozen| !*frozen).await;
            match tokio_tungstenite::accept_async(stream).await {
                Ok(socket) => serve(socket, &sim).await,
                Err(err) => debug!(error = %err, "a WebSocket handshake failed"),
            }
        });
    }
}

type Socket = tokio_tungstenite::WebSocketStream<tokio::net::TcpStream>;

/// One client, until it goes or the server stops.
async fn serve(mut socket: Socket, sim: &Arc<ServerSim>) {
    let id = sim.next_connection.fetch_add(1, Ordering::SeqCst);
    let mut generation = sim.generation.subscribe();
    let mut frozen = sim.frozen.subscribe();
    let mut events = sim.events.subscribe();
    let mut direct = sim.direct.subscribe();
    let mut listening = false;
    let version = json!({"type": "version", "driverVersion": DRIVER_VERSION,
        "serverVersion": SERVER_VERSION, "homeId": HOME_ID,
        "minSchemaVersion": 0, "maxSchemaVersion": 50});
    if socket
        .send(Message::text(version.to_string()))
        .await
        .is_err()
    {
        return;
    }
    loop {
        // Frozen: the socket stays open, untouched, until thawed or the server stops.
        while *frozen.borrow_and_update() {
            tokio::select! {
                changed = frozen.changed() => if changed.is_err() { return },
                _ = generation.changed() => return,
            }
        }
        let outgoing = tokio::select! {
            _ = generation.changed() => return,
            Ok(()) = frozen.changed() => continue,
            frame = socket.next() => match frame {
                Some(Ok(Message::Text(text))) => {
                    let outgoing = answer(sim, id, &text, &mut listening);
                    if let Some(delay) = delay_of(sim, &text) {
                        tokio::time::sleep(delay).await;
                    }
                    outgoing
                }
                Some(Ok(Message::Close(_)) | Err(_)) | None => return,
                Some(Ok(_)) => continue,
            },
            message = direct.recv() => match message {
                Ok((to, message)) if to == id => vec![message],
                Ok(_) | Err(broadcast::error::RecvError::Lagged(_)) => continue,
                Err(broadcast::error::RecvError::Closed) => return,
            },
            event = events.recv() => match event {
                Ok((origin, _)) if origin == id || !listening => continue,
                Ok((_, event)) => vec![event],
                Err(broadcast::error::RecvError::Lagged(missed)) => {
                    warn!(missed, "a client of the simulated zwave-js-server missed events");
                    continue;
                }
                Err(broadcast::error::RecvError::Closed) => return,
            },
        };
        for message in outgoing {
            if socket.send(Message::text(message)).await.is_err() {
                return;
            }
        }
    }
}

/// How late the answer to the command `text` comes, if late.
fn delay_of(sim: &ServerSim, text: &str) -> Option<Duration> {
    let command = serde_json::from_str::<Value>(text).ok()?;
    let name = command.get("command")?.as_str()?;
    lock(&sim.knobs).delays.get(name).copied()
}
