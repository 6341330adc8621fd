//! Typing a JSON-RPC value as the message a client receives, with a shortcut for the message
//! that dominates a session: the result of `tools/call`.
//!
//! rmcp types every result through its untagged `ServerResult`, which buffers the value and
//! tries up to sixteen result types in order before `CallToolResult`, each failure formatting
//! an error message: about half of the client's instructions per call (callgrind, against
//! `mcp-floor`). A result whose keys are all `CallToolResult`'s, `content` among them, is
//! typed as one directly; anything else, and anything the shortcut cannot type, takes rmcp's
//! path, so both give the same message (a test holds them to it).

use rmcp::{
    RoleClient,
    model::{CallToolResult, JsonRpcMessage, JsonRpcResponse, JsonRpcVersion2_0, ServerResult},
    service::RxJsonRpcMessage,
};
use serde::Deserialize as _;
use serde_json::{Map, Value};

/// The keys a `CallToolResult` may have (protocol 2025-11-25 and 2026-07-28).
const CALL_RESULT_KEYS: [&str; 5] = [
    "content",
    "structuredContent",
    "isError",
    "_meta",
    "resultType",
];

/// Types a JSON-RPC 2.0 value as a message a client receives.
///
/// # Errors
/// Why it fits no MCP message.
pub fn to_message(value: Value) -> Result<RxJsonRpcMessage<RoleClient>, String> {
    if let Some(message) = as_tool_result(&value) {
        return Ok(message);
    }
    serde_json::from_value(value).map_err(|err| err.to_string())
}

/// `{"jsonrpc":"2.0","id":…,"result":{"content":…}}` typed as a tool call's result, or `None`
/// when the value is anything else.
fn as_tool_result(value: &Value) -> Option<RxJsonRpcMessage<RoleClient>> {
    let message = value.as_object()?;
    if message.len() != 3 || message.get("jsonrpc")?.as_str()? != "2.0" {
        return None;
    }
    let result = message.get("result")?.as_object()?;
    if !looks_like_call_result(result) {
        return None;
    }
    let id = rmcp::model::RequestId::deserialize(message.get("id")?).ok()?;
    let result = CallToolResult::deserialize(message.get("result")?).ok()?;
    Some(JsonRpcMessage::Response(JsonRpcResponse {
        jsonrpc: JsonRpcVersion2_0,
        id,
        result: ServerResult::CallToolResult(result),
    }))
}

fn looks_like_call_result(result: &Map<String, Value>) -> bool {
    result.contains_key("content")
        && result
            .keys()
            .all(|key| CALL_RESULT_KEYS.contains(&key.as_str()))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    /// A message as rmcp's own path types it, spelled out (rmcp's messages have no `PartialEq`;
    /// `Debug` shows every variant and field).
    fn by_rmcp(value: &Value) -> Result<String, ()> {
        serde_json::from_value::<RxJsonRpcMessage<RoleClient>>(value.clone())
            .map(|message| format!("{message:?}"))
            .map_err(|_| ())
    }

    #[test]
    fn tool_results_are_typed_as_rmcp_types_them() {
        let results = [
            json!({"content": [{"type": "text", "text": "on"}]}),
            json!({"content": [{"type": "text", "text": "no such device"}], "isError": true}),
            json!({"content": [], "structuredContent": {"level": 40}}),
            json!({"content": [], "structuredContent": null}),
            json!({"content": [{"type": "image", "data": "AAAA", "mimeType": "image/png"}], "_meta": {"k": 1}}),
            json!({"content": [{"type": "text", "text": "done"}], "resultType": "complete"}),
            json!({"content": [{"type": "resource_link", "uri": "file:///a", "name": "a"}]}),
        ];
        for (n, result) in results.into_iter().enumerate() {
            for id in [json!(7), json!("call-7")] {
                let value = json!({"jsonrpc": "2.0", "id": id, "result": result});
                let fast = as_tool_result(&value)
                    .unwrap_or_else(|| panic!("result {n} took rmcp's path: {value}"));
                assert!(
                    matches!(&fast, JsonRpcMessage::Response(r) if matches!(r.result, ServerResult::CallToolResult(_))),
                    "result {n}: {fast:?}"
                );
                assert_eq!(
                    Ok(format!("{fast:?}")),
                    by_rmcp(&value),
                    "result {n}: {value}"
                );
            }
        }
    }

    #[test]
    fn anything_else_takes_rmcps_path() {
        let others = [
            // Not a tool result: other results, errors, requests, notifications.
            json!({"jsonrpc": "2.0", "id": 1, "result": {}}),
            json!({"jsonrpc": "2.0", "id": 1, "result": {"tools": []}}),
            json!({"jsonrpc": "2.0", "id": 1, "result": {"contents": []}}),
            json!({"jsonrpc": "2.0", "id": 1, "error": {"code": -32601, "message": "no"}}),
            json!({"jsonrpc": "2.0", "id": 1, "method": "ping"}),
            json!({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}),
            // A key CallToolResult lacks, or a member beside the three.
            json!({"jsonrpc": "2.0", "id": 1, "result": {"content": [], "messages": []}}),
            json!({"jsonrpc": "2.0", "id": 1, "result": {"content": []}, "extra": 1}),
            // Tool-result shaped, but not one: a task still running, an unknown block type.
            json!({"jsonrpc": "2.0", "id": 1, "result": {"content": [], "resultType": "task"}}),
            json!({"jsonrpc": "2.0", "id": 1, "result": {"content": [{"type": "video"}]}}),
            json!({"jsonrpc": "2.0", "id": null, "result": {"content": []}}),
        ];
        for value in others {
            assert!(as_tool_result(&value).is_none(), "{value}");
            // And to_message still types (or refuses) it exactly as rmcp does.
            assert_eq!(
                to_message(value.clone())
                    .map(|message| format!("{message:?}"))
                    .map_err(|_| ()),
                by_rmcp(&value),
                "{value}"
            );
        }
    }
}
