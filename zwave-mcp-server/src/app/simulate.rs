//! The `simulate` command: only the simulated Z-Wave JS UI gateway, against the broker the
//! flags name, or a simulated zwave-js-server (`--zwave-js-server`), until Ctrl-C.

use anyhow::Context as _;

use super::demo::home;
use crate::{config::Config, sim};

/// How `simulate`'s devices behave beyond the home's defaults.
pub(super) struct SimDevices {
    pub(super) stuck: Vec<u16>,
    pub(super) supervised: Vec<u16>,
}

/// `simulate --zwave-js-server`: the home over a simulated zwave-js-server, until Ctrl-C.
pub(super) async fn simulate_zwave_js_server(
    address: &str,
    nodes: Option<u16>,
    devices: SimDevices,
) -> anyhow::Result<()> {
    let server = sim::SimZwaveJsServer::start(address, home(nodes), sim::ReportDelays::default())
        .await
        .with_context(|| format!("--zwave-js-server {address}: cannot listen there"))?;
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

/// `simulate`: the simulated Z-Wave JS UI gateway on the broker of `--mqtt-url`, until Ctrl-C.
pub(super) async fn simulate(
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
        send_events: false,
    };
    let broker = config.mqtt()?;
    let simulator = sim::SimGateway::start_with(&broker, options, home(nodes));
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

/// Starts `simulate --storm` once the broker holds the whole home, so the storm's reports
/// come after the values they change.
async fn start_storm(simulator: &sim::SimGateway, rate: u32) -> anyhow::Result<sim::Storm> {
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
