//! What a check reads of a server's answer: its JSON-RPC error code, or the answer itself on
//! one line for the evidence (or that none came).

use serde_json::Value;

/// The answer, clipped to one line, or that none came within [`ANSWER_TIMEOUT`].
///
/// [`ANSWER_TIMEOUT`]: crate::session::ANSWER_TIMEOUT
pub(super) fn show(value: &Option<Value>) -> String {
    match value {
        None => "no answer within 10 s".into(),
        Some(value) => common::clip(&value.to_string(), 200),
    }
}

/// The `error.code` of a JSON-RPC response, if it is an error.
pub(super) fn error_code(response: &Value) -> Option<i64> {
    response.get("error")?.get("code")?.as_i64()
}
