//! Tool outcomes as models read them: text only.
//!
//! MCP results: text content joined; `structuredContent` as JSON when there is no text;
//! images and resources kept aside as artifacts (not sent to the model). Other results:
//! strings as they are, anything else as JSON. Failures: `Error: <message>`, and an unknown
//! tool `Error: Unknown tool "<name>"`. Huge texts can be cut with a visible marker.

use serde_json::Value;

use super::outcome::{ToolError, ToolOutcome};

/// A result ready for a model.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct ModelResult {
    /// The text the model reads.
    pub text: String,
    /// Whether it reports a failure.
    pub is_error: bool,
    /// Content kept from the model (images, embedded resources), as the server sent it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub artifacts: Vec<Value>,
}

/// Normalizes an outcome for a model; `max_chars` cuts long texts with a marker.
pub fn for_model(outcome: &ToolOutcome, max_chars: Option<usize>) -> ModelResult {
    let (text, is_error, artifacts) = match &outcome.result {
        Ok(value) => {
            let (text, artifacts) = result_text(value);
            (text, false, artifacts)
        }
        Err(ToolError::UnknownTool { name }) => {
            (format!("Error: Unknown tool \"{name}\""), true, Vec::new())
        }
        Err(error) => (format!("Error: {error}"), true, Vec::new()),
    };
    ModelResult {
        text: truncate(text, max_chars),
        is_error,
        artifacts,
    }
}

fn result_text(result: &Value) -> (String, Vec<Value>) {
    if let Some(content) = result.get("content").and_then(Value::as_array) {
        let mut texts = Vec::new();
        let mut artifacts = Vec::new();
        for block in content {
            match (
                block.get("type").and_then(Value::as_str),
                block.get("text").and_then(Value::as_str),
            ) {
                (Some("text"), Some(text)) => texts.push(text.to_owned()),
                _ => artifacts.push(block.clone()),
            }
        }
        if texts.is_empty()
            && let Some(structured) = result.get("structuredContent")
        {
            return (structured.to_string(), artifacts);
        }
        return (texts.join("\n"), artifacts);
    }
    match result {
        Value::String(text) => (text.clone(), Vec::new()),
        other => (other.to_string(), Vec::new()),
    }
}

fn truncate(text: String, max_chars: Option<usize>) -> String {
    let Some(max) = max_chars else { return text };
    let total = text.chars().count();
    if total <= max {
        return text;
    }
    let kept: String = text.chars().take(max).collect();
    format!("{kept}\n[… truncated: {} more characters]", total - max)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn success(result: Value) -> ToolOutcome {
        ToolOutcome::new("t", Ok(result), std::time::Instant::now())
    }

    fn failure(error: ToolError) -> ToolOutcome {
        ToolOutcome::new("t", Err(error), std::time::Instant::now())
    }

    #[test]
    fn mcp_text_is_joined_and_artifacts_kept_aside() {
        let outcome = success(json!({"content": [
            {"type": "text", "text": "first"},
            {"type": "image", "data": "AAAA", "mimeType": "image/png"},
            {"type": "text", "text": "second"}
        ]}));
        let result = for_model(&outcome, None);
        assert_eq!(result.text, "first\nsecond");
        assert_eq!(
            result.artifacts,
            [json!({"type": "image", "data": "AAAA", "mimeType": "image/png"})]
        );
        assert!(!result.is_error);
    }

    #[test]
    fn structured_content_objects_and_strings() {
        let only_structured = success(json!({"content": [], "structuredContent": {"a": 1}}));
        assert_eq!(for_model(&only_structured, None).text, r#"{"a":1}"#);
        assert_eq!(
            for_model(&success(json!({"result": 4})), None).text,
            r#"{"result":4}"#
        );
        assert_eq!(for_model(&success(json!("plain")), None).text, "plain");
    }

    #[test]
    fn errors_and_unknown_tools_read_as_errors() {
        let failed = failure(ToolError::Failed("boom".into()));
        assert_eq!(for_model(&failed, None).text, "Error: boom");
        assert!(for_model(&failed, None).is_error);
        let unknown = failure(ToolError::UnknownTool { name: "fly".into() });
        assert_eq!(
            for_model(&unknown, None).text,
            "Error: Unknown tool \"fly\""
        );
        assert!(for_model(&unknown, None).is_error);
    }

    #[test]
    fn long_results_are_cut_with_a_visible_marker() {
        let result = for_model(&success(json!("abcdefghij")), Some(4));
        assert_eq!(result.text, "abcd\n[… truncated: 6 more characters]");
    }
}
