//! The conversation store: after every way a question can end, the database holds every text,
//! call and result; a stored conversation can be resumed; its errors say what to do.

use std::sync::Arc;

use mcp_client::{
    agent::{Agent, AgentOptions, Conversation, DoneReason, EventSink},
    history::Store,
    llm::{Dialect, HttpProvider, Message},
    tools::{executor::ToolExecutor, manager::ToolManager},
};
use tokio_util::sync::CancellationToken;

use crate::{
    fake_provider::{FakeProvider, Reply},
    harness::scratch_file,
};

fn ollama(fake: &FakeProvider) -> Arc<HttpProvider> {
    let mut config = fake.provider_config(Dialect::Ollama);
    config.model = "qwen3:8b".into();
    Arc::new(HttpProvider::new(config).unwrap())
}

/// A local tool for the model to call: `control_zwave_device` as a mock.
fn tools() -> ToolExecutor {
    let mut manager = ToolManager::new();
    manager
        .add(
            mcp_client::tools::definition::parse(
                r#"{"name": "control_zwave_device", "description": "switches things",
                    "implementation": {"type": "mock", "mock_response": "dimmed"}}"#,
            )
            .unwrap()
            .remove(0),
        )
        .unwrap();
    ToolExecutor::new(manager)
}

async fn ask(agent: &Agent, conversation: &mut Conversation, question: &str) -> DoneReason {
    let sink: EventSink = Arc::new(|_| {});
    agent
        .ask(conversation, question, &sink, &CancellationToken::new())
        .await
        .reason
}

fn count(path: &std::path::Path, table: &str, conversation: &str) -> i64 {
    let connection = rusqlite::Connection::open(path).unwrap();
    connection
        .query_row(
            &format!("SELECT count(*) FROM {table} WHERE conversation_id = ?1"),
            [conversation],
            |row| row.get(0),
        )
        .unwrap()
}

#[tokio::test]
async fn every_ending_is_stored_with_every_text_call_and_result() {
    let path = scratch_file("history.db");
    let store = Arc::new(Store::open(&path).unwrap());
    let fake = FakeProvider::start(vec![
        // completed: a call, then the answer
        Reply::fixture("ollama/dim-1.ndjson", 50),
        Reply::fixture("ollama/dim-2.ndjson", 50),
        // max turns (1): a call, never answered in text
        Reply::fixture("ollama/dim-1.ndjson", 50),
        // error: the stream is cut
        Reply::fixture("ollama/cut.ndjson", 50),
    ])
    .await;
    let agent = Agent::new(ollama(&fake), tools()).with_journal(Arc::clone(&store) as _);
    let mut completed = Conversation::new();
    assert_eq!(
        ask(&agent, &mut completed, "dim it").await,
        DoneReason::Completed
    );
    let limited = agent.clone().with_options(AgentOptions {
        max_turns: 1,
        ..AgentOptions::default()
    });
    let mut stopped = Conversation::new();
    assert_eq!(
        ask(&limited, &mut stopped, "dim it again").await,
        DoneReason::MaxTurnsReached
    );
    let mut failed = Conversation::new();
    assert_eq!(
        ask(&agent, &mut failed, "and now?").await,
        DoneReason::Error
    );
    let cancel = CancellationToken::new();
    cancel.cancel();
    let mut cancelled = Conversation::new();
    let sink: EventSink = Arc::new(|_| {});
    let answer = agent
        .ask(&mut cancelled, "never mind", &sink, &cancel)
        .await;
    assert_eq!(answer.reason, DoneReason::Cancelled);
    store.flush().await.unwrap();

    let stored = store.load(&completed.id).unwrap();
    assert_eq!(stored.summary.title, "dim it");
    assert_eq!(stored.summary.outcome.as_deref(), Some("completed"));
    assert!(
        stored
            .summary
            .provider
            .starts_with("ollama qwen3:8b at http://127.0.0.1:")
    );
    let messages: Vec<Message> = stored.messages.iter().map(|(_, m)| m.clone()).collect();
    assert_eq!(messages, completed.messages);
    let turns: Vec<u32> = stored.messages.iter().map(|(turn, _)| *turn).collect();
    assert_eq!(turns, [0, 1, 1, 2]);
    assert_eq!(stored.outcomes.len(), 1);
    assert_eq!(stored.outcomes[0].turns, 2);
    assert_eq!(
        stored.outcomes[0].usage.map(|u| u.total()),
        Some(412 + 38 + 520 + 12)
    );
    assert_eq!(count(&path, "tool_calls", &completed.id), 1);
    assert_eq!(count(&path, "tool_results", &completed.id), 1);

    let stopped_stored = store.load(&stopped.id).unwrap();
    assert_eq!(
        stopped_stored.summary.outcome.as_deref(),
        Some("max_turns_reached")
    );
    assert_eq!(stopped_stored.messages.len(), 3, "question, call, result");
    assert_eq!(count(&path, "tool_results", &stopped.id), 1);

    let failed_stored = store.load(&failed.id).unwrap();
    assert_eq!(failed_stored.summary.outcome.as_deref(), Some("error"));
    assert_eq!(
        failed_stored.outcomes[0].error.as_deref(),
        Some(
            "the response from Ollama was cut off before the message was complete (no line with \"done\": true arrived)"
        )
    );
    assert_eq!(
        failed_stored.messages.last().unwrap().1,
        Message::Assistant {
            text: "The light is".into(),
            tool_calls: vec![]
        }
    );
    let cancelled_stored = store.load(&cancelled.id).unwrap();
    assert_eq!(
        cancelled_stored.summary.outcome.as_deref(),
        Some("cancelled")
    );

    let listed: Vec<String> = store.list().unwrap().into_iter().map(|c| c.id).collect();
    assert_eq!(listed.len(), 4);
    for id in [&completed.id, &stopped.id, &failed.id, &cancelled.id] {
        assert!(listed.contains(id));
    }
}

