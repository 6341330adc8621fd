//! A server's questions to the user (MCP elicitation) through the library: a pool given an
//! `Elicitor` declares the capability and hands every question to it, and the answer goes
//! back as given; a pool without one declares nothing. Against the Z-Wave server's demo home,
//! whose unlock asks the person (`--allow-sensitive lock`).

use std::sync::{Arc, Mutex};

use mcp_client::{
    McpTools, ServerCommand, ServerConfig, ServerPool, ToolExecutor, ToolManager,
    connection::{ElicitAnswer, Elicitation, Elicitor},
};
use rmcp::model::ProtocolVersion;
use serde_json::json;

/// The revisions a question reaches the person by: `elicitation/create` from the server
/// (2025-11-25), or the answer `InputRequiredResult` and a second call (2026-07-28).
const REVISIONS: [ProtocolVersion; 2] =
    [ProtocolVersion::V_2025_11_25, ProtocolVersion::V_2026_07_28];

fn zwave(revision: &ProtocolVersion, extra: &[&str]) -> ServerConfig {
    let mut args = vec![
        "--demo".to_owned(),
        "--allow-sensitive".to_owned(),
        "lock".to_owned(),
    ];
    args.extend(extra.iter().map(|s| (*s).to_owned()));
    let mut config = ServerConfig::new(ServerCommand::new(
        "zwave",
        test_support::workspace_bin("zwave-mcp-server").to_string_lossy(),
        args,
    ));
    config.protocol_version = Some(revision.clone());
    config
}

/// An elicitor answering `answer` (or never), keeping every question.
fn answering(answer: Option<ElicitAnswer>, asked: &Arc<Mutex<Vec<Elicitation>>>) -> Elicitor {
    let asked = Arc::clone(asked);
    Arc::new(move |question| {
        asked.lock().unwrap().push(question);
        let answer = answer.clone();
        Box::pin(async move {
            match answer {
                Some(answer) => answer,
                None => std::future::pending().await,
            }
        })
    })
}

/// Unlocks the demo's front door through a pool with `elicitor`; the tool's text.
async fn unlock(
    revision: &ProtocolVersion,
    elicitor: Option<Elicitor>,
    extra: &[&str],
) -> (bool, String) {
    let pool = ServerPool::asking(vec![zwave(revision, extra)], elicitor);
    pool.connect_all().await;
    let mut manager = ToolManager::new();
    manager.add_mcp(&McpTools::discover(&pool).await);
    let executor = ToolExecutor::new(manager).with_mcp(pool.clone(), McpTools::normalizer(&pool));
    let outcome = executor
        .execute(
            "control_zwave_device",
            json!({"deviceName": "Front Door Lock", "action": "unlock"}),
        )
        .await;
    pool.shutdown().await;
    match outcome.result {
        Ok(value) => (false, value.to_string()),
        Err(err) => (true, err.to_string()),
    }
}

#[tokio::test]
async fn the_elicitor_is_asked_and_its_answer_decides() {
    for revision in &REVISIONS {
        let asked = Arc::default();
        let (error, text) = unlock(
            revision,
            Some(answering(
                Some(ElicitAnswer::Accept(json!({"confirm": true}))),
                &asked,
            )),
            &[],
        )
        .await;
        assert!(!error, "{revision}: {text}");
        {
            let asked = asked.lock().unwrap();
            assert_eq!(asked.len(), 1, "{revision}");
            assert_eq!(asked[0].server, "zwave");
            assert_eq!(
                asked[0].message,
                "Unlock \"Front Door Lock\" (node 8, Entrance)? An AI agent asks for it (it opens the home)."
            );
            assert_eq!(asked[0].schema["properties"]["confirm"]["type"], "boolean");
        }
        for (answer, why) in [
            (
                ElicitAnswer::Accept(json!({"confirm": false})),
                "the user answered no",
            ),
            (ElicitAnswer::Decline, "the user declined"),
            (ElicitAnswer::Cancel, "the user dismissed the question"),
        ] {
            let (error, text) = unlock(
                revision,
                Some(answering(Some(answer), &Arc::default())),
                &[],
            )
            .await;
            assert!(error, "{revision}: {text}");
            assert!(
                text.ends_with(&format!(
                    "Unlocking \"Front Door Lock\" (node 8, Entrance) needs a person's yes, and {why}: nothing was sent."
                )),
                "{revision}: {text}"
            );
        }
    }
}

