//! An MCP stdio server that lets AI agents list, read and control the Z-Wave devices of a home
//! run by Z-Wave JS, through Z-Wave JS UI's MQTT gateway or zwave-js-server's WebSocket API.
//!
//! ```text
//! MCP host ──stdin/stdout (JSON-RPC)──▶ mcp (rmcp tools)
//!                                        └─▶ devices (names, kinds, actions, readings)
//!                                              └─▶ gateway (the core: live cache, link state)
//!                                                    ├─ mqtt ──▶ broker ──▶ Z-Wave JS UI
//!                                                    └─ zwave_js ──WebSocket──▶ zwave-js-server
//!                       (a real home, or sim: --demo, simulate, the tests)
//! ```
//!
//! # Layout
//! - `config`: flags and `ZWAVE_MCP_*` environment variables (clap).
//! - [`logging`]: tracing to stderr and an optional daily file; never stdout.
//! - `stdio`: the protocol's private stdin/stdout; fd 1 pointed at stderr.
//! - `mcp`: the rmcp server, its four tools and their typed errors, the stdio transport.
//! - [`devices`]: pure domain logic: device kinds, name resolution, actions, readings.
//! - [`gateway`]: the backend-neutral core (cache, link state, the write path's rules) and its
//!   two backends, [`gateway::mqtt`] (Z-Wave JS UI's MQTT API, topics ↔ values) and
//!   [`gateway::zwave_js`] (zwave-js-server's WebSocket API).
//! - [`sim`]: an embedded MQTT broker, a simulated Z-Wave JS UI gateway and a simulated
//!   zwave-js-server (demo and tests), over the same simulated devices; they build what they
//!   send with their own code, not the backends'.
//!
//! `config`, `stdio` and `mcp` are private: the binary and the tests reach them through
//! [`run`], [`Config`] and [`ZwaveServer`]. The reconnection backoff and the duration grammar
//! come from the workspace's `common` crate, shared with the client.

mod config;
pub mod devices;
pub mod gateway;
pub mod logging;
mod mcp;
pub mod sim;
mod transport;

use std::time::Duration;

use anyhow::Context as _;
use rmcp::ServiceExt as _;

pub use config::{Command, Config, ConfigError, DemoBackend};
pub use gateway::{Backoff, Gateway, GatewayError, MqttSettings};
pub use mcp::{SensitivePolicy, ZwaveServer};

/// Runs what `config` asks for: the MCP server on stdio (default), against the embedded demo
/// home with `--demo`, or only the simulated gateway with `simulate`.
///
/// # Errors
/// Start-up failures (bad configuration, the demo broker not starting, stdio unusable).
pub async fn run(config: Config) -> anyhow::Result<()> {
    match config.command {
        Some(Command::Simulate {
            topic_type,
            payload_type,
            nodes,
            storm,
            ref stuck,
            ref supervised,
            ref ws,
        }) => {
            let devices = SimDevices {
                stuck: stuck.clone(),
                supervised: supervised.clone(),
            };
            match ws {
                Some(address) => simulate_zwave_js(address, nodes, devices).await,
                None => simulate(&config, topic_type, payload_type, nodes, storm, devices).await,
            }
        }
        None => serve(config).await,
    }
}

async fn serve(config: Config) -> anyhow::Result<()> {
    let exposure = config.exposure()?;
    // Take the protocol pipes first: from here on a stray write to fd 1 goes to stderr.
    let io = transport::stdio::take();
    // The demo's simulator lives as long as this function: until the MCP session ends.
    let (gateway, _simulator, demo_failed) = connect(&config).await?;
    let audit = devices::RuleAudit::new(exposure.clone());
    let sensitive = config.sensitive();
    let marks = sensitive.devices.clone();
    if audit.has_rules() || !marks.is_empty() {
        let audit = std::sync::Mutex::new(audit);
        gateway.on_nodes_loaded(move |nodes| {
            let mut audit = audit
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            for warning in audit.check(nodes.values()) {
                tracing::warn!("{warning}");
            }
            // A mark that matches nothing (a typo) protects nothing: say so, as for exposure.
            for rule in &marks {
                if !nodes
                    .values()
                    .any(|node| devices::is_device(node) && rule.matches(node))
                {
                    tracing::warn!(
                        "--sensitive-device rule \"{rule}\" matches no device: check it against list_zwave_devices, or name the device by node:<id>"
                    );
                }
            }
        });
    }
    let server = ZwaveServer::new(gateway, config.timeouts.confirm_timeout)
        .with_exposure(exposure)
        .with_limits(config.limits())
        .with_sensitive(sensitive);
    let (reader, writer) = io;
    let transport = transport::bounded::Bounded::new(
        transport::line::LineTransport::new(reader, writer),
        transport::bounded::MAX_IN_FLIGHT,
    );
    let running = server
        .serve(transport)
        .await
        .context("the MCP session could not start")?;
    // Completes only when the demo home failed to appear; otherwise never.
    let failed = async {
        let failed = match demo_failed {
            Some(failed) => failed.await.is_ok(),
            None => false,
        };
        if !failed {
            std::future::pending::<()>().await;
        }
    };
    let reason = tokio::select! {
        reason = running.waiting() => reason.context("the MCP session failed")?,
        () = failed => anyhow::bail!(demo_publish_failure()),
    };
    tracing::info!(?reason, "MCP session ended");
    Ok(())
}

