//! Client toolkit for MCP agent hosts: connect to many MCP stdio servers and keep working
//! whatever they do, offer their tools and local tools to a model, and run the tool-call loop.
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
//!               └─ every message ─▶ history (SQLite store, its own writer thread)
//! ```
//!
//! # Layout
//! - [`cli`]: the `mcp-client` command line (`chat`, `history`, `servers`, `doctor`, `tools`,
//!   `call`, `bench`); `doctor` judges tool definitions with [`tools::review`], the engine
//!   `mcp-conformance` uses too.
//! - [`agent`]: the tool-call loop (specs 002, 004) with its policies (turns, token budget,
//!   refinement, tool retries), events, approval and journal.
//! - [`history`]: the conversation store (SQLite, its own writer thread).
//! - [`llm`]: the provider-neutral message model, the [`llm::Provider`] interface and its HTTP
//!   implementation for the three dialects, their wire formats.
//! - [`tools`]: [`ToolManager`] and [`ToolExecutor`] (every call: lookup, normalization, schema
//!   check, timeout, a [`ToolOutcome`] holding a value or a typed [`ToolError`]), local tool
//!   kinds, the servers' tools under safe unique names ([`McpTools`]), results for models.
//! - [`connection`]: `mcpServers` configuration (`connection::config`: typed entries, errors
//!   with their key path), a [`ServerPool`] of servers connected in the background, and per
//!   server a [`ServerConnection`]: connect with retry, crash restart with jittered backoff,
//!   requests with timeouts and cancellation, clean shutdown.
//! - [`transport`]: our rmcp `Transport<RoleClient>` over a spawned child process: lines
//!   judged and typed (tool results without rmcp's untagged search), the process group's
//!   shutdown, safe reaping and parent-death signal (`transport::process`).
//! - [`bench`](mod@bench): `mcp-client bench`, how fast one server answers through a
//!   [`ServerConnection`] (latency, throughput, the server's CPU and memory).
//! - `signals`: stopping every server when the host is asked to stop (SIGINT, SIGTERM).
//!
//! Waits after failures ([`common::Backoff`]), the duration grammar of files and flags and
//! one-line clipping come from the workspace's `common` crate, shared with the server.

pub mod agent;
pub mod bench;
pub mod cli;
pub mod connection;
pub mod history;
pub mod llm;
mod signals;
pub mod tools;
pub mod transport;

pub use agent::{Agent, AgentOptions, Conversation};
pub use connection::{
    ClientError, ConnectionStatus, ServerConfig, ServerConnection,
    pool::{ConnectReport, ServerPool},
};
pub use llm::{HttpProvider, Provider, ProviderConfig};
pub use tools::{
    McpTools, Normalizer, ToolCall, ToolError, ToolOutcome, executor::ToolExecutor,
    manager::ToolManager,
};
pub use transport::ServerCommand;
