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
            "the history database {path:?} has schema version 99, newer than this mcp-client's 2: upgrade mcp-client or use another --history PATH"
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
