//! The live home as MCP resources, through the binary over both simulated backends: what
//! they list and read (hidden devices read as absent ones), subscriptions that tell of what
//! another party changed (2025-11-25 and 2026-07-28), completions and prompts.

mod complete;
mod read;
mod storm;
mod subscribe;

use serde_json::{Value, json};

use crate::harness::Conversation;

/// The `_meta` every 2026-07-28 request carries.
fn meta() -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "test", "version": "1"},
    })
}

/// The text of each content of a `resources/read` answer: the JSON (parsed) and the text.
fn contents(answer: &Value) -> (Value, String) {
    let contents = answer["result"]["contents"]
        .as_array()
        .unwrap_or_else(|| panic!("no contents: {answer}"));
    assert_eq!(contents.len(), 2, "{answer}");
    assert_eq!(contents[0]["mimeType"], "application/json");
    assert_eq!(contents[1]["mimeType"], "text/plain");
    let json = serde_json::from_str(contents[0]["text"].as_str().unwrap()).unwrap();
    (json, contents[1]["text"].as_str().unwrap().to_owned())
}

/// Reads `uri`; its JSON and text.
fn read(session: &mut Conversation, uri: &str) -> (Value, String) {
    let answer = session.request("resources/read", json!({ "uri": uri }));
    contents(&answer)
}
