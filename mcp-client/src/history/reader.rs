//! What `history list`, `history show` and `--resume` read back: [`ConversationSummary`] and
//! [`StoredConversation`], read through read-only connections (immutable where the folder
//! cannot be written). Nothing here writes.

use std::{
    os::unix::ffi::OsStrExt as _,
    path::{Path, PathBuf},
};

use rusqlite::{Connection, ErrorCode, OpenFlags, OptionalExtension as _};

use super::error::HistoryError;
use crate::{
    agent::{DoneReason, Outcome},
    llm::{Message, Usage},
};

/// One line of `history list`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConversationSummary {
    /// Its id.
    pub id: String,
    /// When it started (RFC 3339, UTC).
    pub started_at: String,
    /// The model it talked to.
    pub provider: String,
    /// Its first question.
    pub title: String,
    /// How its last question ended (`None` while running, or if the host died).
    pub outcome: Option<String>,
    /// Messages stored.
    pub messages: u64,
    /// Tokens of every question; `None` when a server did not say for one of them.
    pub usage: Option<Usage>,
}

/// A conversation read back in full.
#[derive(Debug, Clone, PartialEq)]
pub struct StoredConversation {
    /// What `history list` shows of it.
    pub summary: ConversationSummary,
    /// Every message, with the turn it belongs to.
    pub messages: Vec<(u32, Message)>,
    /// How each question ended, in order.
    pub outcomes: Vec<Outcome>,
    /// For each of `outcomes`, how many of `messages` were stored before it: where it goes
    /// when the conversation is shown (after its question's messages).
    pub outcome_places: Vec<usize>,
}

/// Every conversation, newest first.
pub(super) fn list(connection: &Connection) -> rusqlite::Result<Vec<ConversationSummary>> {
    let mut statement =
        connection.prepare(&format!("{SUMMARY} ORDER BY c.started_at DESC, c.id DESC"))?;
    let rows = statement.query_map([], summary)?;
    rows.collect()
}

/// Conversation `id` with every message and outcome; `path` names the database in errors.
pub(super) fn load(
    connection: &Connection,
    path: &Path,
    id: &str,
) -> Result<StoredConversation, HistoryError> {
    let sqlite = |err: rusqlite::Error| HistoryError::Sqlite {
        path: path.to_owned(),
        reason: err.to_string(),
    };
    let summary = connection
        .query_row(&format!("{SUMMARY} WHERE c.id = ?1"), [id], summary)
        .optional()
        .map_err(sqlite)?
        .ok_or_else(|| HistoryError::NotFound(id.to_owned()))?;
    let (messages, stored_at): (Vec<(u32, Message)>, Vec<String>) = messages(connection, path, id)?
        .into_iter()
        .map(|(turn, message, stored_at)| ((turn, message), stored_at))
        .unzip();
    let rows = outcomes(connection, id).map_err(sqlite)?;
    let outcome_places = places(&stored_at, rows.iter().map(|(_, at)| at.as_str()));
    Ok(StoredConversation {
        summary,
        messages,
        outcomes: rows.into_iter().map(|(outcome, _)| outcome).collect(),
        outcome_places,
    })
}

/// The messages of conversation `id`, each with its turn and when it was stored.
fn messages(
    connection: &Connection,
    path: &Path,
    id: &str,
) -> Result<Vec<(u32, Message, String)>, HistoryError> {
    let sqlite = |err: rusqlite::Error| HistoryError::Sqlite {
        path: path.to_owned(),
        reason: err.to_string(),
    };
    let mut statement = connection
        .prepare(
            "SELECT turn, content, created_at FROM messages WHERE conversation_id = ?1 ORDER BY id",
        )
        .map_err(sqlite)?;
    let rows: Vec<(u32, String, String)> = statement
        .query_map([id], |row| Ok((row.get(0)?, row.get(1)?, row.get(2)?)))
        .and_then(Iterator::collect)
        .map_err(sqlite)?;
    rows.into_iter()
        .map(|(turn, content, created_at)| {
            let message: Message =
                serde_json::from_str(&content).map_err(|err| HistoryError::Sqlite {
                    path: path.to_owned(),
                    reason: format!("a message of `{id}` cannot be read back: {err}"),
                })?;
            Ok((turn, message, created_at))
        })
        .collect()
}

/// The outcomes of conversation `id`, each with when it finished.
fn outcomes(connection: &Connection, id: &str) -> rusqlite::Result<Vec<(Outcome, String)>> {
    let mut statement = connection.prepare(
        "SELECT reason, turns, input_tokens, output_tokens, error, finished_at FROM outcomes
                 WHERE conversation_id = ?1 ORDER BY id",
    )?;
    statement
        .query_map([id], |row| {
            let reason: String = row.get(0)?;
            Ok((
                Outcome {
                    reason: serde_json::from_value(serde_json::Value::String(reason))
                        .unwrap_or(DoneReason::Error),
                    turns: row.get(1)?,
                    usage: usage(row.get(2)?, row.get(3)?),
                    error: row.get(4)?,
                },
                row.get(5)?,
            ))
        })
        .and_then(Iterator::collect)
}

