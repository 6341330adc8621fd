//! The history database's tables. Each migration runs once, in order, in one transaction,
//! and moves `PRAGMA user_version` to its number; a database from a newer client is refused.
//!
//! Rows of conversations are only ever inserted: a resumed conversation gets more messages
//! and another outcome row, and the latest outcome is the conversation's state. Only
//! `leases` (who is writing a conversation now) changes and empties.

use rusqlite::{Connection, TransactionBehavior};

/// The migrations; `MIGRATIONS[n]` takes the schema from version `n` to `n + 1`.
const MIGRATIONS: &[&str] = &[
    // v1: conversations, their messages (the provider-neutral message as JSON), the calls and
    // results those messages hold (for queries), and one outcome per question asked.
    "CREATE TABLE conversations (
        id TEXT PRIMARY KEY,
        started_at TEXT NOT NULL,
        provider TEXT NOT NULL,
        title TEXT NOT NULL
    );
    CREATE TABLE messages (
        id INTEGER PRIMARY KEY,
        conversation_id TEXT NOT NULL REFERENCES conversations(id),
        turn INTEGER NOT NULL,
        role TEXT NOT NULL,
        content TEXT NOT NULL,
        created_at TEXT NOT NULL
    );
    CREATE INDEX messages_by_conversation ON messages(conversation_id, id);
    CREATE TABLE tool_calls (
        id INTEGER PRIMARY KEY,
        message_id INTEGER NOT NULL REFERENCES messages(id),
        conversation_id TEXT NOT NULL,
        call_id TEXT NOT NULL,
        name TEXT NOT NULL,
        arguments TEXT NOT NULL
    );
    CREATE TABLE tool_results (
        id INTEGER PRIMARY KEY,
        message_id INTEGER NOT NULL REFERENCES messages(id),
        conversation_id TEXT NOT NULL,
        call_id TEXT NOT NULL,
        name TEXT NOT NULL,
        content TEXT NOT NULL,
        is_error INTEGER NOT NULL
    );
    CREATE TABLE outcomes (
        id INTEGER PRIMARY KEY,
        conversation_id TEXT NOT NULL REFERENCES conversations(id),
        reason TEXT NOT NULL,
        turns INTEGER NOT NULL,
        input_tokens INTEGER NOT NULL,
        output_tokens INTEGER NOT NULL,
        error TEXT,
        finished_at TEXT NOT NULL
    );
    CREATE INDEX outcomes_by_conversation ON outcomes(conversation_id, id);",
    // v2: an outcome's tokens may be unknown (NULL): a server that streams without saying
    // what it used (llama.cpp) must not be recorded as having used none. SQLite cannot drop
    // NOT NULL in place, so the table is rebuilt.
    "CREATE TABLE outcomes_v2 (
        id INTEGER PRIMARY KEY,
        conversation_id TEXT NOT NULL REFERENCES conversations(id),
        reason TEXT NOT NULL,
        turns INTEGER NOT NULL,
        input_tokens INTEGER,
        output_tokens INTEGER,
        error TEXT,
        finished_at TEXT NOT NULL
    );
    INSERT INTO outcomes_v2 SELECT id, conversation_id, reason, turns, input_tokens,
        output_tokens, error, finished_at FROM outcomes;
    DROP TABLE outcomes;
    ALTER TABLE outcomes_v2 RENAME TO outcomes;
    CREATE INDEX outcomes_by_conversation ON outcomes(conversation_id, id);",
    // v3: who is writing a conversation. A chat claims its conversation before it loads or
    // writes it (one row, taken in an IMMEDIATE transaction), beats its heart while it runs
    // and gives it up when it ends; every write checks the claim in its own transaction.
    // No reference to `conversations`: a new conversation is claimed before its first row.
    // And the calls of a conversation by id, for the check that a call id is stored once.
    "CREATE TABLE leases (
        conversation_id TEXT PRIMARY KEY,
        holder TEXT NOT NULL,
        pid INTEGER NOT NULL,
        host TEXT NOT NULL,
        taken_at TEXT NOT NULL,
        heartbeat_at INTEGER NOT NULL
    );
    CREATE INDEX tool_calls_by_conversation ON tool_calls(conversation_id, call_id);",
];

/// The schema version this client writes.
pub(crate) const VERSION: u32 = MIGRATIONS.len() as u32;

