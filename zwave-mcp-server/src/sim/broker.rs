//! An embedded MQTT broker (rumqttd) on a free loopback port, for `--demo` and tests.
//!
//! rumqttd has no shutdown API, so the broker runs on its own thread for the rest of the
//! process' life.

use std::{
    io::{Read as _, Write as _},
    net::{SocketAddr, TcpListener, TcpStream},
    time::{Duration, Instant},
};

use serde_json::json;

/// Why the embedded broker did not start.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum BrokerError {
    /// No free loopback port could be found.
    #[error("cannot find a free loopback port for the embedded mqtt broker")]
    NoPort(#[source] std::io::Error),
    /// The broker's configuration was refused.
    #[error("the embedded mqtt broker rejected its configuration: {0}")]
    Config(String),
    /// The broker thread could not be started.
    #[error("cannot start the embedded mqtt broker thread")]
    Thread(#[source] std::io::Error),
    /// The broker did not accept connections in time.
    #[error("the embedded mqtt broker did not start listening on {0} within 5 s")]
    NotListening(SocketAddr),
}

/// Whether an MQTT 3.1.1 broker at `addr` accepts a connection (CONNECT → CONNACK 0).
/// A full handshake rather than a bare TCP connect, which the broker would log as an error.
fn answers_connect(addr: SocketAddr) -> bool {
    // CONNECT: protocol "MQTT" level 4, clean session, keep-alive 60 s, client id "probe".
    const CONNECT: [u8; 19] = [
        0x10, 17, 0, 4, b'M', b'Q', b'T', b'T', 4, 0x02, 0, 60, 0, 5, b'p', b'r', b'o', b'b', b'e',
    ];
    const DISCONNECT: [u8; 2] = [0xE0, 0];
    let Ok(mut stream) = TcpStream::connect_timeout(&addr, Duration::from_millis(200)) else {
        return false;
    };
    let _ = stream.set_read_timeout(Some(Duration::from_millis(500)));
    let mut connack = [0_u8; 4];
    let ok = stream.write_all(&CONNECT).is_ok()
        && stream.read_exact(&mut connack).is_ok()
        && connack[0] == 0x20
        && connack[3] == 0;
    let _ = stream.write_all(&DISCONNECT);
    ok
}

/// A running embedded broker.
#[derive(Debug, Clone, Copy)]
pub struct EmbeddedBroker {
    addr: SocketAddr,
}

impl EmbeddedBroker {
    /// Starts a broker on `127.0.0.1:<free port>` and waits until it accepts connections.
    ///
    /// # Errors
    /// [`BrokerError`] when no port is free or the broker does not come up within 5 s.
    pub fn start() -> Result<Self, BrokerError> {
        let addr = TcpListener::bind("127.0.0.1:0")
            .and_then(|listener| listener.local_addr())
            .map_err(BrokerError::NoPort)?;
        Self::start_on(addr)
    }

    /// Starts a broker on `addr` (tests use it to bring a broker back on the same port).
    ///
    /// # Errors
    /// As [`EmbeddedBroker::start`].
    pub fn start_on(addr: SocketAddr) -> Result<Self, BrokerError> {
        let config: rumqttd::Config = serde_json::from_value(json!({
            "id": 0,
            "router": {
                "max_connections": 1024,
                "max_outgoing_packet_count": 1024,
                "max_segment_size": 104_857_600,
                "max_segment_count": 10,
            },
            "v4": {
                "1": {
                    "name": "embedded",
                    "listen": addr.to_string(),
                    "next_connection_delay_ms": 1,
                    "connections": {
                        "connection_timeout_ms": 60_000,
                        "max_payload_size": 16 * 1024 * 1024,
                        "max_inflight_count": 256,
                        "dynamic_filters": true,
                    },
                },
            },
        }))
        .map_err(|err| BrokerError::Config(err.to_string()))?;
        std::thread::Builder::new()
            .name("mqtt-broker".into())
            .spawn(move || {
                let mut broker = rumqttd::Broker::new(config);
                if let Err(err) = broker.start() {
                    tracing::error!(error = %err, "embedded mqtt broker stopped");
                }
            })
            .map_err(BrokerError::Thread)?;
        let deadline = Instant::now() + Duration::from_secs(5);
        while !answers_connect(addr) {
            if Instant::now() > deadline {
                return Err(BrokerError::NotListening(addr));
            }
            std::thread::sleep(Duration::from_millis(1));
        }
        Ok(Self { addr })
    }

    /// The broker's address.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// `mqtt://127.0.0.1:<port>`.
    pub fn url(&self) -> crate::network::MqttUrl {
        crate::network::MqttUrl {
            host: self.addr.ip().to_string(),
            port: self.addr.port(),
            tls: false,
        }
    }
}
