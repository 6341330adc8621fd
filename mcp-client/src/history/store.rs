//! [`Store`]: conversations written by a thread that owns the write connection (each message
//! in its own transaction, so a crash loses at most the message being written), and read
//! back through separate read-only connections (WAL lets readers and the writer work at once).

use std::{
    os::unix::fs::{DirBuilderExt as _, OpenOptionsExt as _},
    path::{Path, PathBuf},
    sync::{Arc, Mutex, PoisonError, mpsc},
    thread,
};

use rusqlite::{Connection, OpenFlags, OptionalExtension as _, params};
use tokio::sync::oneshot;
use tracing::error;

use super::schema::{self, MigrateError};
use crate::{
    agent::{DoneReason, Journal, Outcome},
    llm::{Message, Usage},
};

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
}

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
}

enum Command {
    Begin {
        conversation: String,
        provider: String,
        title: String,
    },
    Message {
        conversation: String,
        turn: u32,
        message: Message,
    },
    Outcome {
        conversation: String,
        outcome: Outcome,
    },
    Flush(oneshot::Sender<()>),
}

/// The conversation store.
#[derive(Debug)]
pub struct Store {
    path: PathBuf,
    commands: Mutex<Option<mpsc::Sender<Command>>>,
    writer: Mutex<Option<thread::JoinHandle<()>>>,
    /// The last write failure, reported by [`Store::flush`].
    failure: Arc<Mutex<Option<String>>>,
}

/// `$XDG_DATA_HOME/mcp-client/history.db`, else `~/.local/share/mcp-client/history.db`.
pub fn default_path(xdg_data_home: Option<&str>, home: Option<&str>) -> Option<PathBuf> {
    let base = match (xdg_data_home.filter(|d| !d.is_empty()), home) {
        (Some(data), _) => PathBuf::from(data),
        (None, Some(home)) if !home.is_empty() => Path::new(home).join(".local/share"),
        _ => return None,
    };
    Some(base.join("mcp-client").join("history.db"))
}

fn now() -> String {
    jiff::Timestamp::now().to_string()
}

