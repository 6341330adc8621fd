//! The MCP server: the backend the configuration names connected, the tools' server built
//! with the owner's rules, and the protocol served on stdio until the client leaves, or over
//! Streamable HTTP until a signal stops it (or, either way, until the demo home fails to
//! appear).

use anyhow::Context as _;
use rmcp::ServiceExt as _;

use super::demo::{self, Connected};
use crate::{
    config::Config,
    devices::{self, Rule, RuleAudit},
    mcp::ZwaveServer,
    network::{self, Network},
    transport::{
        bounded::{Bounded, MAX_IN_FLIGHT},
        http::{self, HttpSettings},
        line::LineTransport,
        stdio,
    },
};

/// Serves MCP on stdio until the session ends, or over HTTP (`--http`) until a signal.
pub(super) async fn serve(config: Config) -> anyhow::Result<()> {
    let exposure = config.exposure()?;
    let http = config.http()?;
    let trail = match config.state_dir()? {
        Some(dir) => {
            let state = crate::state::StateDir::open(&dir)?;
            Some(std::sync::Arc::new(crate::audit::AuditTrail::new(
                state.path(),
            )))
        }
        None => None,
    };
    // Take the protocol pipes first: from here on a stray write to fd 1 goes to stderr.
    let io = http.is_none().then(stdio::take);
    // The demo's simulator lives as long as this function: until the MCP session ends.
    let (network, _simulator, demo_failed) = connect(&config).await?;
    let audit = RuleAudit::new(exposure.clone());
    let mut sensitive = config.sensitive();
    sensitive.unauthenticated_clients = http.as_ref().is_some_and(|http| http.token.is_none());
    warn_of_idle_rules(&network, audit, sensitive.devices.clone());
    let server = ZwaveServer::new(network, config.timeouts.confirm_timeout)
        .with_exposure(exposure)
        .with_limits(config.limits())
        .with_sensitive(sensitive)
        .with_maintenance(config.maintenance())
        .with_audit(trail.clone());
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
    let served = async {
        match (http, io) {
            (Some(settings), _) => serve_http(settings, server, trail).await,
            (None, Some((reader, writer))) => {
                let transport = Bounded::new(LineTransport::new(reader, writer), MAX_IN_FLIGHT);
                let running = server
                    .serve(transport)
                    .await
                    .context("the MCP session could not start")?;
                let reason = running.waiting().await.context("the MCP session failed")?;
                tracing::info!(?reason, "MCP session ended");
                Ok(())
            }
            (None, None) => unreachable!("stdio is taken whenever HTTP is not served"),
        }
    };
    tokio::select! {
        served = served => served,
        () = failed => anyhow::bail!(demo::publish_failure()),
    }
}

/// Serves `server` over Streamable HTTP until SIGINT or SIGTERM.
async fn serve_http(
    settings: HttpSettings,
    server: ZwaveServer,
    audit: Option<std::sync::Arc<crate::audit::AuditTrail>>,
) -> anyhow::Result<()> {
    let addr = settings.addr;
    let stop = tokio_util::sync::CancellationToken::new();
    let signalled = stop.clone();
    let mut terminate = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())
        .context("cannot watch for SIGTERM")?;
    tokio::spawn(async move {
        tokio::select! {
            _ = tokio::signal::ctrl_c() => {}
            _ = terminate.recv() => {}
        }
        tracing::info!("stopping: a signal asked");
        signalled.cancel();
    });
    http::serve(settings, move || server.for_session(), stop, audit)
        .await
        .with_context(|| format!("cannot serve HTTP on {addr}"))
}

/// Each time the nodes are loaded, warns of the exposure rules and sensitive-device marks
/// that match no device.
fn warn_of_idle_rules(network: &Network, audit: RuleAudit, marks: Vec<Rule>) {
    if !audit.has_rules() && marks.is_empty() {
        return;
    }
    let audit = std::sync::Mutex::new(audit);
    network.on_nodes_loaded(move |nodes| {
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

/// Starts the connection to the home the configuration names: zwave-js-server
/// (`--zwave-js-url`), the MQTT gateway, or the demo home.
async fn connect(config: &Config) -> anyhow::Result<Connected> {
    if let Some(target) = config.zwave_js_server()? {
        tracing::info!(server = ?target, "starting");
        let network = Network::connect_zwave_js_server(
            target,
            network::RECONNECT_BACKOFF,
            config.timeouts.api_timeout,
        );
        return Ok((network, None, None));
    }
    if !config.demo.demo {
        let settings = config.mqtt()?;
        tracing::info!(broker = %settings.url, prefix = %settings.topic_prefix, gateway = %settings.gateway_name, "starting");
        return Ok((
            Network::connect(settings, network::RECONNECT_BACKOFF),
            None,
            None,
        ));
    }
    demo::connect(config).await
}
