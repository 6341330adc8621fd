//! The conversation store: every conversation's messages,
//! tool calls, tool results, usage and outcome in an embedded SQLite database, written
//! append-only by a thread of its own so the agent's loop never waits on the disk.
//!
//! | module | owns |
//! |---|---|
//! | `schema` | the tables and their versioned migrations (`PRAGMA user_version`) |
//! | `store` | [`Store`]: the handle a chat holds (a [`Journal`]); opens the database, sends writes, reads |
//! | `writer` | the writer thread: the one write connection, each command in its own transaction |
//! | `reader` | what `history` and `--resume` read back: [`ConversationSummary`], [`StoredConversation`] |
//! | `lease` | one writer per conversation: a chat's claim, renewed while it runs, taken over when its holder is gone |
//! | `error` | [`HistoryError`] with what to do about it, [`WriteFailure`] |
//!
//! [`Journal`]: crate::agent::Journal

mod error;
mod lease;
mod reader;
mod schema;
mod store;
mod writer;

pub use error::{HistoryError, WriteFailure};
pub use lease::{Claim, STALE_AFTER};
pub use reader::{ConversationSummary, StoredConversation};
pub use store::{Store, default_path};
