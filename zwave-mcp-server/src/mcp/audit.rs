//! What the audit trail says came of a tool call: the outcome a write reports (confirmed,
//! acknowledged, contradicted, superseded), a person asked, failed (the write was tried and
//! the backend or the device said no), unanswered (sent, and no answer came: it may still
//! take effect), or refused and why (nothing was sent).

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
        let text = text();
        return format!("{}: {text}", failure(&text));
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

/// The word for a tool error's `text`: a write tried (`ToolError::Write`, `Ping`: their
/// words begin so) failed or went unanswered; anything else was refused before it was sent.
fn failure(text: &str) -> &'static str {
    if text.starts_with("no answer to the command for ") {
        "unanswered (it may still take effect)"
    } else if text.starts_with("could not switch ") || text.starts_with("could not ping ") {
        "failed"
    } else {
        "refused"
    }
}

#[cfg(test)]
mod tests {
    use rmcp::model::{CallToolResult, ContentBlock};

    use super::*;

    fn said(text: &str) -> String {
        outcome(&Ok(CallToolResponse::Complete(CallToolResult::error(
            vec![ContentBlock::text(text)],
        ))))
    }

    /// Found against the real Z-Wave JS UI: a write the device answered with Fail was
    /// audited as "refused", the word for one never sent.
    #[test]
    fn a_write_tried_is_told_from_one_refused() {
        assert_eq!(
            said(
                "could not switch \"Node 13\": writing true to 13-37-0-targetValue failed with status 2 (Fail)"
            ),
            "failed: could not switch \"Node 13\": writing true to 13-37-0-targetValue failed with status 2 (Fail)"
        );
        assert!(
            said("no answer to the command for \"Switch One\": the connection was lost")
                .starts_with("unanswered (it may still take effect): ")
        );
        assert_eq!(
            said("Unlocking \"Front Door\" is a sensitive action: nothing was sent."),
            "refused: Unlocking \"Front Door\" is a sensitive action: nothing was sent."
        );
    }
}
