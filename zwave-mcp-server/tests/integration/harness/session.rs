//! MCP sessions as the tests speak them: the JSON-RPC lines written to the binary and read
//! back from its stdout, and tool calls through an rmcp client.

use std::{process::Output, time::Duration};

use rmcp::{
    ClientHandler, RoleClient,
    model::{CallToolRequestParams, CallToolResult},
    service::RunningService,
};
use serde_json::{Value, json};

/// `initialize`, `notifications/initialized`, then each call as `tools/call` with ids 2, 3, …
pub fn session(calls: &[(&str, Value)]) -> Vec<Value> {
    let mut messages = vec![
        json!({"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"test","version":"1"}}}),
        json!({"jsonrpc":"2.0","method":"notifications/initialized"}),
    ];
    for (i, (tool, args)) in calls.iter().enumerate() {
        messages.push(json!({"jsonrpc":"2.0","id": i + 2,"method":"tools/call","params":{"name": tool, "arguments": args}}));
    }
    messages
}

/// [`session`] with a `tools/list` (id 1) before the calls.
pub fn session_listing_tools(calls: &[(&str, Value)]) -> Vec<Value> {
    let mut messages = session(calls);
    messages.insert(2, json!({"jsonrpc":"2.0","id":1,"method":"tools/list"}));
    messages
}

/// Each message on a line of its own.
pub fn lines(messages: &[Value]) -> String {
    messages
        .iter()
        .map(|message| format!("{message}\n"))
        .collect()
}

/// A `tools/call` of `control_zwave_device` with request id `id`.
pub fn control(id: impl Into<Value>, device: &str, action: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": id.into(), "method": "tools/call", "params": {
        "name": "control_zwave_device", "arguments": {"deviceName": device, "action": action}}})
}

/// The client's `notifications/cancelled` for request `id`.
pub fn cancel(id: impl Into<Value>) -> Value {
    json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": id.into(), "reason": "test"}})
}

/// Every stdout line, each parsed as JSON (a message, or a batch's array).
pub fn messages(output: &Output) -> Vec<Value> {
    let stdout = std::str::from_utf8(&output.stdout).expect("stdout is UTF-8");
    assert!(
        stdout.is_empty() || stdout.ends_with('\n'),
        "stdout ends mid-message: {stdout:?}"
    );
    stdout
        .lines()
        .map(|line| {
            serde_json::from_str(line)
                .unwrap_or_else(|err| panic!("stdout line is not JSON ({err}): {line:?}"))
        })
        .collect()
}

/// Every stdout byte belongs to a newline-terminated JSON-RPC 2.0 message; returns them.
pub fn protocol_messages(output: &Output) -> Vec<Value> {
    let messages = messages(output);
    for message in &messages {
        assert_eq!(message["jsonrpc"], "2.0", "not JSON-RPC: {message}");
        assert!(
            message.get("id").is_some() || message.get("method").is_some(),
            "not a message: {message}"
        );
    }
    messages
}

/// The reply to request `id` among `messages`.
pub fn by_id(messages: &[Value], id: u64) -> &Value {
    messages
        .iter()
        .find(|m| m["id"] == json!(id))
        .unwrap_or_else(|| panic!("no reply to id {id}: {messages:?}"))
}

/// The text of the tool result answering request `id`, and whether it is an error.
pub fn answer(output: &Output, id: impl Into<Value>) -> (bool, String) {
    let id = id.into();
    let messages = messages(output);
    let reply = messages
        .iter()
        .find(|message| message["id"] == id)
        .unwrap_or_else(|| {
            panic!(
                "no answer to {id}: {messages:?}\nstderr: {}",
                String::from_utf8_lossy(&output.stderr)
            )
        });
    result_text(&reply["result"])
}

/// A `tools/call` result's first text and whether it is an error.
pub(super) fn result_text(result: &Value) -> (bool, String) {
    (
        result["isError"] == json!(true),
        result["content"][0]["text"]
            .as_str()
            .unwrap_or_default()
            .to_owned(),
    )
}

/// Calls a tool through an rmcp client, at most 20 s.
pub async fn call<C: ClientHandler>(
    client: &RunningService<RoleClient, C>,
    tool: &str,
    args: Value,
) -> CallToolResult {
    let Value::Object(arguments) = args else {
        panic!("tool arguments must be an object")
    };
    let params = CallToolRequestParams::new(tool.to_owned()).with_arguments(arguments);
    tokio::time::timeout(Duration::from_secs(20), client.call_tool(params))
        .await
        .unwrap_or_else(|_| panic!("{tool} did not answer within 20 s"))
        .unwrap_or_else(|err| panic!("{tool} failed at the protocol level: {err}"))
}

/// The text content of a result, joined.
pub fn text_of(result: &CallToolResult) -> String {
    result
        .content
        .iter()
        .filter_map(|block| block.as_text().map(|text| text.text.clone()))
        .collect::<Vec<_>>()
        .join("\n")
}
