//! How MCP messages reach the server and its answers leave: our JSON-RPC layer under rmcp's
//! service loop. It knows JSON-RPC and MCP's framing rules, not the tools (those are `mcp`'s).
//!
//! | transport | where | built from |
//! |---|---|---|
//! | stdio (the default) | the process's stdin/stdout, as MCP hosts start servers | `stdio` (the private pipes) → `line` (newline-delimited JSON-RPC) → `bounded` |
//! | Streamable HTTP (`--http`) | `/mcp` on a TCP port, for hosts on other machines | `http` (hyper, our checks) → rmcp's `StreamableHttpService` → `bounded` per session |
//!
//! Both transports check each message with `refusal` before rmcp types it (a key twice, a bad
//! id, too many values, a kept part over its budget); `line`'s typed `tools/call` path is
//! stdio's; `bounded` serves both.
//!
//! | module | owns |
//! |---|---|
//! | `stdio` | the protocol's private stdin/stdout; fd 1 pointed at stderr |
//! | `line` | newline-delimited JSON-RPC on a reader and a writer, with `tools/call` typed directly |
//! | `shape` | what one message may hold (bytes, values, depth, the parts kept), walked unparsed |
//! | `refusal` | messages refused before typing (not JSON, a key twice, a bad id, too big) and their errors |
//! | `batch` | JSON-RPC batches (MCP 2025-03-26): collecting a batch's answers into one line |
//! | `bounded` | the transport wrapper that bounds requests in flight |
//! | `http` | MCP Streamable HTTP: the listener, the token, the session cap, rmcp's service |

mod batch;
pub(crate) mod bounded;
pub(crate) mod http;
pub(crate) mod line;
mod refusal;
pub(crate) mod shape;
pub(crate) mod stdio;
