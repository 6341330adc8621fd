//! Every tool a host offers a model, local or from a connected MCP server, and the one path
//! every call takes: [`ToolExecutor`](executor::ToolExecutor).
//!
//! | module | owns |
//! |---|---|
//! | `manager` | [`ToolManager`](manager::ToolManager): local and MCP tools under one list of names |
//! | `definition` | local tool definitions (mock, builtin, internal), their files, and why one cannot be used |
//! | `builtins` | the named Rust handlers `builtin` definitions refer to (echo, math, …) |
//! | `mcp_tools` | [`McpTools`]: the servers' tools under provider-safe unique names |
//! | `names` | what makes a tool name valid for every provider |
//! | `normalize` | [`Normalizer`]: snake_case → camelCase and configured argument renames |
//! | `executor` | [`ToolExecutor`](executor::ToolExecutor): lookup → normalize → validate → run with a timeout |
//! | `validate` | arguments checked against the tool's schema, with messages naming the parameter at fault |
//! | `outcome` | [`ToolCall`] in, [`ToolOutcome`] (a value or a [`ToolError`]) out, one per call |
//! | `results` | outcomes as text for a model |
//! | `review` | what is wrong with a tool definition (doctor, mcp-conformance, `ToolManager::add`), and the one verdict scale |
//! | `redact` | arguments as logs show them, secrets as `***` |

pub mod builtins;
pub mod definition;
pub mod executor;
pub mod manager;
mod mcp_tools;
pub mod names;
pub mod normalize;
pub mod outcome;
pub mod redact;
pub mod results;
pub mod review;
mod validate;

pub use mcp_tools::{McpTool, McpTools};
pub use normalize::Normalizer;
pub use outcome::{ToolCall, ToolError, ToolOutcome};