impl Store {
    /// Opens (creating it and its folder if needed) the database at `path` and starts its
    /// writer thread. A new folder is private to the user (0700) and a new database too
    /// (0600): conversations hold what was said at home.
    ///
    /// # Errors
    /// The file cannot be created or opened, or it is from a newer client.
    pub fn open(path: &Path) -> Result<Self, HistoryError> {
        let open_error = |reason: String| HistoryError::Open {
            path: path.to_owned(),
            reason,
        };
        if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
            std::fs::DirBuilder::new()
                .recursive(true)
                .mode(0o700)
                .create(parent)
                .map_err(|err| open_error(err.to_string()))?;
        }
        // Created here, private, before SQLite creates it with the umask's permissions (its
        // -wal and -shm files take the database's).
        std::fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(false)
            .mode(0o600)
            .open(path)
            .map_err(|err| open_error(err.to_string()))?;
        let mut connection = Connection::open(path).map_err(|err| open_error(err.to_string()))?;
        connection
            .busy_timeout(std::time::Duration::from_secs(5))
            .and_then(|()| connection.pragma_update(None, "journal_mode", "WAL"))
            .and_then(|()| connection.pragma_update(None, "synchronous", "NORMAL"))
            .map_err(|err| open_error(err.to_string()))?;
        schema::migrate(&mut connection).map_err(|err| match err {
            MigrateError::Newer(found) => HistoryError::Newer {
                path: path.to_owned(),
                found,
                known: schema::VERSION,
            },
            MigrateError::Sqlite(err) => open_error(err.to_string()),
        })?;
        let (sender, receiver) = mpsc::channel();
        let failure = Arc::new(Mutex::new(None));
        let failed = Arc::clone(&failure);
        let writer = thread::Builder::new()
            .name("history-writer".into())
            .spawn(move || write_all(connection, &receiver, &failed))
            .map_err(|err| open_error(format!("cannot start its writer thread: {err}")))?;
        Ok(Self {
            path: path.to_owned(),
            commands: Mutex::new(Some(sender)),
            writer: Mutex::new(Some(writer)),
            failure,
        })
    }

    /// Opens the database at `path` to read it only (`history list`, `history show`): it is
    /// never created, migrated or written, and no folder is made.
    ///
    /// # Errors
    /// It does not exist, cannot be read, or is from a newer client.
    pub fn open_read_only(path: &Path) -> Result<Self, HistoryError> {
        let open_error = |reason: String| HistoryError::Open {
            path: path.to_owned(),
            reason,
        };
        if !path.is_file() {
            return Err(open_error(
                "it does not exist (no conversation has been stored there yet)".to_owned(),
            ));
        }
        let connection = Connection::open_with_flags(path, OpenFlags::SQLITE_OPEN_READ_ONLY)
            .map_err(|err| open_error(err.to_string()))?;
        let found = schema::version(&connection).map_err(|err| open_error(err.to_string()))?;
        if found == 0 {
            return Err(open_error(
                "it holds no conversations yet (it is empty)".to_owned(),
            ));
        }
        if found > schema::VERSION {
            return Err(HistoryError::Newer {
                path: path.to_owned(),
                found,
                known: schema::VERSION,
            });
        }
        Ok(Self {
            path: path.to_owned(),
            commands: Mutex::new(None),
            writer: Mutex::new(None),
            failure: Arc::new(Mutex::new(None)),
        })
    }

    /// The database file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    fn send(&self, command: Command) {
        let commands = self.commands.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(sender) = commands.as_ref()
            && sender.send(command).is_err()
        {
            error!(path = ?self.path, "the history writer has stopped; this conversation is not being saved");
        }
    }

    /// Waits until everything sent so far is written.
    ///
    /// # Errors
    /// A write failed since the store was opened.
    pub async fn flush(&self) -> Result<(), HistoryError> {
        let (done, written) = oneshot::channel();
        self.send(Command::Flush(done));
        let _ = written.await;
        match self
            .failure
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
        {
            Some(reason) => Err(HistoryError::Sqlite {
                path: self.path.clone(),
                reason,
            }),
            None => Ok(()),
        }
    }

    fn reader(&self) -> Result<Connection, HistoryError> {
        Connection::open_with_flags(&self.path, OpenFlags::SQLITE_OPEN_READ_ONLY)
            .map_err(|err| self.sqlite(&err))
    }

    fn sqlite(&self, err: &rusqlite::Error) -> HistoryError {
        HistoryError::Sqlite {
            path: self.path.clone(),
            reason: err.to_string(),
        }
    }

    /// Every conversation, newest first.
    ///
    /// # Errors
    /// The database cannot be read.
    pub fn list(&self) -> Result<Vec<ConversationSummary>, HistoryError> {
        let connection = self.reader()?;
        let mut statement = connection
            .prepare(&format!("{SUMMARY} ORDER BY c.started_at DESC, c.id DESC"))
            .map_err(|err| self.sqlite(&err))?;
        let rows = statement
            .query_map([], summary)
            .map_err(|err| self.sqlite(&err))?;
        rows.collect::<Result<Vec<_>, _>>()
            .map_err(|err| self.sqlite(&err))
    }

    /// One conversation with every message and outcome.
    ///
    /// # Errors
    /// No such conversation, or the database cannot be read.
    pub fn load(&self, id: &str) -> Result<StoredConversation, HistoryError> {
        let connection = self.reader()?;
        let summary = connection
            .query_row(&format!("{SUMMARY} WHERE c.id = ?1"), [id], summary)
            .optional()
            .map_err(|err| self.sqlite(&err))?
            .ok_or_else(|| HistoryError::NotFound(id.to_owned()))?;
        let mut statement = connection
            .prepare("SELECT turn, content FROM messages WHERE conversation_id = ?1 ORDER BY id")
            .map_err(|err| self.sqlite(&err))?;
        let rows: Vec<(u32, String)> = statement
            .query_map([id], |row| Ok((row.get(0)?, row.get(1)?)))
            .and_then(Iterator::collect)
            .map_err(|err| self.sqlite(&err))?;
        let mut messages = Vec::with_capacity(rows.len());
        for (turn, content) in rows {
            let message: Message =
                serde_json::from_str(&content).map_err(|err| HistoryError::Sqlite {
                    path: self.path.clone(),
                    reason: format!("a message of `{id}` cannot be read back: {err}"),
                })?;
            messages.push((turn, message));
        }
        let mut statement = connection
            .prepare(
                "SELECT reason, turns, input_tokens, output_tokens, error FROM outcomes
                 WHERE conversation_id = ?1 ORDER BY id",
            )
            .map_err(|err| self.sqlite(&err))?;
        let outcomes = statement
            .query_map([id], |row| {
                let reason: String = row.get(0)?;
                Ok(Outcome {
                    reason: serde_json::from_value(serde_json::Value::String(reason))
                        .unwrap_or(DoneReason::Error),
                    turns: row.get(1)?,
                    usage: usage(row.get(2)?, row.get(3)?),
                    error: row.get(4)?,
                })
            })
            .and_then(Iterator::collect)
            .map_err(|err| self.sqlite(&err))?;
        Ok(StoredConversation {
            summary,
            messages,
            outcomes,
        })
    }
}

