//! [`ServerConfig`]: one configured server as the host runs it, with the defaults.

use std::{collections::BTreeMap, time::Duration};

use crate::{connection::RetryPolicy, transport::ServerCommand};

/// Default time for a server to start and answer `initialize` (first `npx`/`uvx` runs are slow).
pub const DEFAULT_INIT_TIMEOUT: Duration = Duration::from_secs(60);
/// Default time for one request.
pub const DEFAULT_CALL_TIMEOUT: Duration = Duration::from_secs(30);

/// One configured server.
#[derive(Debug, Clone, PartialEq)]
pub struct ServerConfig {
    /// How to start it.
    pub command: ServerCommand,
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
}

impl ServerConfig {
    /// A server with the default timeouts and retry policy.
    pub fn new(command: ServerCommand) -> Self {
        Self {
            command,
            init_timeout: DEFAULT_INIT_TIMEOUT,
            call_timeout: DEFAULT_CALL_TIMEOUT,
            retry: RetryPolicy::default(),
            parameter_mappings: BTreeMap::new(),
            tool_prefix: None,
            disabled: false,
        }
    }

    /// The server's name.
    pub fn name(&self) -> &str {
        &self.command.name
    }
}