#[tokio::test]
async fn a_resumed_conversation_continues_with_its_history() {
    let path = scratch_file("resume.db");
    let fake = FakeProvider::start(vec![
        Reply::fixture("ollama/dim-1.ndjson", 50),
        Reply::fixture("ollama/dim-2.ndjson", 50),
        Reply::fixture("ollama/refine-3.ndjson", 50),
    ])
    .await;
    let id = {
        let store = Arc::new(Store::open(&path).unwrap());
        let agent = Agent::new(ollama(&fake), tools()).with_journal(Arc::clone(&store) as _);
        let mut conversation = Conversation::new();
        ask(&agent, &mut conversation, "dim it").await;
        store.flush().await.unwrap();
        conversation.id
    };
    // A new process: open the store again and go on.
    let store = Arc::new(Store::open(&path).unwrap());
    let stored = store.load(&id).unwrap();
    let mut conversation = Conversation::resume(
        id.clone(),
        stored.messages.into_iter().map(|(_, m)| m).collect(),
    );
    let agent = Agent::new(ollama(&fake), tools()).with_journal(Arc::clone(&store) as _);
    assert_eq!(
        ask(&agent, &mut conversation, "and switch one?").await,
        DoneReason::Completed
    );
    store.flush().await.unwrap();
    let third = &fake.bodies()[2];
    let messages = third["messages"].as_array().unwrap();
    assert_eq!(messages.len(), 5, "{third}");
    assert_eq!(messages[0]["content"], "dim it");
    assert_eq!(messages[4]["content"], "and switch one?");
    let again = store.load(&id).unwrap();
    assert_eq!(again.messages.len(), 6);
    assert_eq!(again.outcomes.len(), 2);
    assert_eq!(again.summary.title, "dim it");
    assert_eq!(store.list().unwrap().len(), 1);
}

#[tokio::test]
async fn store_errors_say_what_to_do() {
    let path = scratch_file("errors.db");
    let store = Store::open(&path).unwrap();
    assert_eq!(
        store.load("nope").unwrap_err().to_string(),
        "no conversation `nope` in the history (see `mcp-client history list`)"
    );
    drop(store);
    rusqlite::Connection::open(&path)
        .unwrap()
        .pragma_update(None, "user_version", 99)
        .unwrap();
    assert_eq!(
        Store::open(&path).unwrap_err().to_string(),
        format!(
            "the history database {path:?} has schema version 99, newer than this mcp-client's 3: upgrade mcp-client or use another --history PATH"
        )
    );
    let directory = std::env::temp_dir();
    let error = Store::open(&directory).unwrap_err().to_string();
    assert!(
        error.starts_with(&format!("cannot open the history database {directory:?}: ")),
        "{error}"
    );
    assert!(
        error.ends_with("(choose another with --history PATH, or --no-history)"),
        "{error}"
    );
}

#[tokio::test]
async fn the_store_is_private_and_reading_it_creates_nothing() {
    use std::os::unix::fs::PermissionsExt as _;
    let dir = test_support::mosquitto::ScratchDir::new();
    let path = dir.path().join("new").join("history.db");
    drop(Store::open(&path).unwrap());
    let mode = |p: &std::path::Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(path.parent().unwrap()), 0o700);
    assert_eq!(mode(&path), 0o600);

    // Reading a history that is not there makes no file and no folder.
    let absent = dir.path().join("absent").join("history.db");
    assert_eq!(
        Store::open_read_only(&absent).unwrap_err().to_string(),
        format!(
            "cannot open the history database {absent:?}: it does not exist (no conversation has been stored there yet) (choose another with --history PATH, or --no-history)"
        )
    );
    assert!(!absent.parent().unwrap().exists());
    // An empty file is no history either.
    let empty = dir.path().join("empty.db");
    std::fs::write(&empty, b"").unwrap();
    assert_eq!(
        Store::open_read_only(&empty).unwrap_err().to_string(),
        format!(
            "cannot open the history database {empty:?}: it holds no conversations yet (it is empty) (choose another with --history PATH, or --no-history)"
        )
    );
    // A written one reads back, read-only.
    let reader = Store::open_read_only(&path).unwrap();
    assert!(reader.list().unwrap().is_empty());
}

