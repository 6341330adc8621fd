//! Connections to MCP servers: connect with retry, restart after a crash, time out requests,
//! and shut down cleanly. Every failure says which server, what happened, its exit status and
//! the last lines of its stderr.
//!
//! Locks are never held across an MCP request (one held lock would serialise parallel calls):
//! a call clones the live session's handles out of the lock and then awaits.
//!
//! | module | owns |
//! |---|---|
//! | `server_connection` | [`ServerConnection`]: the state machine (idle, connecting, live, down), restarts with backoff, calls with timeouts and cancellation |
//! | `live` | one session: connect once (spawn, `initialize`, `tools/list`), requests, rmcp's errors as ours, close |
//! | `handler` | [`HostHandler`]: the identity we announce (the pinned protocol version), progress routing, `tools/list_changed` |
//! | `error` | [`ClientError`] and [`Failure`], with exit status and stderr |
//! | `config` | the `mcpServers` file |
//! | `retry` | [`RetryPolicy`]: connection retry with exponential backoff |
//! | `pool` | many servers at once, connected in the background, with a report of which are down |

pub mod config;
mod error;
mod handler;
mod live;
pub mod pool;
pub mod retry;
mod server_connection;

pub use config::{ConfigError, ServerConfig};
pub use error::{ClientError, Failure};
pub use handler::{
    ElicitAnswer, Elicitation, Elicitor, HostHandler, PINNED_PROTOCOL_VERSION, Progress, ProgressFn,
};
pub use live::{MAX_TOOL_PAGES, MAX_TOOLS, SessionInfo};
pub use retry::RetryPolicy;
pub use server_connection::{ConnectionStatus, ServerConnection};
