//! Our own stdio transport to an MCP server we spawn: rmcp's `Transport<RoleClient>` over a
//! child process, made to survive whatever the server writes; and remote servers over
//! Streamable HTTP (`http/`, rmcp's client, feature `http`).
//!
//! | part | what it does |
//! |---|---|
//! | [`spawn`] (`command.rs`) | starts `command args` with `env` and `cwd` in its own process group |
//! | [`ChildTransport`] (`child.rs`) | sends JSON-RPC lines to stdin; reads stdout with [`lines::LineReader`], drops (and reports) what is not JSON-RPC, never answers it |
//! | [`classify`] (`classify.rs`), [`to_message`] (`decode.rs`) | judging a line, then typing it |
//! | [`ReadStats`] (`stats.rs`) | counters of what the reader delivered and dropped |
//! | [`stderr::StderrTail`] | stderr drained all the time into the last N lines |
//! | [`ServerProcess`] | exit status, stderr tail, dropped-line counters, and shutdown: close stdin, wait, SIGTERM to the group, SIGKILL; safe reaping and parent-death (`process.rs`) |
//! | [`ServerProcesses`] | the processes one host started, stopped all at once when it is asked to stop |
//! | [`http`] | [`HttpEndpoint`]: a remote server's URL and headers; with the `http` feature, its transport and what its failures mean |
//!
//! Why not rmcp's child-process transport: it logs bad lines only at debug without content,
//! answers JSON that is not JSON-RPC with -32600 into the server's stdin, drops a response
//! containing one invalid UTF-8 byte, and reports a crash as a bare "Transport closed".

mod child;
mod classify;
mod command;
mod decode;
pub(crate) mod deep;
pub mod http;
pub mod lines;
pub mod process;
mod stats;
pub mod stderr;

pub use child::{ChildTransport, NotificationTap};
pub use classify::{ClassifiedLine, LineKind, classify, preview};
pub use command::{ServerCommand, SpawnError, spawn};
pub use decode::to_message;
pub use http::HttpEndpoint;
pub use process::{Exit, SHUTDOWN_GRACE, ServerProcess, ServerProcesses};
pub use stats::{ReadCounts, ReadStats};
pub use stderr::StderrTail;

/// Default limit of one stdout line (one JSON-RPC message).
pub const DEFAULT_MAX_LINE: usize = 16 * 1024 * 1024;
/// Stderr lines kept for error messages.
pub const STDERR_TAIL_LINES: usize = 40;
/// Longest stderr line kept.
pub const STDERR_LINE_CAP: usize = 1024;