#[tokio::test]
async fn no_answer_in_time_and_no_elicitor_send_nothing() {
    // The server waits for the answer only at 2025-11-25; from 2026-07-28 it waits for nothing
    // (its question's state expires instead: see zwave-mcp-server's input_required tests).
    let (error, text) = unlock(
        &ProtocolVersion::V_2025_11_25,
        Some(answering(None, &Arc::default())),
        &["--ask-timeout", "300ms"],
    )
    .await;
    assert!(error, "{text}");
    assert!(
        text.ends_with("needs a person's yes, and nobody answered within 300ms: nothing was sent."),
        "{text}"
    );
    // Without an elicitor the capability is not declared: the server knows nobody can be asked.
    for revision in &REVISIONS {
        let (error, text) = unlock(revision, None, &[]).await;
        assert!(error, "{revision}: {text}");
        assert!(
            text.contains("this client cannot ask its user (it did not declare MCP elicitation)"),
            "{revision}: {text}"
        );
    }
}

/// A server whose one tool, `ask`, asks a form of fields not in name order and answers with
/// what it got.
const ORDERED_FORM_SERVER: &str = r#"
import json, sys
FIELDS = ["zip", "name", "field 10", "field 2", "age"]
def send(message):
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()
pending = None
for line in sys.stdin:
    message = json.loads(line)
    method, request_id = message.get("method"), message.get("id")
    if method == "initialize":
        send({"jsonrpc": "2.0", "id": request_id, "result": {"protocolVersion": message["params"]["protocolVersion"],
              "capabilities": {"tools": {}}, "serverInfo": {"name": "form", "version": "1.0"}}})
    elif method == "tools/list":
        send({"jsonrpc": "2.0", "id": request_id, "result": {"tools": [
            {"name": "ask", "description": "Asks a form", "inputSchema": {"type": "object"}}]}})
    elif method == "tools/call":
        pending = request_id
        properties = {name: {"type": "string", "title": name.title()} for name in FIELDS}
        send({"jsonrpc": "2.0", "id": "form-1", "method": "elicitation/create", "params": {
              "mode": "form", "message": "Your details?",
              "requestedSchema": {"type": "object", "properties": properties}}})
    elif request_id == "form-1" and method is None:
        text = json.dumps(message.get("result"), sort_keys=True)
        send({"jsonrpc": "2.0", "id": pending, "result": {"content": [{"type": "text", "text": text}]}})
"#;

// Issue 31 item 11: a form's fields are asked in the order the server gave them.
#[tokio::test]
async fn a_forms_fields_keep_the_servers_order() {
    let script = crate::harness::scratch_file("ordered_form_server.py");
    std::fs::write(&script, ORDERED_FORM_SERVER).unwrap();
    let config = ServerConfig::new(ServerCommand::new(
        "form",
        "python3",
        [script.to_string_lossy().into_owned()],
    ));
    let asked: Arc<Mutex<Vec<Elicitation>>> = Arc::default();
    let elicitor = answering(
        Some(ElicitAnswer::Accept(json!({"name": "Ann", "zip": "12345"}))),
        &asked,
    );
    let pool = ServerPool::asking(vec![config], Some(elicitor));
    pool.connect_all().await;
    let result = pool
        .get("form")
        .unwrap()
        .call_tool("ask", serde_json::Map::new())
        .await
        .unwrap();
    pool.shutdown().await;
    let text = result.content[0].as_text().unwrap().text.clone();
    assert!(text.contains(r#""name": "Ann""#), "{text}");
    let asked = asked.lock().unwrap();
    let question = &asked[0];
    let order = ["zip", "name", "field 10", "field 2", "age"];
    assert_eq!(question.order, order);
    let fields: Vec<(&str, &str)> = question
        .fields()
        .into_iter()
        .map(|(name, field)| (name.as_str(), field["title"].as_str().unwrap()))
        .collect();
    assert_eq!(
        fields,
        [
            ("zip", "Zip"),
            ("name", "Name"),
            ("field 10", "Field 10"),
            ("field 2", "Field 2"),
            ("age", "Age")
        ]
    );
}
