//! The in-process home: an embedded broker, the simulated gateway, a gateway client and the
//! MCP server in this process, with an rmcp client attached over an in-memory pipe.

use std::{
    sync::atomic::{AtomicU32, Ordering},
    time::Duration,
};

use rmcp::{
    ClientHandler, RoleClient, ServiceExt as _, model::CallToolResult, service::RunningService,
};
use serde_json::Value;
use zwave_mcp_server::{
    Backoff, MqttSettings, Network, ZwaveServer,
    devices::Exposure,
    sim::{EmbeddedBroker, SimGateway, SimOptions},
};

use super::{call, eventually, text_of};

/// Logs to stderr at the level in `TEST_LOG` (default: off), once per test binary.
fn init_logging() {
    let level = std::env::var("TEST_LOG").unwrap_or_else(|_| "off".into());
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        // Kept for the test binary's life: dropping it would stop the writer thread.
        if let Ok(guard) = zwave_mcp_server::logging::init(&level, None) {
            std::mem::forget(guard);
        }
    });
}

/// Reconnection backoff short enough for tests.
pub fn fast_backoff() -> Backoff {
    Backoff {
        first: Duration::from_millis(50),
        max: Duration::from_millis(200),
        jitter: 0.0,
    }
}

/// Settings for a gateway client of `broker` with a unique client id.
pub fn settings_for(
    url: zwave_mcp_server::network::MqttUrl,
    api_timeout: Duration,
) -> MqttSettings {
    static NEXT: AtomicU32 = AtomicU32::new(0);
    let mut settings = MqttSettings::new(url);
    settings.client_id = format!(
        "zwave-mcp-test-{}-{}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    );
    settings.api_timeout = api_timeout;
    settings
}

/// Broker + simulated gateway + gateway client + MCP server + MCP client.
pub struct Home {
    #[expect(dead_code, reason = "held so the broker lives as long as the home")]
    pub broker: EmbeddedBroker,
    pub sim: SimGateway,
    pub network: Network,
    pub client: RunningService<RoleClient, ()>,
}

impl Home {
    /// The demo home with default settings.
    pub async fn start() -> Self {
        Self::start_with(
            SimOptions::default(),
            Duration::from_secs(2),
            Duration::from_secs(2),
        )
        .await
    }

    /// The basic home (the demo home's first seven nodes), with default settings: for the
    /// tests written against it, whose names and lists it keeps.
    pub async fn basic() -> Self {
        let nodes = zwave_mcp_server::sim::home::basic_home(zwave_mcp_server::network::now_ms());
        Self::start_home(
            SimOptions::default(),
            nodes,
            Duration::from_secs(2),
            Duration::from_secs(2),
        )
        .await
    }

    /// The demo home with the given simulator options and timeouts.
    pub async fn start_with(
        options: SimOptions,
        api_timeout: Duration,
        confirm_timeout: Duration,
    ) -> Self {
        let nodes = zwave_mcp_server::sim::home::demo_home(zwave_mcp_server::network::now_ms());
        Self::start_home(options, nodes, api_timeout, confirm_timeout).await
    }

    /// A home of one's own (`getNodes` objects) with the given simulator options and timeouts.
    pub async fn start_home(
        options: SimOptions,
        nodes: Vec<Value>,
        api_timeout: Duration,
        confirm_timeout: Duration,
    ) -> Self {
        init_logging();
        let broker = EmbeddedBroker::start().unwrap();
        // The real driver's order of events, with its delays shortened.
        let options = SimOptions {
            reports: zwave_mcp_server::sim::ReportDelays::FAST,
            ..options
        };
        let sim = SimGateway::start_with(&MqttSettings::new(broker.url()), options.clone(), nodes);
        sim.wait_ready(Duration::from_secs(5)).await.unwrap();
        let mut settings = settings_for(broker.url(), api_timeout);
        settings.topic_prefix = options.prefix.clone();
        settings.gateway_name = options.gateway_name.clone();
        let network = Network::connect(settings, fast_backoff());
        let client = serve(network.clone(), confirm_timeout).await;
        Self {
            broker,
            sim,
            network,
            client,
        }
    }

    /// Whether the gateway's state satisfies `check` within 3 s.
    pub async fn wait_until(
        &self,
        check: impl Fn(&zwave_mcp_server::network::HomeState) -> bool,
    ) -> bool {
        let network = self.network.clone();
        eventually(Duration::from_secs(3), move || check(&network.state())).await
    }

    /// Calls a tool and returns the whole result.
    pub async fn call(&self, tool: &str, args: Value) -> CallToolResult {
        call(&self.client, tool, args).await
    }

    /// Calls a tool and returns `(is_error, text)`.
    pub async fn text(&self, tool: &str, args: Value) -> (bool, String) {
        let result = self.call(tool, args).await;
        (result.is_error == Some(true), text_of(&result))
    }

    /// Calls a tool that must succeed and returns its structured content.
    pub async fn ok(&self, tool: &str, args: Value) -> Value {
        let result = self.call(tool, args.clone()).await;
        assert_ne!(
            result.is_error,
            Some(true),
            "{tool} {args} failed: {}",
            text_of(&result)
        );
        result
            .structured_content
            .unwrap_or_else(|| panic!("{tool} returned no structuredContent"))
    }

    /// Calls a tool that must fail and returns its text.
    pub async fn err(&self, tool: &str, args: Value) -> String {
        let (is_error, text) = self.text(tool, args.clone()).await;
        assert!(is_error, "{tool} {args} should fail but said: {text}");
        text
    }
}

/// Serves an MCP server over an in-memory pipe and connects an rmcp client to it.
pub async fn serve(network: Network, confirm_timeout: Duration) -> RunningService<RoleClient, ()> {
    serve_exposed(network, confirm_timeout, Exposure::default()).await
}

/// [`serve`], with what the agent may see and switch limited by `exposure`.
pub async fn serve_exposed(
    network: Network,
    confirm_timeout: Duration,
    exposure: Exposure,
) -> RunningService<RoleClient, ()> {
    let server = ZwaveServer::new(network, confirm_timeout).with_exposure(exposure);
    serve_with(server, ()).await
}

/// Serves `server` over an in-memory pipe and connects `client` to it.
pub async fn serve_with<C: ClientHandler>(
    server: ZwaveServer,
    client: C,
) -> RunningService<RoleClient, C> {
    let (server_io, client_io) = tokio::io::duplex(1 << 20);
    tokio::spawn(async move {
        if let Ok(running) = server.serve(server_io).await {
            let _ = running.waiting().await;
        }
    });
    client.serve(client_io).await.unwrap()
}
