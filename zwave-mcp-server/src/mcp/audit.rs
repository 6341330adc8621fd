//! What the audit trail says came of a tool call: the outcome a write reports (confirmed,
//! acknowledged, contradicted, superseded), a person asked, or refused and why.

use rmcp::model::{CallToolResponse, ErrorData};

/// The outcome of `answer` in a few words.
pub(super) fn outcome(answer: &Result<CallToolResponse, ErrorData>) -> String {
    let result = match answer {
        Err(error) => return format!("refused: {}", error.message),
        Ok(CallToolResponse::Complete(result)) => result,
        Ok(_) => return "waiting for a person's yes (asked with the answer)".to_owned(),
    };
    let text = || {
        result
            .content
            .iter()
            .filter_map(|block| block.as_text().map(|text| text.text.as_str()))
            .collect::<Vec<_>>()
            .join(" ")
    };
    if result.is_error == Some(true) {
        return format!("refused: {}", text());
    }
    match result
        .structured_content
        .as_ref()
        .and_then(|value| value.get("outcome"))
        .and_then(serde_json::Value::as_str)
    {
        Some(outcome) => format!("{outcome}: {}", text()),
        None => format!("done: {}", text()),
    }
}
