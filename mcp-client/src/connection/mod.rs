//! Connections to MCP servers, started (stdio) or remote (Streamable HTTP): connect with retry,
//! restart after a crash or a lost session, time out requests, and shut down cleanly. Every
//! failure says which server and what happened: a process's exit status and the last lines of
//! its stderr, a remote server's HTTP failure and what to check.
//!
//! Locks are never held across an MCP request (one held lock would serialise parallel calls):
//! a call clones the live session's handles out of the lock and then awaits.
//!
//! | module | owns |
//! |---|---|
//! | `server_connection` | [`ServerConnection`]: the state machine (idle, connecting, live, down), restarts with backoff, calls with timeouts and cancellation |
//! | `state` | [`ConnectionStatus`], and the state a connection keeps under its lock |
//! | `call` | one `tools/call` on a session: timeout reset by progress, cancellation, 2026-07-28 rounds of questions, the answer as ours |
//! | `resources` | resources and templates listed, one read, subscriptions to changes: requests the server's capabilities offer |
//! | `subscriptions` | the resources one session is subscribed to: `resources/subscribe`, or one `subscriptions/listen` stream on 2026-07-28 |
//! | `updates` | [`ResourceUpdates`]: the notices of changed resources, a bounded broadcast to the host |
//! | `prompts` | prompts listed and got, completions of an argument's value |
//! | `pages` | every page of a paginated list, bounded |
//! | `session` | what one session is, however reached: `Live`'s handles, [`SessionInfo`], the bounded `tools/list`, a failed attempt |
//! | `live` | a session with a started server: connect once (spawn, `initialize`, `tools/list`), requests, rmcp's errors as ours, close |
//! | `remote` | a session with a remote server (Streamable HTTP): connect once (signed in with OAuth when it asks), the HTTP client's errors as ours |
//! | `handler` | [`HostHandler`]: the identity we announce, progress routing, `tools/list_changed`, the person's answers to a server's questions |
//! | `lifecycle` | which MCP revision a session speaks and how it starts (`server/discover` or `initialize`) |
//! | `error` | [`ClientError`] and [`Failure`], with exit status and stderr |
//! | `config` | the `mcpServers` file |
//! | `retry` | [`RetryPolicy`]: connection retry with exponential backoff |
//! | `pool` | many servers at once, connected in the background, with a report of which are down |

mod call;
pub mod config;
mod error;
mod handler;
pub mod lifecycle;
mod live;
mod pages;
pub mod pool;
mod prompts;
mod remote;
mod resources;
pub mod retry;
mod server_connection;
mod session;
mod state;
mod subscriptions;
mod updates;

pub use call::{MAX_INPUT_ROUNDS, MAX_QUESTIONS_PER_ROUND};
pub use config::{ConfigError, Endpoint, ServerConfig};
pub use error::{ClientError, Failure};
pub use handler::{
    ElicitAnswer, Elicitation, Elicitor, HostHandler, PINNED_PROTOCOL_VERSION, Progress, ProgressFn,
};
pub use lifecycle::NEWEST_PROTOCOL_VERSION;
pub use pages::MAX_PAGES;
pub use prompts::{MAX_COMPLETIONS, MAX_PROMPTS};
pub use resources::MAX_RESOURCES;
pub use retry::RetryPolicy;
pub use server_connection::{ConnectionStatus, ServerConnection};
pub use session::{MAX_TOOL_PAGES, MAX_TOOLS, SessionInfo};
pub use subscriptions::MAX_SUBSCRIPTIONS;
pub use updates::{RESOURCE_UPDATES_KEPT, ResourceUpdate, ResourceUpdates};