#[tokio::test]
async fn a_turn_stopped_before_its_results_were_stored_resumes_with_each_call_answered() {
    use mcp_client::{agent::Journal as _, tools::ToolCall};
    let path = scratch_file("interrupted.db");
    let store = Arc::new(Store::open(&path).unwrap());
    // What a host killed mid-turn leaves: the calls, one of the two results.
    store.begin("c-interrupted", "ollama qwen3:8b", "switch both");
    store.message("c-interrupted", 0, &Message::user("switch both"));
    let call = |id: &str| ToolCall {
        id: id.into(),
        name: "control_zwave_device".into(),
        args: serde_json::json!({"deviceName": id, "action": "on"}),
    };
    store.message(
        "c-interrupted",
        1,
        &Message::Assistant {
            text: String::new(),
            tool_calls: vec![call("a"), call("b")],
        },
    );
    store.message(
        "c-interrupted",
        1,
        &Message::ToolResults {
            results: vec![mcp_client::llm::ToolResult {
                call_id: "b".into(),
                tool_name: "control_zwave_device".into(),
                result: mcp_client::tools::results::ModelResult {
                    text: "b: on".into(),
                    is_error: false,
                    artifacts: Vec::new(),
                },
            }],
        },
    );
    store.flush().await.unwrap();
    drop(store);

    let stored = Store::open(&path).unwrap().load("c-interrupted").unwrap();
    let mut conversation = Conversation::resume(
        "c-interrupted".into(),
        stored.messages.into_iter().map(|(_, m)| m).collect(),
    );
    let fake = FakeProvider::start(vec![Reply::fixture("ollama/dim-2.ndjson", 50)]).await;
    let agent = Agent::new(ollama(&fake), tools());
    assert_eq!(
        ask(&agent, &mut conversation, "did it work?").await,
        DoneReason::Completed
    );
    // The provider sees each call answered, in call order, before the new question.
    let messages = fake.bodies()[0]["messages"].as_array().unwrap().clone();
    let roles: Vec<&str> = messages
        .iter()
        .map(|m| m["role"].as_str().unwrap())
        .collect();
    assert_eq!(roles, ["user", "assistant", "tool", "tool", "user"]);
    assert_eq!(messages[2]["tool_call_id"], "a");
    assert_eq!(
        messages[2]["content"],
        mcp_client::agent::resume::INTERRUPTED
    );
    assert_eq!(messages[3]["tool_call_id"], "b");
    assert_eq!(messages[3]["content"], "b: on");
}

/// A question's first rows, as the agent writes them.
fn question(store: &Store, conversation: &str, text: &str) {
    use mcp_client::agent::Journal as _;
    store.begin(conversation, "ollama qwen3:8b", text);
    store.message(conversation, 0, &Message::user(text));
}

#[tokio::test]
async fn a_conversation_is_written_by_one_chat_at_a_time() {
    let path = scratch_file("claims.db");
    let first = Store::open(&path).unwrap();
    let second = Store::open(&path).unwrap();
    first.claim("c-claimed").await.unwrap();
    // Claiming again what one holds is fine.
    first.claim("c-claimed").await.unwrap();
    let refused = second.claim("c-claimed").await.unwrap_err().to_string();
    let pid = std::process::id();
    assert!(
        refused.starts_with(&format!(
            "conversation `c-claimed` is open in another chat (process {pid} on this machine, since "
        )),
        "{refused}"
    );
    assert!(
        refused.ends_with(&format!(
            " s ago): two chats writing one conversation would garble it. End that chat first (Ctrl-D in that chat, or `kill {pid}`), or leave out --resume to start a new conversation"
        )),
        "{refused}"
    );
    // Writing it without a claim is refused too, and nothing is stored.
    question(&second, "c-claimed", "sneaking in");
    assert!(matches!(
        second.flush().await,
        Err(mcp_client::history::HistoryError::Busy { .. })
    ));
    question(&first, "c-claimed", "mine");
    first.flush().await.unwrap();
    assert_eq!(count(&path, "messages", "c-claimed"), 1);
    // A chat that ends gives it up.
    drop(first);
    second.claim("c-claimed").await.unwrap();
    question(&second, "c-claimed", "mine now");
    second.flush().await.unwrap();
    assert_eq!(count(&path, "messages", "c-claimed"), 2);
    drop(second);
    let left: i64 = rusqlite::Connection::open(&path)
        .unwrap()
        .query_row("SELECT count(*) FROM leases", [], |row| row.get(0))
        .unwrap();
    assert_eq!(left, 0, "every claim is given up");
}

