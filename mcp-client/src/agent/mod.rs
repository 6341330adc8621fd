//! The agent: a question in, tools called against real MCP servers, an answer out.
//! It knows the provider-neutral message model and the [`ToolExecutor`], never a wire format.
//!
//! | module | owns |
//! |---|---|
//! | `conversation` | [`Agent`] and the tool-call loop; [`Conversation`] (id + messages, call ids unique in it) |
//! | `turn` | the loop's state: what a turn and a question produced so far |
//! | `calls` | one turn's tool calls answered: approvals, concurrent runs, results as they come |
//! | `policy` | [`AgentOptions`]: max turns, refinement, token budget, tool retries |
//! | `event` | [`AgentEvent`]s for hosts and their [`EventSink`], [`Answer`], [`DoneReason`] |
//! | `journal` | the [`Journal`] a store implements and the [`Approver`] a host supplies |
//! | `resume` | a stored conversation made fit to send again (every call answered once) |
//!
//! [`ToolExecutor`]: crate::tools::executor::ToolExecutor

mod calls;
mod conversation;
pub mod event;
mod journal;
pub mod policy;
pub mod resume;
mod turn;

pub use conversation::{Agent, Conversation};
pub use event::{AgentEvent, Answer, DoneReason, EventSink};
pub use journal::{Approver, Journal, Outcome};
pub use policy::{AgentOptions, ToolRetry};
