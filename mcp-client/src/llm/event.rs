//! What a provider's response becomes, whatever its wire format: a stream of these events.
//! Streaming and non-streaming responses produce the same sequence.

use serde::Serialize;

use super::message::Usage;
use crate::tools::ToolCall;

/// One piece of a model's response.
#[derive(Debug, Clone, PartialEq)]
pub enum StreamEvent {
    /// More text of the answer.
    TextDelta(String),
    /// A tool call began (its arguments follow).
    ToolCallStarted {
        /// The call's id.
        id: String,
        /// The tool.
        name: String,
    },
    /// A fragment of a call's JSON arguments.
    ToolCallArgumentsDelta {
        /// The call's id.
        id: String,
        /// The fragment.
        fragment: String,
    },
    /// A tool call is complete.
    ToolCall(ToolCallRequest),
    /// Tokens used by this request; when it comes more than once, the last report is the
    /// request's (each dialect's decoder merges what its server splits across events).
    Usage(Usage),
    /// Why the model stopped. Always the last event of a complete response.
    Finished(FinishReason),
}

/// A complete tool call as the model made it.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolCallRequest {
    /// The call. When the arguments were not valid JSON, `args` holds the raw text.
    pub call: ToolCall,
    /// Why the arguments could not be used, if they could not (the call then gets an error
    /// result the model can read, and is not run).
    pub invalid_arguments: Option<String>,
}

impl ToolCallRequest {
    /// A call whose arguments arrived as a JSON string (OpenAI-compatible servers): parsed
    /// here; an empty string or `null` means no arguments, and an object inside a string
    /// (double-encoded) is taken. Anything else is kept exactly as it came, to go back to
    /// the model as it wrote it beside the error.
    pub fn from_json_text(id: String, name: String, text: &str) -> Self {
        let trimmed = text.trim();
        let problem = match serde_json::from_str::<serde_json::Value>(trimmed) {
            _ if trimmed.is_empty() => return Self::valid(id, name, Default::default()),
            Ok(serde_json::Value::Null) => return Self::valid(id, name, Default::default()),
            Ok(serde_json::Value::Object(args)) => return Self::valid(id, name, args),
            Ok(serde_json::Value::String(inner)) => {
                match serde_json::from_str::<serde_json::Value>(inner.trim()) {
                    Ok(serde_json::Value::Object(args)) => return Self::valid(id, name, args),
                    _ => format!(
                        "the arguments must be a JSON object, got {}",
                        common::clip(trimmed, 80)
                    ),
                }
            }
            Ok(other) => format!(
                "the arguments must be a JSON object, got {}",
                common::clip(&other.to_string(), 80)
            ),
            Err(err) => format!("the arguments are not valid JSON ({err})"),
        };
        Self {
            call: ToolCall {
                id,
                name,
                args: serde_json::Value::String(text.to_owned()),
            },
            invalid_arguments: Some(problem),
        }
    }

    fn valid(id: String, name: String, args: serde_json::Map<String, serde_json::Value>) -> Self {
        Self {
            call: ToolCall {
                id,
                name,
                args: serde_json::Value::Object(args),
            },
            invalid_arguments: None,
        }
    }

    /// A call whose arguments arrived as JSON already (Ollama, Anthropic); they must be an
    /// object (or null, meaning none).
    pub fn from_value(id: String, name: String, args: serde_json::Value) -> Self {
        let (args, invalid_arguments) = match args {
            serde_json::Value::Null => (serde_json::Value::Object(Default::default()), None),
            object @ serde_json::Value::Object(_) => (object, None),
            // Some servers double-encode: an object inside a string.
            serde_json::Value::String(text) => {
                return Self::from_json_text(id, name, &text);
            }
            other => {
                let problem = format!("the arguments must be a JSON object, got {other}");
                (other, Some(problem))
            }
        };
        Self {
            call: ToolCall { id, name, args },
            invalid_arguments,
        }
    }
}

/// Why a model stopped.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum FinishReason {
    /// It finished its answer.
    Stop,
    /// It wants its tool calls run.
    ToolCalls,
    /// It hit the output token limit.
    Length,
    /// Something else, as the provider named it.
    Other(String),
}

impl FinishReason {
    /// The provider's word for it, mapped.
    pub fn from_wire(reason: &str) -> Self {
        match reason {
            "stop" | "end_turn" | "stop_sequence" => Self::Stop,
            "tool_calls" | "tool_use" | "function_call" => Self::ToolCalls,
            "length" | "max_tokens" => Self::Length,
            other => Self::Other(other.to_owned()),
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn arguments_as_text_are_parsed_and_bad_json_is_kept_with_the_reason() {
        let ok = ToolCallRequest::from_json_text("1".into(), "t".into(), r#"{"a": 1}"#);
        assert_eq!(ok.call.args, json!({"a": 1}));
        assert_eq!(ok.invalid_arguments, None);
        let empty = ToolCallRequest::from_json_text("1".into(), "t".into(), "  ");
        assert_eq!(empty.call.args, json!({}));
        let bad = ToolCallRequest::from_json_text("1".into(), "t".into(), r#"{"a": 1"#);
        assert_eq!(bad.call.args, json!(r#"{"a": 1"#));
        assert_eq!(
            bad.invalid_arguments.as_deref(),
            Some(
                "the arguments are not valid JSON (EOF while parsing an object at line 1 column 7)"
            )
        );
    }

    #[test]
    fn a_json_string_that_is_no_object_goes_back_exactly_as_it_came() {
        for text in [r#""hello""#, "42", r#"["a"]"#] {
            let call = ToolCallRequest::from_json_text("1".into(), "t".into(), text);
            assert_eq!(call.call.args, json!(text), "{text}");
            assert_eq!(
                call.invalid_arguments,
                Some(format!("the arguments must be a JSON object, got {text}"))
            );
        }
        let double = ToolCallRequest::from_json_text("1".into(), "t".into(), r#""{\"a\": 3}""#);
        assert_eq!(double.call.args, json!({"a": 3}));
        assert_eq!(double.invalid_arguments, None);
    }

    #[test]
    fn arguments_as_values_must_be_objects() {
        let double = ToolCallRequest::from_value("1".into(), "t".into(), json!(r#"{"a":2}"#));
        assert_eq!(double.call.args, json!({"a": 2}));
        let null = ToolCallRequest::from_value("1".into(), "t".into(), json!(null));
        assert_eq!(null.call.args, json!({}));
        let list = ToolCallRequest::from_value("1".into(), "t".into(), json!([1]));
        assert_eq!(
            list.invalid_arguments.as_deref(),
            Some("the arguments must be a JSON object, got [1]")
        );
    }
}
