//! The conversation store (spec 002 "Database Persistence"): every conversation's messages,
//! tool calls, tool results, usage and outcome in an embedded SQLite database, written
//! append-only by a thread of its own so the agent's loop never waits on the disk.
//!
//! | module | owns |
//! |---|---|
//! | `schema` | the tables and their versioned migrations (`PRAGMA user_version`) |
//! | `store` | [`Store`]: the writer thread (a [`Journal`]) and the readers for `history` and `--resume` |
//! | `lease` | one writer per conversation: a chat's claim, renewed while it runs, taken over when its holder is gone |
//!
//! [`Journal`]: crate::agent::Journal

mod lease;
mod schema;
mod store;

pub use lease::{Claim, STALE_AFTER};
pub use store::{
    ConversationSummary, HistoryError, Store, StoredConversation, WriteFailure, default_path,
};
