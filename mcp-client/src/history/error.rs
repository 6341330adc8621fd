//! [`HistoryError`]: why the history could not be used, with what to do about it, and
//! [`WriteFailure`], the kinds of failed writes the advice depends on.

use std::path::PathBuf;

use rusqlite::ErrorCode;

use super::lease::{self, Claim};

/// Why the history could not be used.
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum HistoryError {
    /// The database cannot be opened or created.
    #[error(
        "cannot open the history database {path:?}: {reason} (choose another with --history PATH, or --no-history)"
    )]
    Open {
        /// The file.
        path: PathBuf,
        /// Why.
        reason: String,
    },
    /// The database was written by a newer mcp-client.
    #[error(
        "the history database {path:?} has schema version {found}, newer than this mcp-client's {known}: upgrade mcp-client or use another --history PATH"
    )]
    Newer {
        /// The file.
        path: PathBuf,
        /// Its version.
        found: u32,
        /// Ours.
        known: u32,
    },
    /// No conversation has that id.
    #[error("no conversation `{0}` in the history (see `mcp-client history list`)")]
    NotFound(String),
    /// Reading or writing failed.
    #[error("the history database {path:?} failed: {reason}")]
    Sqlite {
        /// The file.
        path: PathBuf,
        /// What SQLite said.
        reason: String,
    },
    /// Another chat is writing the conversation (see [`Store::claim`](super::Store::claim)).
    #[error("{}", busy(.conversation, .claim))]
    Busy {
        /// The conversation.
        conversation: String,
        /// Who holds it.
        claim: Claim,
    },
    /// The database cannot be written (when a conversation is claimed).
    #[error("cannot write the history database {path:?} ({reason}): {}", kind.advice())]
    Unwritable {
        /// The file.
        path: PathBuf,
        /// What SQLite said.
        reason: String,
        /// What kind of failure, for the advice.
        kind: WriteFailure,
    },
    /// Part of a conversation could not be stored.
    #[error("this conversation was not saved to the history database {path:?} ({reason}): {}", kind.advice())]
    NotSaved {
        /// The file.
        path: PathBuf,
        /// What SQLite said.
        reason: String,
        /// What kind of failure, for the advice.
        kind: WriteFailure,
    },
    /// Another chat took the conversation over after this one went silent for longer than
    /// [`STALE_AFTER`](super::STALE_AFTER); nothing more of it is stored by this one.
    #[error("{}", taken_over(.conversation, .claim.as_ref()))]
    TakenOver {
        /// The conversation.
        conversation: String,
        /// Who holds it now (none: it was taken over and given up since).
        claim: Option<Claim>,
    },
}

/// Why the database could not be written, for what to do about it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum WriteFailure {
    /// The file is damaged (`database disk image is malformed`, not a database).
    Damaged,
    /// The disk is full.
    Full,
    /// The file or its folder cannot be written.
    NotWritable,
    /// Another process kept it locked past the busy timeout.
    Locked,
    /// Anything else.
    Other,
}

impl WriteFailure {
    pub(super) fn of(err: &rusqlite::Error) -> Self {
        match err.sqlite_error_code() {
            Some(ErrorCode::DatabaseCorrupt | ErrorCode::NotADatabase) => Self::Damaged,
            Some(ErrorCode::DiskFull) => Self::Full,
            Some(ErrorCode::ReadOnly | ErrorCode::CannotOpen | ErrorCode::PermissionDenied) => {
                Self::NotWritable
            }
            Some(ErrorCode::DatabaseBusy | ErrorCode::DatabaseLocked) => Self::Locked,
            _ => Self::Other,
        }
    }

    /// What to do.
    fn advice(self) -> &'static str {
        match self {
            Self::Damaged => {
                "the file is damaged; move it aside together with its -wal and -shm files, if any, and the next chat starts a new history there (`sqlite3 FILE .recover` may rescue what it held), or chat with --no-history"
            }
            Self::Full => "the disk is full; free some space, or chat with --no-history",
            Self::NotWritable => {
                "it cannot be written here; check the permissions of the file and its folder, choose another with --history PATH, or chat with --no-history"
            }
            Self::Locked => "another process kept it locked; try again, or chat with --no-history",
            Self::Other => "choose another with --history PATH, or chat with --no-history",
        }
    }
}

fn busy(conversation: &str, claim: &Claim) -> String {
    let end = if claim.here {
        format!("Ctrl-D in that chat, or `kill {}`", claim.pid)
    } else {
        format!(
            "Ctrl-D in that chat; one that stopped without ending frees it {} s after it was last heard from",
            lease::STALE_AFTER.as_secs()
        )
    };
    format!(
        "conversation `{conversation}` is open in another chat ({}): two chats writing one conversation would garble it. End that chat first ({end}), or leave out --resume to start a new conversation",
        claim.describe()
    )
}

fn taken_over(conversation: &str, claim: Option<&Claim>) -> String {
    let who = claim.map_or_else(
        || "another chat, since ended,".to_owned(),
        |claim| format!("another chat ({})", claim.describe()),
    );
    format!(
        "this conversation was not saved: {who} took `{conversation}` over after this chat was not heard from for over {} s (stopped or suspended?); nothing more of it is stored by this chat. End it, and resume `{conversation}` once the other has ended",
        lease::STALE_AFTER.as_secs()
    )
}