/// Brings `connection`'s schema up to [`VERSION`]. Each step reads the version and migrates
/// inside one IMMEDIATE transaction, so two processes creating the same database at once
/// take turns instead of both creating its tables.
///
/// # Errors
/// The database is from a newer client (`Err(Some(version))`), or SQLite failed.
pub(crate) fn migrate(connection: &mut Connection) -> Result<(), MigrateError> {
    loop {
        let transaction = connection.transaction_with_behavior(TransactionBehavior::Immediate)?;
        let current = version(&transaction)?;
        if current > VERSION {
            return Err(MigrateError::Newer(current));
        }
        let Some(sql) = MIGRATIONS.get(current as usize) else {
            return Ok(()); // Up to date (the transaction ends unused).
        };
        transaction.execute_batch(sql)?;
        transaction.pragma_update(None, "user_version", current + 1)?;
        transaction.commit()?;
    }
}

/// The schema version of the database behind `connection` (0: empty).
pub(crate) fn version(connection: &Connection) -> rusqlite::Result<u32> {
    connection.query_row("PRAGMA user_version", [], |row| row.get(0))
}

/// Why the schema could not be brought up to date.
#[derive(Debug)]
pub(crate) enum MigrateError {
    /// Written by a client with a newer schema.
    Newer(u32),
    /// SQLite failed.
    Sqlite(rusqlite::Error),
}

impl From<rusqlite::Error> for MigrateError {
    fn from(err: rusqlite::Error) -> Self {
        Self::Sqlite(err)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn migrations_run_once_and_newer_databases_are_refused() {
        let mut connection = Connection::open_in_memory().unwrap();
        migrate(&mut connection).unwrap();
        migrate(&mut connection).unwrap();
        let version: u32 = connection
            .query_row("PRAGMA user_version", [], |row| row.get(0))
            .unwrap();
        assert_eq!(version, VERSION);
        connection
            .pragma_update(None, "user_version", VERSION + 1)
            .unwrap();
        assert!(
            matches!(migrate(&mut connection), Err(MigrateError::Newer(v)) if v == VERSION + 1)
        );
    }

    #[test]
    fn processes_creating_one_database_at_once_take_turns() {
        let dir = std::env::temp_dir().join(format!("mcp-client-schema-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("history.db");
        let _ = std::fs::remove_file(&path);
        let barrier = std::sync::Arc::new(std::sync::Barrier::new(8));
        let workers: Vec<_> = (0..8)
            .map(|_| {
                let (path, barrier) = (path.clone(), std::sync::Arc::clone(&barrier));
                std::thread::spawn(move || {
                    let mut connection = Connection::open(&path).unwrap();
                    connection
                        .busy_timeout(std::time::Duration::from_secs(10))
                        .unwrap();
                    barrier.wait();
                    migrate(&mut connection).map_err(|err| format!("{err:?}"))
                })
            })
            .collect();
        for worker in workers {
            assert_eq!(worker.join().unwrap(), Ok(()));
        }
        assert_eq!(version(&Connection::open(&path).unwrap()).unwrap(), VERSION);
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_version_1_database_keeps_its_outcomes_and_then_takes_unknown_usage() {
        let mut connection = Connection::open_in_memory().unwrap();
        connection.execute_batch(MIGRATIONS[0]).unwrap();
        connection.pragma_update(None, "user_version", 1).unwrap();
        connection
            .execute_batch(
                "INSERT INTO conversations VALUES ('c1', '2026-11-01T00:00:00Z', 'ollama', 'hi');
                 INSERT INTO outcomes VALUES (1, 'c1', 'completed', 2, 412, 38, NULL, '2026-11-01T00:00:01Z');",
            )
            .unwrap();
        // Version 1 refuses an outcome whose tokens are unknown.
        let unknown = "INSERT INTO outcomes (conversation_id, reason, turns, input_tokens, output_tokens, finished_at)
             VALUES ('c1', 'completed', 1, NULL, NULL, '2026-11-01T00:00:02Z')";
        assert!(connection.execute(unknown, []).is_err());
        migrate(&mut connection).unwrap();
        let kept: (u32, u64, u64) = connection
            .query_row(
                "SELECT turns, input_tokens, output_tokens FROM outcomes WHERE id = 1",
                [],
                |row| Ok((row.get(0)?, row.get(1)?, row.get(2)?)),
            )
            .unwrap();
        assert_eq!(kept, (2, 412, 38));
        connection.execute(unknown, []).unwrap();
    }
}