impl Drop for Store {
    fn drop(&mut self) {
        // Closing the channel lets the writer finish what is queued and stop.
        self.commands
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        if let Some(writer) = self
            .writer
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take()
        {
            let _ = writer.join();
        }
    }
}

impl Journal for Store {
    fn begin(&self, conversation: &str, provider: &str, title: &str) {
        self.send(Command::Begin {
            conversation: conversation.to_owned(),
            provider: provider.to_owned(),
            title: title.to_owned(),
        });
    }

    fn message(&self, conversation: &str, turn: u32, message: &Message) {
        self.send(Command::Message {
            conversation: conversation.to_owned(),
            turn,
            message: message.clone(),
        });
    }

    fn outcome(&self, conversation: &str, outcome: &Outcome) {
        self.send(Command::Outcome {
            conversation: conversation.to_owned(),
            outcome: outcome.clone(),
        });
    }
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

/// The writer thread: applies commands until the store is dropped.
fn write_all(
    mut connection: Connection,
    commands: &mpsc::Receiver<Command>,
    failure: &Mutex<Option<String>>,
) {
    while let Ok(command) = commands.recv() {
        if let Command::Flush(done) = command {
            let _ = done.send(());
            continue;
        }
        if let Err(err) = write(&mut connection, command) {
            error!(error = %err, "cannot save to the history database");
            *failure.lock().unwrap_or_else(PoisonError::into_inner) = Some(err.to_string());
        }
    }
}

fn write(connection: &mut Connection, command: Command) -> rusqlite::Result<()> {
    let transaction = connection.transaction()?;
    match command {
        Command::Begin {
            conversation,
            provider,
            title,
        } => {
            transaction.execute(
                "INSERT OR IGNORE INTO conversations (id, started_at, provider, title) VALUES (?1, ?2, ?3, ?4)",
                params![conversation, now(), provider, title],
            )?;
        }
        Command::Message {
            conversation,
            turn,
            message,
        } => {
            let role = match &message {
                Message::System { .. } => "system",
                Message::User { .. } => "user",
                Message::Assistant { .. } => "assistant",
                Message::ToolResults { .. } => "tool_results",
            };
            let content = serde_json::to_string(&message)
                .map_err(|err| rusqlite::Error::ToSqlConversionFailure(Box::new(err)))?;
            transaction.execute(
                "INSERT INTO messages (conversation_id, turn, role, content, created_at) VALUES (?1, ?2, ?3, ?4, ?5)",
                params![conversation, turn, role, content, now()],
            )?;
            let message_id = transaction.last_insert_rowid();
            match &message {
                Message::Assistant { tool_calls, .. } => {
                    for call in tool_calls {
                        transaction.execute(
                            "INSERT INTO tool_calls (message_id, conversation_id, call_id, name, arguments) VALUES (?1, ?2, ?3, ?4, ?5)",
                            params![message_id, conversation, call.id, call.name, call.args.to_string()],
                        )?;
                    }
                }
                Message::ToolResults { results } => {
                    for result in results {
                        transaction.execute(
                            "INSERT INTO tool_results (message_id, conversation_id, call_id, name, content, is_error) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
                            params![message_id, conversation, result.call_id, result.tool_name, result.result.text, result.result.is_error],
                        )?;
                    }
                }
                Message::System { .. } | Message::User { .. } => {}
            }
        }
        Command::Outcome {
            conversation,
            outcome,
        } => {
            transaction.execute(
                "INSERT INTO outcomes (conversation_id, reason, turns, input_tokens, output_tokens, error, finished_at)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
                params![
                    conversation,
                    outcome.reason.as_str(),
                    outcome.turns,
                    outcome.usage.map(|usage| usage.input_tokens),
                    outcome.usage.map(|usage| usage.output_tokens),
                    outcome.error,
                    now()
                ],
            )?;
        }
        Command::Flush(_) => {}
    }
    transaction.commit()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_path_follows_xdg() {
        assert_eq!(
            default_path(Some("/data"), Some("/home/u")),
            Some(PathBuf::from("/data/mcp-client/history.db"))
        );
        assert_eq!(
            default_path(Some(""), Some("/home/u")),
            Some(PathBuf::from("/home/u/.local/share/mcp-client/history.db"))
        );
        assert_eq!(default_path(None, None), None);
    }
}
