//! `--demo`: the built-in simulated home, over a simulated zwave-js-server or the simulated
//! Z-Wave JS UI gateway on an embedded broker, and the failure of that home to appear. Only
//! here and in `simulate` does the wiring need [`crate::sim`].

use std::time::Duration;

use anyhow::Context as _;

use crate::{
    config::{Config, DemoBackend},
    network::{self, MqttSettings, Network, zwave_js_server::client::Target},
    sim,
};

/// The demo's simulator, kept for the session: it stops when dropped.
#[allow(dead_code, reason = "held, never read: its drop stops the simulator")]
pub(super) enum DemoHome {
    Mqtt(sim::SimGateway),
    ZwaveJsServer(sim::SimZwaveJsServer),
}

/// The home the session talks to; with the demo, also its simulator (it lives as long as the
/// session) and what completes if its home never appears.
pub(super) type Connected = (
    Network,
    Option<DemoHome>,
    Option<tokio::sync::oneshot::Receiver<()>>,
);

/// Starts the demo home the configuration asks for and the connection to it.
pub(super) async fn connect(config: &Config) -> anyhow::Result<Connected> {
    if config.demo.demo_backend == DemoBackend::ZwaveJsServer {
        let server = sim::SimZwaveJsServer::start(
            "127.0.0.1:0",
            home(config.demo.demo_nodes),
            sim::ReportDelays::default(),
        )
        .await
        .context("the demo's simulated zwave-js-server could not start")?;
        let target = Target::new(server.url(), None)
            .map_err(|reason| anyhow::anyhow!("the demo's server URL: {reason}"))?;
        tracing::info!(server = %server.url(), "starting: the demo home over a simulated zwave-js-server");
        let network = Network::connect_zwave_js_server(
            target,
            network::RECONNECT_BACKOFF,
            config.timeouts.api_timeout,
        );
        return Ok((network, Some(DemoHome::ZwaveJsServer(server)), None));
    }
    // The session starts at once; the network connects once the simulator has published its
    // home, so it loads one consistent snapshot instead of racing the first publications (a
    // tool called before then waits, as for any first connection).
    let broker = sim::EmbeddedBroker::start()?;
    let mut settings = MqttSettings::new(broker.url());
    settings.api_timeout = config.timeouts.api_timeout;
    let simulator = sim::SimGateway::start_with(
        &MqttSettings::new(broker.url()),
        sim::SimOptions::default(),
        home(config.demo.demo_nodes),
    );
    let (published, failed) = published(simulator.clone());
    tracing::info!(broker = %settings.url, prefix = %settings.topic_prefix, gateway = %settings.gateway_name, "starting");
    let network = Network::connect_after(settings, network::RECONNECT_BACKOFF, published);
    Ok((network, Some(DemoHome::Mqtt(simulator)), Some(failed)))
}

/// How long the demo's simulated gateway may take to publish its home.
const PUBLISH_TIMEOUT: Duration = Duration::from_secs(10);

/// Why `--demo` stops when its home never appeared.
pub(super) fn publish_failure() -> String {
    format!(
        "the simulated gateway did not publish its home to the embedded broker within {PUBLISH_TIMEOUT:?}"
    )
}

/// Waits in the background for the simulator to publish its home: the first future completes
/// when it has (or has failed to: the network then connects to what there is), the second only
/// when it failed within [`PUBLISH_TIMEOUT`].
fn published(
    simulator: sim::SimGateway,
) -> (
    impl Future<Output = ()> + Send + 'static,
    tokio::sync::oneshot::Receiver<()>,
) {
    let (published_tx, published_rx) = tokio::sync::oneshot::channel::<()>();
    let (failed_tx, failed_rx) = tokio::sync::oneshot::channel::<()>();
    tokio::spawn(async move {
        if simulator.wait_published(PUBLISH_TIMEOUT).await.is_ok() {
            tracing::info!("demo home ready: embedded broker and simulated gateway");
        } else {
            let _ = failed_tx.send(());
        }
        let _ = published_tx.send(());
    });
    (
        async move {
            let _ = published_rx.await;
        },
        failed_rx,
    )
}

/// The demo home, or a generated home of `nodes` nodes.
pub(super) fn home(nodes: Option<u16>) -> Vec<serde_json::Value> {
    let now = network::now_ms();
    match nodes {
        Some(nodes) => sim::home::sized_home(nodes, now),
        None => sim::home::demo_home(now),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A simulator that cannot reach its broker never publishes: after the timeout the network
    /// is let go (to find nothing) and the failure is announced, with this message.
    #[tokio::test(start_paused = true)]
    async fn a_demo_home_that_never_appears_fails_after_the_timeout_with_its_message() {
        let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = closed.local_addr().unwrap().port();
        drop(closed);
        let url: network::MqttUrl = format!("mqtt://127.0.0.1:{port}").parse().unwrap();
        let simulator = sim::SimGateway::start_with(
            &MqttSettings::new(url),
            sim::SimOptions::default(),
            home(None),
        );
        let started = tokio::time::Instant::now();
        let (published, failed) = published(simulator);
        assert!(failed.await.is_ok(), "the failure was not announced");
        assert!(started.elapsed() >= PUBLISH_TIMEOUT);
        published.await;
        assert_eq!(
            publish_failure(),
            "the simulated gateway did not publish its home to the embedded broker within 10s"
        );
    }
}
