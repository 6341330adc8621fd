//! The conversation store (spec 002 "Database Persistence"): every conversation's messages,
//! tool calls, tool results, usage and outcome in an embedded SQLite database, written
//! append-only by a thread of its own so the agent's loop never waits on the disk.
//!
//! | module | owns |
//! |---|---|
//! | `schema` | the tables and their versioned migrations (`PRAGMA user_version`) |
//! | `store` | [`Store`]: the writer thread (a [`Journal`]) and the readers for `history` and `--resume` |
//!
//! [`Journal`]: crate::agent::Journal

mod schema;
mod store;

pub use store::{ConversationSummary, HistoryError, Store, StoredConversation, default_path};