/// Starts the connection to the home the configuration names: zwave-js-server
/// (`--zwave-js-url`), the MQTT gateway, or the demo home. With the demo, also its simulator
/// (it lives as long as the session) and what completes if its home never appears.
async fn connect(
    config: &Config,
) -> anyhow::Result<(
    Gateway,
    Option<DemoHome>,
    Option<tokio::sync::oneshot::Receiver<()>>,
)> {
    if let Some(target) = config.zwave_js()? {
        tracing::info!(server = ?target, "starting");
        let gateway = Gateway::connect_zwave_js(
            target,
            gateway::RECONNECT_BACKOFF,
            config.timeouts.api_timeout,
        );
        return Ok((gateway, None, None));
    }
    if !config.demo.demo {
        let settings = config.mqtt()?;
        tracing::info!(broker = %settings.url, prefix = %settings.topic_prefix, gateway = %settings.gateway_name, "starting");
        return Ok((
            Gateway::connect(settings, gateway::RECONNECT_BACKOFF),
            None,
            None,
        ));
    }
    if config.demo.demo_backend == DemoBackend::ZwaveJs {
        let server = sim::SimZwaveJsServer::start(
            "127.0.0.1:0",
            home(config.demo.demo_nodes),
            sim::ReportDelays::default(),
        )
        .await
        .context("the demo's simulated zwave-js-server could not start")?;
        let target = gateway::zwave_js::client::Target::new(server.url(), None)
            .map_err(|reason| anyhow::anyhow!("the demo's server URL: {reason}"))?;
        tracing::info!(server = %server.url(), "starting: the demo home over a simulated zwave-js-server");
        let gateway = Gateway::connect_zwave_js(
            target,
            gateway::RECONNECT_BACKOFF,
            config.timeouts.api_timeout,
        );
        return Ok((gateway, Some(DemoHome::ZwaveJs(server)), None));
    }
    // The session starts at once; the gateway connects once the simulator has published its
    // home, so it loads one consistent snapshot instead of racing the first publications (a
    // tool called before then waits, as for any first connection).
    let broker = sim::EmbeddedBroker::start()?;
    let mut settings = MqttSettings::new(broker.url());
    settings.api_timeout = config.timeouts.api_timeout;
    let simulator = sim::SimControl::start_with(
        &MqttSettings::new(broker.url()),
        sim::SimOptions::default(),
        home(config.demo.demo_nodes),
    );
    let (published, failed) = demo_published(simulator.clone());
    tracing::info!(broker = %settings.url, prefix = %settings.topic_prefix, gateway = %settings.gateway_name, "starting");
    let gateway = Gateway::connect_after(settings, gateway::RECONNECT_BACKOFF, published);
    Ok((gateway, Some(DemoHome::Mqtt(simulator)), Some(failed)))
}

/// The demo's simulator, kept for the session: it stops when dropped.
#[allow(dead_code, reason = "held, never read: its drop stops the simulator")]
enum DemoHome {
    Mqtt(sim::SimControl),
    ZwaveJs(sim::SimZwaveJsServer),
}

/// `simulate --ws`: the home over a simulated zwave-js-server, until Ctrl-C.
async fn simulate_zwave_js(
    address: &str,
    nodes: Option<u16>,
    devices: SimDevices,
) -> anyhow::Result<()> {
    let server = sim::SimZwaveJsServer::start(address, home(nodes), sim::ReportDelays::default())
        .await
        .with_context(|| format!("--ws {address}: cannot listen there"))?;
    for node in devices.stuck {
        server.set_stuck(node, true);
    }
    for node in devices.supervised {
        server.set_supervised(node, true);
    }
    tracing::info!(url = %server.url(), "simulated zwave-js-server running; Ctrl-C stops it");
    tokio::signal::ctrl_c()
        .await
        .context("cannot wait for Ctrl-C")?;
    drop(server);
    Ok(())
}

