//! [`Store`]: conversations written by a thread that owns the write connection (each message
//! in its own IMMEDIATE transaction, so a crash loses at most the message being written), and
//! read back through separate read-only connections (WAL lets readers and the writer work at
//! once). A chat claims its conversation through the store before it loads it (`lease`):
//! two chats never write one conversation at once. A write that fails is reported by the
//! next [`Store::flush`], with what to do about it.

use std::{
    collections::HashSet,
    os::unix::{
        ffi::OsStrExt as _,
        fs::{DirBuilderExt as _, OpenOptionsExt as _},
    },
    path::{Path, PathBuf},
    sync::{Arc, Mutex, PoisonError, mpsc},
    thread,
    time::Instant,
};

use rusqlite::{
    Connection, ErrorCode, OpenFlags, OptionalExtension as _, TransactionBehavior, params,
};
use tokio::sync::oneshot;
use tracing::{debug, error};

use super::{
    lease::{self, Claim, Holder, Refused},
    schema::{self, MigrateError},
};
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
    /// Another chat is writing the conversation (see [`Store::claim`]).
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
    fn of(err: &rusqlite::Error) -> Self {
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
    Claim {
        conversation: String,
        done: oneshot::Sender<Result<(), HistoryError>>,
    },
    Flush(oneshot::Sender<()>),
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
        let writer = Writer {
            connection,
            path: path.to_owned(),
            me: Holder::me(),
            claimed: HashSet::new(),
            failure: Arc::clone(&failure),
            renewed: Instant::now(),
        };
        let writer = thread::Builder::new()
            .name("history-writer".into())
            .spawn(move || writer.run(&receiver))
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
            let connection = reader(path, immutable)?;
            schema::version(&connection)
        };
        let (found, immutable) = match version_of(false) {
            Ok(found) => (found, false),
            Err(err) if cannot_write_beside(&err) => {
                let wal = beside(path, "-wal");
                if std::fs::metadata(&wal).is_ok_and(|wal| wal.len() > 0) {
                    return Err(open_error(format!(
                        "{err}: its folder cannot be written, and its newest part is still in {wal:?}, which SQLite reads only with a {:?} file it must create beside it; copy the database and its -wal file into a folder you can write, and give the copy with --history",
                        beside(path, "-shm")
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
        reader(&self.path, self.immutable).map_err(|err| self.sqlite(&err))
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
            .prepare(
                "SELECT turn, content, created_at FROM messages WHERE conversation_id = ?1 ORDER BY id",
            )
            .map_err(|err| self.sqlite(&err))?;
        let rows: Vec<(u32, String, String)> = statement
            .query_map([id], |row| Ok((row.get(0)?, row.get(1)?, row.get(2)?)))
            .and_then(Iterator::collect)
            .map_err(|err| self.sqlite(&err))?;
        let mut messages = Vec::with_capacity(rows.len());
        let mut stored_at = Vec::with_capacity(rows.len());
        for (turn, content, created_at) in rows {
            stored_at.push(created_at);
            let message: Message =
                serde_json::from_str(&content).map_err(|err| HistoryError::Sqlite {
                    path: self.path.clone(),
                    reason: format!("a message of `{id}` cannot be read back: {err}"),
                })?;
            messages.push((turn, message));
        }
        let mut statement = connection
            .prepare(
                "SELECT reason, turns, input_tokens, output_tokens, error, finished_at FROM outcomes
                 WHERE conversation_id = ?1 ORDER BY id",
            )
            .map_err(|err| self.sqlite(&err))?;
        let rows: Vec<(Outcome, String)> = statement
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
            .map_err(|err| self.sqlite(&err))?;
        let outcome_places = places(&stored_at, rows.iter().map(|(_, at)| at.as_str()));
        Ok(StoredConversation {
            summary,
            messages,
            outcomes: rows.into_iter().map(|(outcome, _)| outcome).collect(),
            outcome_places,
        })
    }
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
fn reader(path: &Path, immutable: bool) -> rusqlite::Result<Connection> {
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
fn cannot_write_beside(err: &rusqlite::Error) -> bool {
    matches!(
        err.sqlite_error_code(),
        Some(ErrorCode::CannotOpen | ErrorCode::ReadOnly | ErrorCode::PermissionDenied)
    )
}

/// `history.db` + `-wal`: SQLite's files beside the database.
fn beside(path: &Path, suffix: &str) -> PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push(suffix);
    PathBuf::from(name)
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

/// The writer thread's state: the write connection, and the conversations it claimed.
struct Writer {
    connection: Connection,
    path: PathBuf,
    me: Holder,
    claimed: HashSet<String>,
    failure: Arc<Mutex<Option<HistoryError>>>,
    renewed: Instant,
}

/// Why a write was not made.
enum WriteError {
    Sqlite(rusqlite::Error),
    Refused(Refused),
    /// A call id already stored in the conversation.
    DuplicateCall(String),
}

impl From<rusqlite::Error> for WriteError {
    fn from(err: rusqlite::Error) -> Self {
        Self::Sqlite(err)
    }
}

impl Writer {
    /// Applies commands until the store is dropped, renewing its claims meanwhile; then
    /// gives them up.
    fn run(mut self, commands: &mpsc::Receiver<Command>) {
        loop {
            match commands.recv_timeout(lease::HEARTBEAT) {
                Ok(command) => self.apply(command),
                Err(mpsc::RecvTimeoutError::Timeout) => {}
                Err(mpsc::RecvTimeoutError::Disconnected) => break,
            }
            if !self.claimed.is_empty() && self.renewed.elapsed() >= lease::HEARTBEAT {
                self.renewed = Instant::now();
                match lease::renew(&self.connection, &self.me, lease::now()) {
                    // One taken over: its next write says so.
                    Ok(held) if held < self.claimed.len() => {
                        debug!(held, claimed = self.claimed.len(), "a claim was taken over");
                    }
                    Ok(_) => {}
                    Err(err) => debug!(error = %err, "cannot renew the claims"),
                }
            }
        }
        if !self.claimed.is_empty()
            && let Err(err) = lease::release(&self.connection, &self.me)
        {
            debug!(error = %err, "cannot give up the claims (they lapse when this process has ended)");
        }
    }

    fn apply(&mut self, command: Command) {
        let conversation = match command {
            Command::Flush(done) => {
                let _ = done.send(());
                return;
            }
            Command::Claim { conversation, done } => {
                let _ = done.send(self.claim(conversation));
                return;
            }
            Command::Begin {
                ref conversation, ..
            }
            | Command::Message {
                ref conversation, ..
            }
            | Command::Outcome {
                ref conversation, ..
            } => conversation.clone(),
        };
        let claimed = self.claimed.contains(&conversation);
        let Err(err) = write(&mut self.connection, &self.me, claimed, command) else {
            return;
        };
        let failure = match err {
            WriteError::Sqlite(err) => HistoryError::NotSaved {
                path: self.path.clone(),
                reason: err.to_string(),
                kind: WriteFailure::of(&err),
            },
            WriteError::Refused(Refused::TakenOver(claim)) => {
                self.claimed.remove(&conversation);
                HistoryError::TakenOver {
                    conversation,
                    claim,
                }
            }
            WriteError::Refused(Refused::Held(claim)) => HistoryError::Busy {
                conversation,
                claim,
            },
            WriteError::DuplicateCall(id) => HistoryError::NotSaved {
                path: self.path.clone(),
                reason: format!(
                    "the call id `{id}` is already stored in conversation `{conversation}`"
                ),
                kind: WriteFailure::Other,
            },
        };
        // Reported by the next flush; the first failure is the cause of those that follow
        // (a conversation row not stored fails each of its messages' foreign keys).
        debug!(error = %failure, "cannot save to the history database");
        let mut first = self.failure.lock().unwrap_or_else(PoisonError::into_inner);
        if first.is_none() {
            *first = Some(failure);
        }
    }

    fn claim(&mut self, conversation: String) -> Result<(), HistoryError> {
        match lease::claim(&mut self.connection, &conversation, &self.me, lease::now()) {
            Ok(Ok(())) => {
                self.claimed.insert(conversation);
                Ok(())
            }
            Ok(Err(claim)) => Err(HistoryError::Busy {
                conversation,
                claim,
            }),
            Err(err) => Err(HistoryError::Unwritable {
                path: self.path.clone(),
                reason: err.to_string(),
                kind: WriteFailure::of(&err),
            }),
        }
    }
}

/// One command in one IMMEDIATE transaction (it reads the claim, then writes: a deferred
/// one could not take the write lock once another chat had written meanwhile), after
/// checking that the conversation is this writer's to write.
fn write(
    connection: &mut Connection,
    me: &Holder,
    claimed: bool,
    command: Command,
) -> Result<(), WriteError> {
    let transaction = connection.transaction_with_behavior(TransactionBehavior::Immediate)?;
    let conversation = match &command {
        Command::Begin { conversation, .. }
        | Command::Message { conversation, .. }
        | Command::Outcome { conversation, .. } => conversation.as_str(),
        Command::Claim { .. } | Command::Flush(_) => return Ok(()),
    };
    lease::check(&transaction, conversation, me, claimed, lease::now())?
        .map_err(WriteError::Refused)?;
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
                        // A call id is stored once per conversation: the results that name
                        // it must find one call.
                        let taken: bool = transaction.query_row(
                            "SELECT EXISTS (SELECT 1 FROM tool_calls WHERE conversation_id = ?1 AND call_id = ?2)",
                            params![conversation, call.id],
                            |row| row.get(0),
                        )?;
                        if taken {
                            return Err(WriteError::DuplicateCall(call.id.clone()));
                        }
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
        Command::Claim { .. } | Command::Flush(_) => {}
    }
    transaction.commit()?;
    Ok(())
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
