//! How MCP messages reach the server and its answers leave: our JSON-RPC layer under rmcp's
//! service loop. It knows JSON-RPC and MCP's framing rules, not the tools (those are `mcp`'s).
//!
//! | transport | where | built from |
//! |---|---|---|
//! | stdio (the default) | the process's stdin/stdout, as MCP hosts start servers | `stdio` (the private pipes) → `line` (newline-delimited JSON-RPC) → `bounded` |
//!
//! The Streamable HTTP transport goes beside `line` (DESIGN.md, "Reach"); what a line is
//! refused for and how a batch is answered are rules of JSON-RPC messages, not of lines, so
//! `refusal`, `batch` and `bounded` are written to serve it too.
//!
//! | module | owns |
//! |---|---|
//! | `stdio` | the protocol's private stdin/stdout; fd 1 pointed at stderr |
//! | `line` | newline-delimited JSON-RPC on a reader and a writer, with `tools/call` typed directly |
//! | `refusal` | messages refused before typing (not JSON, a key twice, a bad id) and their errors |
//! | `batch` | JSON-RPC batches (MCP 2025-03-26): collecting a batch's answers into one line |
//! | `bounded` | the transport wrapper that bounds requests in flight |

mod batch;
pub(crate) mod bounded;
pub(crate) mod line;
mod refusal;
pub(crate) mod stdio;
