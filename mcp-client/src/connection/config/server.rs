//! [`ServerConfig`]: one configured server as the host runs it, with the defaults; and
//! [`Endpoint`]: a program to start (stdio) or a remote URL (Streamable HTTP).

use std::{collections::BTreeMap, time::Duration};

use crate::{
    connection::RetryPolicy,
    transport::{HttpEndpoint, ServerCommand},
};

/// Default time for a server to start and answer `initialize` (first `npx`/`uvx` runs are slow).
pub const DEFAULT_INIT_TIMEOUT: Duration = Duration::from_secs(60);
/// Default time for one request.
pub const DEFAULT_CALL_TIMEOUT: Duration = Duration::from_secs(30);

/// How a server is reached.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Endpoint {
    /// A program the host starts, speaking MCP on its stdin and stdout.
    Stdio(ServerCommand),
    /// A remote server speaking MCP Streamable HTTP (feature `http`).
    Http(HttpEndpoint),
}

impl Endpoint {
    /// The server's name.
    pub fn name(&self) -> &str {
        match self {
            Self::Stdio(command) => &command.name,
            Self::Http(endpoint) => &endpoint.name,
        }
    }

    /// The command line, or the URL, as a person would write it.
    pub fn display(&self) -> String {
        match self {
            Self::Stdio(command) => command.display(),
            Self::Http(endpoint) => endpoint.shown_url(),
        }
    }
}

/// One configured server.
#[derive(Debug, Clone, PartialEq)]
pub struct ServerConfig {
    /// How to start it, or where it is.
    pub endpoint: Endpoint,
    /// Time allowed for start-up and `initialize`.
    pub init_timeout: Duration,
    /// Time allowed for each request.
    pub call_timeout: Duration,
    /// Connection attempts and delays.
    pub retry: RetryPolicy,
    /// Per tool: argument renames applied before the server sees them.
    pub parameter_mappings: BTreeMap<String, BTreeMap<String, String>>,
    /// Prefix for this server's tool names (`<prefix>__<tool>`).
    pub tool_prefix: Option<String>,
    /// Whether the host should skip it.
    pub disabled: bool,
    /// The MCP revision to speak (`protocolVersion`); `None`: the newest the server offers
    /// (see [`NEWEST_PROTOCOL_VERSION`](crate::connection::NEWEST_PROTOCOL_VERSION)).
    pub protocol_version: Option<rmcp::model::ProtocolVersion>,
}

impl ServerConfig {
    /// A server the host starts, with the default timeouts and retry policy.
    pub fn new(command: ServerCommand) -> Self {
        Self::reached_by(Endpoint::Stdio(command))
    }

    /// A remote server over Streamable HTTP, with the default timeouts and retry policy.
    pub fn http(endpoint: HttpEndpoint) -> Self {
        Self::reached_by(Endpoint::Http(endpoint))
    }

    fn reached_by(endpoint: Endpoint) -> Self {
        Self {
            endpoint,
            init_timeout: DEFAULT_INIT_TIMEOUT,
            call_timeout: DEFAULT_CALL_TIMEOUT,
            retry: RetryPolicy::default(),
            parameter_mappings: BTreeMap::new(),
            tool_prefix: None,
            disabled: false,
            protocol_version: None,
        }
    }

    /// The server's name.
    pub fn name(&self) -> &str {
        self.endpoint.name()
    }

    /// The command that starts it, when the host starts it.
    pub fn command(&self) -> Option<&ServerCommand> {
        match &self.endpoint {
            Endpoint::Stdio(command) => Some(command),
            Endpoint::Http(_) => None,
        }
    }

    /// [`ServerConfig::command`], to change it.
    pub fn command_mut(&mut self) -> Option<&mut ServerCommand> {
        match &mut self.endpoint {
            Endpoint::Stdio(command) => Some(command),
            Endpoint::Http(_) => None,
        }
    }
}
