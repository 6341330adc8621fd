//! [`Host`]: what an agent host builds before its first question — the configured MCP servers
//! connected, the local tools loaded, and one [`ToolExecutor`] offering both — from a
//! [`HostBuilder`] that says where the servers and tools come from, who answers the servers'
//! questions and approves calls, and how long things may take.
//!
//! Everything a host owns is in the value: the registry of the server processes it started
//! ([`ServerProcesses`], which it stops all at once when it is asked to stop) belongs to this
//! host, so one program can run two hosts side by side without either stopping the other's
//! servers.

use std::{path::Path, sync::Arc, time::Duration};

use crate::{
    McpTools, ServerConfig, ServerPool,
    agent::{Agent, Approver},
    connection::{ConfigError, Elicitor, RetryPolicy, config, pool::ConnectReport},
    llm::Provider,
    tools::{
        definition::{self, ToolDefinition, ToolDefinitionError},
        executor::ToolExecutor,
        manager::ToolManager,
    },
    transport::ServerProcesses,
};

/// Why a host could not be built: nothing was started.
#[derive(Debug, thiserror::Error)]
pub enum HostError {
    /// The `mcpServers` file cannot be used.
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// A file of local tools cannot be used, or a local tool cannot be added (its name is not
    /// valid, it has no description, its parameter schema is not one).
    #[error(transparent)]
    Tool(#[from] ToolDefinitionError),
    /// Two servers were given one name: the host could not tell their tools apart.
    #[error(
        "two MCP servers are named `{name}` (`{first}` and `{second}`): give each server its own name"
    )]
    DuplicateServer {
        /// The name both have.
        name: String,
        /// The first one's command.
        first: String,
        /// The second one's command.
        second: String,
    },
}

/// How a [`Host`] is made: servers, local tools, callbacks and policies. Nothing starts until
/// [`HostBuilder::connect`].
#[derive(Default)]
#[must_use]
pub struct HostBuilder {
    servers: Vec<ServerConfig>,
    tools: Vec<ToolDefinition>,
    elicitor: Option<Elicitor>,
    approver: Option<Arc<dyn Approver>>,
    retry: Option<RetryPolicy>,
    init_timeout: Option<Duration>,
    call_timeout: Option<Duration>,
    tool_timeout: Option<Duration>,
    processes: ServerProcesses,
    #[cfg(feature = "oauth")]
    oauth: crate::transport::http::oauth::OAuthOptions,
}

impl HostBuilder {
    /// Adds the servers of an `mcpServers` file (the format Claude Desktop, Claude Code and
    /// VS Code write; see [`crate::connection::config`]).
    ///
    /// # Errors
    /// [`HostError::Config`] naming the file, the server and the key that cannot be used.
    pub fn servers_from_file(mut self, path: &Path) -> Result<Self, HostError> {
        self.servers.extend(config::load(path)?);
        Ok(self)
    }

    /// Adds one server.
    pub fn server(mut self, server: ServerConfig) -> Self {
        self.servers.push(server);
        self
    }

    /// Adds the local tools of a tool file (JSON: mock, builtin and internal tools).
    ///
    /// # Errors
    /// [`HostError::Tool`] naming the file and what is wrong in it.
    pub fn tools_from_file(mut self, path: &Path) -> Result<Self, HostError> {
        self.tools.extend(definition::load_file(path)?);
        Ok(self)
    }

    /// Adds one local tool.
    pub fn tool(mut self, tool: ToolDefinition) -> Self {
        self.tools.push(tool);
        self
    }

    /// Who answers the servers' questions to the person (MCP elicitation). Without one, the
    /// servers are told that nobody can be asked.
    pub fn elicitor(mut self, elicitor: Elicitor) -> Self {
        self.elicitor = Some(elicitor);
        self
    }

    /// How remote servers that ask for OAuth are signed in to: who signs a person in (the
    /// host's [`Authorizer`](crate::transport::http::oauth::Authorizer)) and where tokens
    /// are kept. Without it, only entries with `"grant": "client_credentials"` sign in, and
    /// tokens last as long as the host.
    #[cfg(feature = "oauth")]
    pub fn oauth(mut self, options: crate::transport::http::oauth::OAuthOptions) -> Self {
        self.oauth = options;
        self
    }

    /// Who approves each tool call of the agents made with [`Host::agent`]. Without one,
    /// every call runs.
    pub fn approver(mut self, approver: Arc<dyn Approver>) -> Self {
        self.approver = Some(approver);
        self
    }