const SUMMARY: &str = "SELECT c.id, c.started_at, c.provider, c.title,
    (SELECT reason FROM outcomes o WHERE o.conversation_id = c.id ORDER BY o.id DESC LIMIT 1),
    (SELECT count(*) FROM messages m WHERE m.conversation_id = c.id),
    (SELECT CASE WHEN count(*) = count(input_tokens) THEN coalesce(sum(input_tokens), 0) END
        FROM outcomes o WHERE o.conversation_id = c.id),
    (SELECT CASE WHEN count(*) = count(output_tokens) THEN coalesce(sum(output_tokens), 0) END
        FROM outcomes o WHERE o.conversation_id = c.id)
    FROM conversations c";

fn summary(row: &rusqlite::Row<'_>) -> rusqlite::Result<ConversationSummary> {
    Ok(ConversationSummary {
        id: row.get(0)?,
        started_at: row.get(1)?,
        provider: row.get(2)?,
        title: row.get(3)?,
        outcome: row.get(4)?,
        messages: row.get(5)?,
        usage: usage(row.get(6)?, row.get(7)?),
    })
}

/// Usage as stored: both columns, or NULL where it is unknown.
fn usage(input_tokens: Option<u64>, output_tokens: Option<u64>) -> Option<Usage> {
    Some(Usage {
        input_tokens: input_tokens?,
        output_tokens: output_tokens?,
    })
}

/// Where each outcome goes among the messages: after those stored before it finished. The
/// writer stores a question's messages, then its outcome, in order, each with the time.
fn places<'a>(messages: &[String], finished: impl Iterator<Item = &'a str>) -> Vec<usize> {
    let time = |text: &str| text.parse::<jiff::Timestamp>().ok();
    let messages: Vec<Option<jiff::Timestamp>> = messages.iter().map(|at| time(at)).collect();
    let mut place = 0;
    finished
        .map(|at| {
            match time(at) {
                Some(finished) => {
                    while messages
                        .get(place)
                        .is_some_and(|stored| stored.is_none_or(|stored| stored <= finished))
                    {
                        place += 1;
                    }
                }
                None => place = messages.len(),
            }
            place
        })
        .collect()
}

/// A read-only connection to `path`; `immutable`: without locking or the shared memory.
pub(super) fn connect(path: &Path, immutable: bool) -> rusqlite::Result<Connection> {
    if immutable {
        Connection::open_with_flags(
            immutable_uri(path),
            OpenFlags::SQLITE_OPEN_READ_ONLY
                | OpenFlags::SQLITE_OPEN_URI
                | OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )
    } else {
        Connection::open_with_flags(path, OpenFlags::SQLITE_OPEN_READ_ONLY)
    }
}

/// `file:/abs/path?immutable=1`, the path's bytes percent-encoded where a URI needs it.
fn immutable_uri(path: &Path) -> String {
    use std::fmt::Write as _;
    let absolute = std::path::absolute(path).unwrap_or_else(|_| path.to_owned());
    let mut uri = String::from("file:");
    for &byte in absolute.as_os_str().as_bytes() {
        if byte.is_ascii_alphanumeric() || b"-._~/".contains(&byte) {
            uri.push(char::from(byte));
        } else {
            let _ = write!(uri, "%{byte:02X}");
        }
    }
    uri.push_str("?immutable=1");
    uri
}

/// Whether opening for reading failed because SQLite could not make a file beside the
/// database (its folder cannot be written).
pub(super) fn cannot_write_beside(err: &rusqlite::Error) -> bool {
    matches!(
        err.sqlite_error_code(),
        Some(ErrorCode::CannotOpen | ErrorCode::ReadOnly | ErrorCode::PermissionDenied)
    )
}

/// `history.db` + `-wal`: SQLite's files beside the database.
pub(super) fn beside(path: &Path, suffix: &str) -> PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push(suffix);
    PathBuf::from(name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_outcome_goes_after_the_messages_stored_before_it() {
        let at = |s: &str| format!("2026-11-26T05:46:{s}Z");
        let messages = [
            at("01"),
            at("01.5"),
            at("02"),
            at("10"),
            "not a time".to_owned(),
            at("12"),
        ];
        let finished = [at("03"), at("11"), at("13")];
        assert_eq!(
            places(&messages, finished.iter().map(String::as_str)),
            [3, 5, 6]
        );
        // A question whose host died has no outcome: the next one still goes after its own.
        let finished = [at("11")];
        assert_eq!(places(&messages, finished.iter().map(String::as_str)), [5]);
        assert_eq!(places(&messages, ["?"].into_iter()), [6]);
    }

    #[test]
    fn an_immutable_uri_keeps_every_path_readable() {
        assert_eq!(
            immutable_uri(Path::new("/media/usb/my history?#%.db")),
            "file:/media/usb/my%20history%3F%23%25.db?immutable=1"
        );
        let relative = immutable_uri(Path::new("history.db"));
        assert!(relative.starts_with("file:/"), "{relative}");
        assert!(relative.ends_with("/history.db?immutable=1"), "{relative}");
    }
}