#[tokio::test]
async fn a_claim_left_by_a_chat_that_died_is_taken_over_and_the_old_holder_stores_nothing_more() {
    let path = scratch_file("stale-claims.db");
    let store = Store::open(&path).unwrap();
    // What a chat killed with SIGKILL leaves: its claim, naming a process that has ended.
    let mut child = std::process::Command::new("true").spawn().unwrap();
    let dead = child.id();
    child.wait().unwrap();
    let hostname = std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap();
    let database = rusqlite::Connection::open(&path).unwrap();
    database
        .execute(
            "INSERT INTO leases VALUES ('c-orphan', 'dead-holder', ?1, ?2, '2026-11-26T05:00:00Z', ?3)",
            rusqlite::params![dead, hostname.trim(), jiff::Timestamp::now().as_second()],
        )
        .unwrap();
    store.claim("c-orphan").await.unwrap();
    question(&store, "c-orphan", "still there?");
    store.flush().await.unwrap();
    // Another chat takes it over (this one was silent past the limit, say): what this one
    // writes from then on is refused, and the flush says so.
    database
        .execute(
            "UPDATE leases SET holder = 'new-holder', pid = ?1, taken_at = '2026-11-26T05:00:00Z'
             WHERE conversation_id = 'c-orphan'",
            [std::process::id()],
        )
        .unwrap();
    question(&store, "c-orphan", "lost");
    let lost = store.flush().await.unwrap_err().to_string();
    assert!(
        lost.starts_with(&format!(
            "this conversation was not saved: another chat (process {} on this machine, since 2026-11-26 05:00:00 UTC, last heard from ",
            std::process::id()
        )),
        "{lost}"
    );
    assert!(
        lost.ends_with(
            "took `c-orphan` over after this chat was not heard from for over 60 s (stopped or suspended?); nothing more of it is stored by this chat. End it, and resume `c-orphan` once the other has ended"
        ),
        "{lost}"
    );
    assert_eq!(count(&path, "messages", "c-orphan"), 1);
    // Reported once: the next flush has nothing new to say.
    store.flush().await.unwrap();
}

#[tokio::test]
async fn a_call_id_is_stored_once_in_a_conversation() {
    use mcp_client::{agent::Journal as _, tools::ToolCall};
    let path = scratch_file("call-ids.db");
    let store = Store::open(&path).unwrap();
    store.claim("c-ids").await.unwrap();
    question(&store, "c-ids", "switch it");
    let calls = Message::Assistant {
        text: String::new(),
        tool_calls: vec![ToolCall {
            id: "c0_2".into(),
            name: "control_zwave_device".into(),
            args: serde_json::json!({}),
        }],
    };
    store.message("c-ids", 1, &calls);
    store.flush().await.unwrap();
    store.message("c-ids", 1, &calls);
    let refused = store.flush().await.unwrap_err().to_string();
    assert!(
        refused.contains("(the call id `c0_2` is already stored in conversation `c-ids`)"),
        "{refused}"
    );
    assert_eq!(count(&path, "tool_calls", "c-ids"), 1);
    assert_eq!(count(&path, "messages", "c-ids"), 2);
}

#[tokio::test]
async fn a_damaged_database_says_so_once_with_what_to_do() {
    let path = scratch_file("damaged.db");
    drop(Store::open(&path).unwrap());
    // Page 2, the root of `conversations`, overwritten.
    let mut bytes = std::fs::read(&path).unwrap();
    bytes[4096..4096 + 64].fill(0xff);
    std::fs::write(&path, bytes).unwrap();
    let store = Store::open(&path).unwrap();
    store.claim("c-damaged").await.unwrap();
    question(&store, "c-damaged", "hi");
    let error = store.flush().await.unwrap_err();
    assert!(matches!(
        error,
        mcp_client::history::HistoryError::NotSaved {
            kind: mcp_client::history::WriteFailure::Damaged,
            ..
        }
    ));
    // The cause, not the foreign keys its missing row then fails.
    assert_eq!(
        error.to_string(),
        format!(
            "this conversation was not saved to the history database {path:?} (database disk image is malformed): the file is damaged; move it aside together with its -wal and -shm files, if any, and the next chat starts a new history there (`sqlite3 FILE .recover` may rescue what it held), or chat with --no-history"
        )
    );
}
