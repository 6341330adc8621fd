//! [`Store`]: the handle a chat holds. Writes go to the writer thread (`writer`), which owns
//! the write connection; reads (`reader`) go through separate read-only connections (WAL
//! lets readers and the writer work at once). A chat claims its conversation through the
//! store before it loads it (`lease`): two chats never write one conversation at once. A
//! write that fails is reported by the next [`Store::flush`], with what to do about it.

use std::{
    os::unix::fs::{DirBuilderExt as _, OpenOptionsExt as _},
    path::{Path, PathBuf},
    sync::{Arc, Mutex, PoisonError, mpsc},
    thread,
};

use rusqlite::Connection;
use tokio::sync::oneshot;
use tracing::{debug, error};

use super::{
    error::{HistoryError, WriteFailure},
    reader::{self, ConversationSummary, StoredConversation},
    schema::{self, MigrateError},
    writer::{Command, Writer},
};
use crate::{
    agent::{Journal, Outcome},
    llm::Message,
};

/// `$XDG_DATA_HOME/mcp-client/history.db`, else `~/.local/share/mcp-client/history.db`.
pub fn default_path(xdg_data_home: Option<&str>, home: Option<&str>) -> Option<PathBuf> {
    let base = match (xdg_data_home.filter(|d| !d.is_empty()), home) {
        (Some(data), _) => PathBuf::from(data),
        (None, Some(home)) if !home.is_empty() => Path::new(home).join(".local/share"),
        _ => return None,
    };
    Some(base.join("mcp-client").join("history.db"))
}

/// The conversation store.
#[derive(Debug)]
pub struct Store {
    path: PathBuf,
    commands: Mutex<Option<mpsc::Sender<Command>>>,
    writer: Mutex<Option<thread::JoinHandle<()>>>,
    /// The first write failure since the last [`Store::flush`], which reports it.
    failure: Arc<Mutex<Option<HistoryError>>>,
    /// Read without locking (`immutable=1`): the folder is read-only, so SQLite cannot make
    /// the shared-memory file a WAL database's readers need.
    immutable: bool,
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
        let failure = Arc::new(Mutex::new(None));
        let (sender, writer) = Writer::start(connection, path, Arc::clone(&failure))
            .map_err(|err| open_error(format!("cannot start its writer thread: {err}")))?;
        Ok(Self {
            path: path.to_owned(),
            commands: Mutex::new(Some(sender)),
            writer: Mutex::new(Some(writer)),
            failure,
            immutable: false,
        })
    }

    /// Opens the database at `path` to read it only (`history list`, `history show`): it is
    /// never created, migrated or written, and no folder is made. In a folder that cannot be
    /// written (read-only media, another user's folder) SQLite cannot make the shared-memory
    /// file that readers of a WAL database need; the file is then read as immutable (no
    /// locking), unless its newest part is still in a `-wal` file beside it, which only a
    /// reader that can make that shared memory can read.
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
        let version_of = |immutable: bool| {
            let connection = reader::connect(path, immutable)?;
            schema::version(&connection)
        };
        let (found, immutable) = match version_of(false) {
            Ok(found) => (found, false),
            Err(err) if reader::cannot_write_beside(&err) => {
                let wal = reader::beside(path, "-wal");
                if std::fs::metadata(&wal).is_ok_and(|wal| wal.len() > 0) {
                    return Err(open_error(format!(
                        "{err}: its folder cannot be written, and its newest part is still in {wal:?}, which SQLite reads only with a {:?} file it must create beside it; copy the database and its -wal file into a folder you can write, and give the copy with --history",
                        reader::beside(path, "-shm")
                    )));
                }
                debug!(?path, error = %err, "the history's folder cannot be written: reading the file as immutable");
                (
                    version_of(true).map_err(|err| open_error(err.to_string()))?,
                    true,
                )
            }
            Err(err) => return Err(open_error(err.to_string())),
        };
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
            immutable,
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

    /// Claims `conversation` for this store until it is dropped: another chat's claim is
    /// then refused, and its writes too. Claim a conversation before loading it, so what is
    /// loaded is what the claim protects. A claim whose holder ended (a crash) or went
    /// silent for [`STALE_AFTER`](super::STALE_AFTER) is taken over.
    ///
    /// # Errors
    /// Another chat holds it ([`HistoryError::Busy`]), or the database cannot be written.
    pub async fn claim(&self, conversation: &str) -> Result<(), HistoryError> {
        let (done, claimed) = oneshot::channel();
        self.send(Command::Claim {
            conversation: conversation.to_owned(),
            done,
        });
        claimed.await.unwrap_or_else(|_| {
            Err(HistoryError::Unwritable {
                path: self.path.clone(),
                reason: "it was opened to be read only".to_owned(),
                kind: WriteFailure::Other,
            })
        })
    }

    /// Waits until everything sent so far is written.
    ///
    /// # Errors
    /// A write failed since the last flush: the first such failure (later ones often only
    /// follow from it), reported once.
    pub async fn flush(&self) -> Result<(), HistoryError> {
        let (done, written) = oneshot::channel();
        self.send(Command::Flush(done));
        let _ = written.await;
        match self
            .failure
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take()
        {
            Some(failure) => Err(failure),
            None => Ok(()),
        }
    }

    fn reader(&self) -> Result<Connection, HistoryError> {
        reader::connect(&self.path, self.immutable).map_err(|err| self.sqlite(&err))
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
        reader::list(&self.reader()?).map_err(|err| self.sqlite(&err))
    }

    /// One conversation with every message and outcome.
    ///
    /// # Errors
    /// No such conversation, or the database cannot be read.
    pub fn load(&self, id: &str) -> Result<StoredConversation, HistoryError> {
        reader::load(&self.reader()?, &self.path, id)
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