/// How long the demo's simulated gateway may take to publish its home.
const DEMO_PUBLISH_TIMEOUT: Duration = Duration::from_secs(10);

/// Why `--demo` stops when its home never appeared.
fn demo_publish_failure() -> String {
    format!(
        "the simulated gateway did not publish its home to the embedded broker within {DEMO_PUBLISH_TIMEOUT:?}"
    )
}

/// Waits in the background for the simulator to publish its home: the first future completes
/// when it has (or has failed to: the gateway then connects to what there is), the second only
/// when it failed within [`DEMO_PUBLISH_TIMEOUT`].
fn demo_published(
    simulator: sim::SimControl,
) -> (
    impl Future<Output = ()> + Send + 'static,
    tokio::sync::oneshot::Receiver<()>,
) {
    let (published_tx, published_rx) = tokio::sync::oneshot::channel::<()>();
    let (failed_tx, failed_rx) = tokio::sync::oneshot::channel::<()>();
    tokio::spawn(async move {
        if simulator.wait_published(DEMO_PUBLISH_TIMEOUT).await.is_ok() {
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
fn home(nodes: Option<u16>) -> Vec<serde_json::Value> {
    let now = gateway::now_ms();
    match nodes {
        Some(nodes) => sim::home::sized_home(nodes, now),
        None => sim::home::demo_home(now),
    }
}

/// Starts `simulate --storm` once the broker holds the whole home, so the storm's reports
/// come after the values they change.
async fn start_storm(simulator: &sim::SimControl, rate: u32) -> anyhow::Result<sim::Storm> {
    // A broker that is down keeps the storm waiting, as it keeps the simulator retrying.
    while simulator
        .wait_published(std::time::Duration::from_secs(60))
        .await
        .is_err()
    {
        tracing::warn!("the home is not published yet (is the broker up?); the storm waits");
    }
    simulator.storm(rate).context(
        "--storm: the home has no sensor or meter readings to report (try --nodes 10 or more)",
    )
}

/// How `simulate`'s devices behave beyond the home's defaults.
struct SimDevices {
    stuck: Vec<u16>,
    supervised: Vec<u16>,
}

async fn simulate(
    config: &Config,
    topic_type: sim::TopicType,
    payload_type: sim::PayloadType,
    nodes: Option<u16>,
    storm: Option<u32>,
    devices: SimDevices,
) -> anyhow::Result<()> {
    let options = sim::SimOptions {
        prefix: config.backend.topic_prefix.clone(),
        gateway_name: config.backend.gateway_name.clone(),
        topics: sim::TopicSettings {
            kind: topic_type,
            ..sim::TopicSettings::default()
        },
        payload: payload_type,
        reports: sim::ReportDelays::default(),
    };
    let broker = config.mqtt()?;
    let simulator = sim::SimControl::start_with(&broker, options, home(nodes));
    for node in devices.stuck {
        simulator.set_stuck(node, true);
    }
    for node in devices.supervised {
        simulator.set_supervised(node, true);
    }
    tracing::info!(broker = %config.backend.mqtt_url, "simulated gateway running; Ctrl-C stops it");
    let _storm = match storm {
        Some(rate) => Some(start_storm(&simulator, rate).await?),
        None => None,
    };
    tokio::signal::ctrl_c()
        .await
        .context("cannot wait for Ctrl-C")?;
    drop(simulator);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A simulator that cannot reach its broker never publishes: after the timeout the gateway
    /// is let go (to find nothing) and the failure is announced, with this message.
    #[tokio::test(start_paused = true)]
    async fn a_demo_home_that_never_appears_fails_after_the_timeout_with_its_message() {
        let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = closed.local_addr().unwrap().port();
        drop(closed);
        let url: gateway::MqttUrl = format!("mqtt://127.0.0.1:{port}").parse().unwrap();
        let simulator = sim::SimControl::start_with(
            &MqttSettings::new(url),
            sim::SimOptions::default(),
            home(None),
        );
        let started = tokio::time::Instant::now();
        let (published, failed) = demo_published(simulator);
        assert!(failed.await.is_ok(), "the failure was not announced");
        assert!(started.elapsed() >= DEMO_PUBLISH_TIMEOUT);
        published.await;
        assert_eq!(
            demo_publish_failure(),
            "the simulated gateway did not publish its home to the embedded broker within 10s"
        );
    }
}
