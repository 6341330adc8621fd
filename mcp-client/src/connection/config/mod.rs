//! The `mcpServers` configuration hosts already use, plus our optional per-server keys.
//!
//! ```json
//! { "mcpServers": { "zwave": {
//!     "command": "zwave-mcp-server", "args": ["--demo"], "env": {"TOKEN": "${TOKEN}"}, "cwd": "/srv",
//!     "timeouts": {"initialize": "60s", "call": "30s"}, "retry": {"attempts": 3, "baseDelay": "2s"},
//!     "parameterMappings": {"control_zwave_device": {"device_name": "deviceName"}},
//!     "toolPrefix": "home", "disabled": false, "maxLineBytes": 16777216 } } }
//! ```
//! The entries are typed by serde; an error names the file, the server and the key path
//! (serde_path_to_error), with the offending value and what would be valid. Unknown keys are
//! ignored with a warning naming them (serde_ignored): hosts add their own.
//!
//! A remote server (MCP Streamable HTTP, feature `http`) has a `url` instead of a `command`,
//! and optionally `"type": "http"` and `headers`:
//! ```json
//! { "mcpServers": { "home": { "type": "http", "url": "https://home.example/mcp",
//!     "headers": {"Authorization": "Bearer ${ZWAVE_MCP_TOKEN}"} } } }
//! ```
//!
//! `${VAR}` (or `${env:VAR}`), `${VAR:-default}` and `${VAR:?message}` are expanded in `command`,
//! each of `args`, each `env` value and `cwd` (Claude Code expands them in the first three), and
//! in `url` and each `headers` value; other keys are taken as written. A `command` holding a `/` but not absolute (`bin/server`,
//! `../target/server`) is taken from `cwd` when one is given, else from the folder of the file, as
//! a relative `cwd` is; a bare name is looked up on `PATH`. The file is read up to
//! [`MAX_CONFIG_BYTES`].
//!
//! | module | owns |
//! |---|---|
//! | `server` | [`ServerConfig`]: one server as the host runs it, and the defaults |
//! | `file` | [`load`], [`parse`]: the file (at most [`MAX_CONFIG_BYTES`]) to servers, errors with their path, unknown keys |
//! | `entry` | the typed shape of one server's entry and its checks |
//! | `remote` | which transport an entry asks for; a remote server's `url` and `headers` (`"type": "sse"` refused) |
//! | `values` | the value grammars: durations, `${VAR}` expansion, the environment |
//! | `llm` | [`LlmSection`]: the optional `"llm"` section for `mcp-client chat` |
//! | `error` | [`ConfigError`] |

mod entry;
mod error;
mod file;
mod llm;
mod remote;
mod server;
mod values;

pub use error::ConfigError;
pub use file::{MAX_CONFIG_BYTES, load, parse};
pub use llm::{LlmSection, load_llm};
pub use server::{DEFAULT_CALL_TIMEOUT, DEFAULT_INIT_TIMEOUT, Endpoint, ServerConfig};
pub(crate) use values::duration;
pub use values::env;
