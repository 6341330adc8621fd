//! The agent: a question in, tools called against real MCP servers, an answer out (specs 000,
//! 002, 004). It knows the provider-neutral message model and the [`ToolExecutor`], never a
//! wire format.
//!
//! | module | owns |
//! |---|---|
//! | `conversation` | [`Agent`] and the tool-call loop; [`Conversation`] (id + messages) |
//! | `calls` | one turn's tool calls answered: unique ids, approvals, concurrent runs, results as they come |
//! | `policy` | [`AgentOptions`]: max turns, refinement (spec 004), token budget, tool retries |
//! | `event` | [`AgentEvent`]s for hosts, [`Answer`], [`DoneReason`] |
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

pub use conversation::{Agent, Conversation, EventSink};
pub use event::{AgentEvent, Answer, DoneReason};
pub use journal::{Approver, Journal, Outcome};
pub use policy::{AgentOptions, ToolRetry};
