//! Many servers at once: connected concurrently in the background, so start-up work that does
//! not need tools never waits, and a report of which servers are down and why.

use std::{collections::BTreeMap, sync::Arc};

use tokio::task::JoinSet;
use tracing::{debug, info, warn};

use super::{ClientError, ServerConfig, ServerConnection, SessionInfo};
use crate::transport::ServerProcesses;

/// What connecting all servers gave.
#[derive(Debug, Clone, Default)]
pub struct ConnectReport {
    /// Servers that connected, by name.
    pub connected: BTreeMap<String, SessionInfo>,
    /// Servers that did not, with why.
    pub failed: BTreeMap<String, ClientError>,
    /// Servers skipped because `disabled` is set.
    pub disabled: Vec<String>,
}

impl ConnectReport {
    /// A summary for people: every failure with its details, then what the host continues with.
    pub fn summary(&self) -> String {
        let mut lines = Vec::new();
        for (name, info) in &self.connected {
            lines.push(format!(
                "connected `{name}` ({}, protocol {}, {} ms)",
                info.server,
                info.protocol_version,
                info.init_time.as_millis()
            ));
        }
        for error in self.failed.values() {
            lines.push(error.to_string());
        }
        for name in &self.disabled {
            lines.push(format!("skipped `{name}` (disabled)"));
        }
        if self.connected.is_empty() && !self.failed.is_empty() {
            lines.push("continuing with local tools only".to_owned());
        } else if !self.failed.is_empty() {
            let down: Vec<&str> = self.failed.keys().map(String::as_str).collect();
            lines.push(format!(
                "continuing without the tools of {}",
                down.join(", ")
            ));
        }
        lines.join("\n")
    }
}

/// The configured servers.
#[derive(Clone)]
pub struct ServerPool {
    servers: Arc<BTreeMap<String, Arc<ServerConnection>>>,
    processes: ServerProcesses,
}

impl ServerPool {
    /// A pool of the enabled servers among `configs` (nothing is started yet).
    pub fn new(configs: Vec<ServerConfig>) -> Self {
        Self::asking(configs, None)
    }

    /// [`ServerPool::new`], with `elicitor` answering every server's questions to the user
    /// (MCP elicitation); without one, servers are told nobody can be asked.
    pub fn asking(configs: Vec<ServerConfig>, elicitor: Option<super::Elicitor>) -> Self {
        Self::in_registry(configs, elicitor, ServerProcesses::new())
    }

    /// [`ServerPool::asking`], with every server's process registered in `processes`: the
    /// host's registry, which it can stop all at once ([`ServerProcesses::shutdown_all`]) when
    /// it is asked to stop.
    pub fn in_registry(
        configs: Vec<ServerConfig>,
        elicitor: Option<super::Elicitor>,
        processes: ServerProcesses,
    ) -> Self {
        Self::of(
            configs,
            |config| {
                ServerConnection::new(config)
                    .with_elicitor(elicitor.clone())
                    .with_processes(processes.clone())
            },
            processes.clone(),
        )
    }

    /// [`ServerPool::in_registry`], remote servers that ask for OAuth signed in to with
    /// `oauth` (who signs a person in, where tokens are kept).
    #[cfg(feature = "oauth")]
    pub fn signing_in(
        configs: Vec<ServerConfig>,
        elicitor: Option<super::Elicitor>,
        processes: ServerProcesses,
        oauth: &crate::transport::http::oauth::OAuthOptions,
    ) -> Self {
        Self::of(
            configs,
            |config| {
                ServerConnection::new(config)
                    .with_elicitor(elicitor.clone())
                    .with_processes(processes.clone())
                    .with_oauth(oauth.clone())
            },
            processes.clone(),
        )
    }

    /// A pool of `configs`, each connection made by `connection`.
    fn of(
        configs: Vec<ServerConfig>,
        connection: impl Fn(ServerConfig) -> ServerConnection,
        processes: ServerProcesses,
    ) -> Self {
        let servers = configs
            .into_iter()
            .map(|config| {
                let connection = connection(config);
                (connection.name().to_owned(), Arc::new(connection))
            })
            .collect();
        Self {
            servers: Arc::new(servers),
            processes,
        }
    }

    /// Where the servers' processes are registered.
    pub fn processes(&self) -> &ServerProcesses {
        &self.processes
    }

    /// One server's connection.
    pub fn get(&self, name: &str) -> Option<&Arc<ServerConnection>> {
        self.servers.get(name)
    }

    /// Every server's connection, by name.
    pub fn servers(&self) -> impl Iterator<Item = &Arc<ServerConnection>> {
        self.servers.values()
    }

    /// Starts connecting every enabled server concurrently and returns at once; await the
    /// handle where the tools are needed.
    pub fn start(&self) -> tokio::task::JoinHandle<ConnectReport> {
        let pool = self.clone();
        tokio::spawn(async move { pool.connect_all().await })
    }

    /// Connects every enabled server concurrently (each with its retry policy).
    pub async fn connect_all(&self) -> ConnectReport {
        let mut report = ConnectReport::default();
        let mut attempts = JoinSet::new();
        for server in self.servers.values() {
            if server.config().disabled {
                report.disabled.push(server.name().to_owned());
                continue;
            }
            let server = Arc::clone(server);
            attempts.spawn(async move { (server.name().to_owned(), server.connect().await) });
        }
        while let Some(joined) = attempts.join_next().await {
            match joined {
                Ok((name, Ok(info))) => {
                    report.connected.insert(name, info);
                }
                Ok((name, Err(err))) => {
                    // The report carries it, and the host shows it once (each line of the
                    // error logged here as well would print it twice).
                    debug!(server = %name, "{err}");
                    report.failed.insert(name, err);
                }
                Err(err) => warn!(error = %err, "a connection task failed"),
            }
        }
        if report.connected.is_empty() && !report.failed.is_empty() {
            warn!("no MCP server connected: continuing with local tools only");
        } else {
            info!(
                connected = report.connected.len(),
                failed = report.failed.len(),
                "MCP servers started"
            );
        }
        report
    }

    /// A number that grows whenever any server's tools may have changed (see
    /// [`ServerConnection::generation`]).
    pub fn generation(&self) -> u64 {
        self.servers
            .values()
            .map(|server| server.generation())
            .fold(0, u64::wrapping_add)
    }

    /// Starts, in the background, every enabled server that is down and due for a restart.
    pub fn revive(&self) {
        for server in self.servers.values() {
            server.revive();
        }
    }

    /// Stops every server concurrently.
    pub async fn shutdown(&self) {
        let mut stops = JoinSet::new();
        for server in self.servers.values() {
            let server = Arc::clone(server);
            stops.spawn(async move { server.shutdown().await });
        }
        while stops.join_next().await.is_some() {}
    }
}
