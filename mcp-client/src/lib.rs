//! Client toolkit for MCP agent hosts: connect to many MCP servers (started over stdio, or
//! remote over Streamable HTTP) and keep working
//! whatever they do, offer their tools and local tools to a model, and run the tool-call loop.
//!
//! A host starts from a [`Host`]: where its servers and local tools come from, who answers
//! the servers' questions and approves calls, then one [`ToolExecutor`] for all of them.
//!
//! ```
//! use mcp_client::{Host, tools::definition};
//! use serde_json::json;
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! // A local tool; `.servers_from_file(path)?` adds the servers of an `mcpServers` file.
//! let calculator = definition::parse(
//!     r#"{"name": "calc", "description": "Evaluates arithmetic.",
//!         "parameters": {"type": "object", "required": ["expression"],
//!                        "properties": {"expression": {"type": "string"}}},
//!         "implementation": {"type": "builtin", "handler": "math_eval"}}"#,
//! )?;
//! let host = calculator
//!     .into_iter()
//!     .fold(Host::builder(), |builder, tool| builder.tool(tool))
//!     .connect()
//!     .await?;
//!
//! let outcome = host.executor().execute("calc", json!({"expression": "6 * 7"})).await;
//! assert_eq!(outcome.result.ok(), Some(json!({"result": 42})));
//! host.shutdown().await;
//! # Ok(())
//! # }
//! ```
//!
//! # Features
//! With `default-features = false` the library builds with none of the command line's
//! dependencies: servers, tools, the agent loop and the message model (bring your own
//! [`Provider`]). Layers to add:
//! - `http`: remote MCP servers over Streamable HTTP (an `mcpServers` entry with a `url`):
//!   rmcp's client on reqwest and rustls.
//! - `oauth`: signing in to remote servers that ask for OAuth 2.1 (rmcp's `auth`): the host's
//!   [`Authorizer`](transport::http::oauth::Authorizer) does the interactive step
//!   ([`HostBuilder::oauth`]), tokens are kept in a 0600 file per server.
//! - `providers`: [`HttpProvider`] for Ollama/Qwen,
//!   OpenAI-compatible servers and Anthropic (reqwest, rustls).
//! - `history`: the SQLite conversation store ([`history`](mod@history)).
//! - `cli` (default): the `mcp-client` command line; needs all of the above.
//!
//! ```text
//! question ─▶ agent (loop, policies, approval) ──messages + tools──▶ llm (Ollama | OpenAI | Anthropic over HTTP)
//!               │  ▲                                                   │ stream of events
//!               │  └──────────── text, tool calls, usage ◀─────────────┘
//!               │ tool calls ─▶ tools (ToolExecutor: normalize, validate, time out) ─▶ ToolManager
//!               │                  ├─ local tools (mock, builtin, internal)
//!               │                  └─ connection (pool of servers, retry, restart, timeouts, cancel,
//!               │                       tools/list_changed) ─▶ transport (spawn, line reader, typing,
//!               │                       stderr tail, shutdown) ─stdio─▶ MCP server
//!               │                                          └─ (feature http) rmcp's client ─HTTP─▶ remote MCP server
//!               └─ every message ─▶ history (SQLite store, its own writer thread)
//! ```
//!
//! # Layout
//! - [`Host`] (`host.rs`): servers from an `mcpServers` file, local tools, callbacks and
//!   policies → a [`ToolExecutor`] and agents; the registry of the host's server processes.
//! - `cli` (feature `cli`): the `mcp-client` command line (`chat`, `history`, `servers`,
//!   `doctor`, `tools`, `call`, `resources`, `read`, `prompts`, `prompt`, `bench`) and its
//!   signal handling; `doctor` judges tool
//!   definitions with [`tools::review`], the engine `mcp-conformance` uses too.
//! - [`agent`]: the tool-call loop with its policies (turns, token budget,
//!   refinement, tool retries), events, approval and journal.
//! - `history` (feature `history`): the conversation store (SQLite, its own writer thread).
//! - [`llm`]: the provider-neutral message model, the [`llm::Provider`] interface and its HTTP
//!   implementation for the three dialects, their wire formats.
//! - [`tools`]: [`ToolManager`] and [`ToolExecutor`] (every call: lookup, normalization, schema
//!   check, timeout, a [`ToolOutcome`] holding a value or a typed [`ToolError`]), local tool
//!   kinds, the servers' tools under safe unique names ([`McpTools`]), results for models.
//! - [`connection`]: `mcpServers` configuration (`connection::config`: typed entries, errors
//!   with their key path), a [`ServerPool`] of servers connected in the background, and per
//!   server a [`ServerConnection`]: connect with retry, crash restart with jittered backoff,
//!   requests with timeouts and cancellation, clean shutdown; besides tools, the server's
//!   resources (read, subscribed to: [`connection::ResourceUpdate`]), prompts and completions.
//! - [`transport`]: our rmcp `Transport<RoleClient>` over a spawned child process: lines
//!   judged and typed (tool results without rmcp's untagged search), the process group's
//!   shutdown, safe reaping and parent-death signal, and the registry a host stops them with
//!   ([`transport::ServerProcesses`]); remote servers ([`transport::http`]): their URL and
//!   headers, rmcp's Streamable HTTP client (the entry's header values cut out of what the
//!   server sends back, redirects kept to the URL's origin), what its failures mean, and
//!   signing in with OAuth ([`transport::http::oauth`]).
//! - [`bench`](mod@bench): `mcp-client bench`, how fast one server answers through a
//!   [`ServerConnection`] (latency, throughput, the server's CPU and memory).
//!
//! Waits after failures ([`common::Backoff`]), the duration grammar of files and flags and
//! one-line clipping come from the workspace's `common` crate, shared with the server.

pub mod agent;
pub mod bench;
#[cfg(feature = "cli")]
pub mod cli;
pub mod connection;
#[cfg(feature = "history")]
pub mod history;
mod host;
pub mod llm;
pub mod tools;
pub mod transport;

pub use host::{Host, HostBuilder, HostError};

pub use agent::{Agent, AgentOptions, Conversation};
pub use connection::{
    ClientError, ConnectionStatus, ServerConfig, ServerConnection,
    pool::{ConnectReport, ServerPool},
};
pub use llm::Provider;
#[cfg(feature = "providers")]
pub use llm::{HttpProvider, ProviderConfig};
pub use tools::{
    McpTools, Normalizer, ToolCall, ToolError, ToolOutcome, executor::ToolExecutor,
    manager::ToolManager,
};
pub use transport::ServerCommand;
