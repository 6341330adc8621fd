//! The writer thread: it owns the database's one write connection, applies the store's
//! [`Command`]s in order (each in its own IMMEDIATE transaction, so a crash loses at most the
//! message being written), keeps its claims renewed, and keeps the first failure for the
//! next flush. Nothing else writes.

use std::{
    collections::HashSet,
    path::{Path, PathBuf},
    sync::{Arc, Mutex, PoisonError, mpsc},
    thread,
    time::Instant,
};

use rusqlite::{Connection, Transaction, TransactionBehavior, params};
use tokio::sync::oneshot;
use tracing::debug;

use super::{
    error::{HistoryError, WriteFailure},
    lease::{self, Holder, Refused},
};
use crate::{agent::Outcome, llm::Message};

/// What the store asks of its writer.
pub(super) enum Command {
    /// Store a conversation's row (once; a resumed one keeps its first).
    Begin {
        conversation: String,
        provider: String,
        title: String,
    },
    /// Store a message, with its tool calls or results.
    Message {
        conversation: String,
        turn: u32,
        message: Message,
    },
    /// Store how a question ended.
    Outcome {
        conversation: String,
        outcome: Outcome,
    },
    /// Claim a conversation (see `lease`).
    Claim {
        conversation: String,
        done: oneshot::Sender<Result<(), HistoryError>>,
    },
    /// Answer once everything before it is applied.
    Flush(oneshot::Sender<()>),
}

fn now() -> String {
    jiff::Timestamp::now().to_string()
}

/// The writer thread's state: the write connection, and the conversations it claimed.
pub(super) struct Writer {
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
    /// Starts the thread that writes through `connection` to the database at `path`; the
    /// first failure of a write is kept in `failure`. It stops once the returned sender is
    /// dropped and what was sent before is applied.
    pub(super) fn start(
        connection: Connection,
        path: &Path,
        failure: Arc<Mutex<Option<HistoryError>>>,
    ) -> std::io::Result<(mpsc::Sender<Command>, thread::JoinHandle<()>)> {
        let (sender, receiver) = mpsc::channel();
        let writer = Self {
            connection,
            path: path.to_owned(),
            me: Holder::me(),
            claimed: HashSet::new(),
            failure,
            renewed: Instant::now(),
        };
        let thread = thread::Builder::new()
            .name("history-writer".into())
            .spawn(move || writer.run(&receiver))?;
        Ok((sender, thread))
    }

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
        } => insert_message(&transaction, &conversation, turn, &message)?,
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

/// One message, and its tool calls or results, in `transaction`.
fn insert_message(
    transaction: &Transaction<'_>,
    conversation: &str,
    turn: u32,
    message: &Message,
) -> Result<(), WriteError> {
    let role = match message {
        Message::System { .. } => "system",
        Message::User { .. } => "user",
        Message::Assistant { .. } => "assistant",
        Message::ToolResults { .. } => "tool_results",
    };
    let content = serde_json::to_string(message)
        .map_err(|err| rusqlite::Error::ToSqlConversionFailure(Box::new(err)))?;
    transaction.execute(
        "INSERT INTO messages (conversation_id, turn, role, content, created_at) VALUES (?1, ?2, ?3, ?4, ?5)",
        params![conversation, turn, role, content, now()],
    )?;
    let message_id = transaction.last_insert_rowid();
    match message {
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
    Ok(())
}