    /// How every server is retried when it cannot be started (over what each entry says).
    pub fn retry(mut self, retry: RetryPolicy) -> Self {
        self.retry = Some(retry);
        self
    }

    /// How long every server may take to answer `initialize` (over what each entry says).
    pub fn init_timeout(mut self, timeout: Duration) -> Self {
        self.init_timeout = Some(timeout);
        self
    }

    /// How long every server's tool call may take (over what each entry says).
    pub fn call_timeout(mut self, timeout: Duration) -> Self {
        self.call_timeout = Some(timeout);
        self
    }

    /// How long a local tool without a timeout of its own may take.
    pub fn tool_timeout(mut self, timeout: Duration) -> Self {
        self.tool_timeout = Some(timeout);
        self
    }

    /// Registers the servers' processes in `processes` (shared with another host, or held by
    /// a signal handler) instead of a registry of this host's own.
    pub fn processes(mut self, processes: ServerProcesses) -> Self {
        self.processes = processes;
        self
    }

    /// Adds the local tools, then connects every enabled server concurrently and lists its
    /// tools. A server that cannot be reached is not an error: the host goes on without its
    /// tools, and [`Host::report`] says why (its connection keeps trying on later calls).
    ///
    /// # Errors
    /// [`HostError::Tool`] when a local tool cannot be added, [`HostError::DuplicateServer`]
    /// when two servers have one name; no server was started then.
    pub async fn connect(self) -> Result<Host, HostError> {
        let mut named = std::collections::HashMap::new();
        for server in &self.servers {
            if let Some(first) = named.insert(server.name(), server.endpoint.display()) {
                return Err(HostError::DuplicateServer {
                    name: server.name().to_owned(),
                    first,
                    second: server.endpoint.display(),
                });
            }
        }
        let mut manager = ToolManager::new();
        for tool in self.tools {
            manager.add(tool)?;
        }
        let servers = self
            .servers
            .into_iter()
            .map(|mut server| {
                if let Some(retry) = self.retry {
                    server.retry = retry;
                }
                if let Some(timeout) = self.init_timeout {
                    server.init_timeout = timeout;
                }
                if let Some(timeout) = self.call_timeout {
                    server.call_timeout = timeout;
                }
                server
            })
            .collect();
        #[cfg(feature = "oauth")]
        let pool = ServerPool::signing_in(servers, self.elicitor, self.processes, &self.oauth);
        #[cfg(not(feature = "oauth"))]
        let pool = ServerPool::in_registry(servers, self.elicitor, self.processes);
        let report = pool.connect_all().await;
        manager.add_mcp(&McpTools::discover(&pool).await);
        let normalizer = McpTools::normalizer(&pool);
        let mut executor = ToolExecutor::new(manager).with_mcp(pool.clone(), normalizer);
        if let Some(timeout) = self.tool_timeout {
            executor = executor.with_default_timeout(timeout);
        }
        Ok(Host {
            executor,
            pool,
            report,
            approver: self.approver,
        })
    }
}

/// Connected servers and local tools behind one [`ToolExecutor`], ready for an agent loop.
/// End it with [`Host::shutdown`]: each server is told to stop and given time to.
pub struct Host {
    executor: ToolExecutor,
    pool: ServerPool,
    report: ConnectReport,
    approver: Option<Arc<dyn Approver>>,
}

impl Host {
    /// A host to build.
    pub fn builder() -> HostBuilder {
        HostBuilder::default()
    }

    /// The executor of every tool: local ones and the servers' (under safe unique names).
    pub fn executor(&self) -> &ToolExecutor {
        &self.executor
    }

    /// The servers.
    pub fn pool(&self) -> &ServerPool {
        &self.pool
    }

    /// Which servers connected, which did not and why, which are disabled.
    pub fn report(&self) -> &ConnectReport {
        &self.report
    }

    /// The registry of this host's server processes: what a signal handler stops with
    /// [`ServerProcesses::shutdown_all`].
    pub fn processes(&self) -> &ServerProcesses {
        self.pool.processes()
    }

    /// An agent that answers questions with `provider` and this host's tools, its calls
    /// approved by the host's approver if it has one.
    pub fn agent(&self, provider: Arc<dyn Provider>) -> Agent {
        let agent = Agent::new(provider, self.executor.clone());
        match &self.approver {
            Some(approver) => agent.with_approver(Arc::clone(approver)),
            None => agent,
        }
    }

    /// Stops every server concurrently (close stdin, wait, SIGTERM, SIGKILL).
    pub async fn shutdown(self) {
        self.pool.shutdown().await;
    }
}
