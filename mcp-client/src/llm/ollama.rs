//! Ollama `POST /api/chat` (Qwen models are the main users): the request body, and the
//! response — NDJSON lines when streaming, one object otherwise — decoded into events.
//!
//! Tool calls arrive whole, with arguments as an object; servers before 0.12.10 send no ids,
//! so ids are made up (`call_<n>`). Qwen sometimes writes a call as
//! `<tool_call>{"name":..,"arguments":..}</tool_call>` in its text instead: text that starts
//! that way is held back and turned into real calls when the message ends.

use serde_json::{Value, json};

use super::{
    error::{ProviderError, preview},
    event::{FinishReason, StreamEvent, ToolCallRequest},
    format,
    http::Decoder,
    message::{ChatRequest, ToolChoice, Usage},
};

const PROVIDER: &str = super::format::Dialect::Ollama.display_name();
const TAG_OPEN: &str = "<tool_call>";
const TAG_CLOSE: &str = "</tool_call>";

/// The `/api/chat` body.
pub(crate) fn body(model: &str, request: &ChatRequest<'_>, stream: bool) -> Value {
    let messages = format::chat_messages(
        request.messages,
        |call| {
            // Arguments go back as an object: a string breaks Ollama.
            let arguments = if call.args.is_object() {
                call.args.clone()
            } else {
                json!({})
            };
            json!({"id": call.id, "function": {"name": call.name, "arguments": arguments}})
        },
        format::ollama_tool_results,
    );
    let mut body = json!({"model": model, "messages": messages, "stream": stream});
    // Ollama's API has no tool_choice: a named tool is offered alone, which narrows the
    // model's choice but cannot force a call (the CLI refuses `--tool-choice` for Ollama).
    let offered = match &request.tool_choice {
        ToolChoice::None => Vec::new(),
        ToolChoice::Tool(name) => format::ollama_tools(
            &request
                .tools
                .iter()
                .filter(|tool| &tool.name == name)
                .cloned()
                .collect::<Vec<_>>(),
        ),
        ToolChoice::Auto | ToolChoice::Required => format::ollama_tools(request.tools),
    };
    if !offered.is_empty() {
        body["tools"] = Value::Array(offered);
    }
    body
}

/// Decodes `/api/chat` responses, streamed or whole.
#[derive(Debug, Default)]
pub(crate) struct OllamaDecoder {
    calls: usize,
    /// Text that may be a Qwen `<tool_call>` written as text, not yet shown.
    held: String,
    shown_any_text: bool,
    done: bool,
}

impl OllamaDecoder {
    fn text(&mut self, content: &str, out: &mut Vec<StreamEvent>) {
        if content.is_empty() {
            return;
        }
        if self.shown_any_text {
            out.push(StreamEvent::TextDelta(content.to_owned()));
            return;
        }
        self.held.push_str(content);
        let start = self.held.trim_start();
        if start.is_empty() || start.starts_with(TAG_OPEN) || TAG_OPEN.starts_with(start) {
            return;
        }
        self.shown_any_text = true;
        out.push(StreamEvent::TextDelta(std::mem::take(&mut self.held)));
    }

    fn next_id(&mut self) -> String {
        self.calls += 1;
        format!("call_{}", self.calls)
    }

    fn tool_calls(&mut self, calls: &[Value], out: &mut Vec<StreamEvent>) {
        for call in calls {
            let function = call.get("function").unwrap_or(call);
            let name = function
                .get("name")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_owned();
            let id = match call.get("id").and_then(Value::as_str) {
                Some(id) if !id.is_empty() => {
                    self.calls += 1;
                    id.to_owned()
                }
                _ => self.next_id(),
            };
            let arguments = function.get("arguments").cloned().unwrap_or(Value::Null);
            out.push(StreamEvent::ToolCall(ToolCallRequest::from_value(
                id, name, arguments,
            )));
        }
    }

    /// Held-back text that turned out to hold `<tool_call>` blocks becomes calls; anything
    /// else in it is shown as text after all.
    fn release(&mut self, out: &mut Vec<StreamEvent>) {
        let held = std::mem::take(&mut self.held);
        if held.is_empty() {
            return;
        }
        let mut rest = String::new();
        let mut found = Vec::new();
        let mut remaining = held.as_str();
        while let Some(open) = remaining.find(TAG_OPEN) {
            rest.push_str(&remaining[..open]);
            let after = &remaining[open + TAG_OPEN.len()..];
            let Some(close) = after.find(TAG_CLOSE) else {
                rest.push_str(&remaining[open..]);
                remaining = "";
                break;
            };
            let inner = after[..close].trim();
            match serde_json::from_str::<Value>(inner) {
                Ok(call) if call.get("name").and_then(Value::as_str).is_some() => found.push(call),
                _ => {
                    rest.push_str(&remaining[open..open + TAG_OPEN.len() + close + TAG_CLOSE.len()])
                }
            }
            remaining = &after[close + TAG_CLOSE.len()..];
        }
        rest.push_str(remaining);
        let rest = rest.trim();
        if !rest.is_empty() {
            self.shown_any_text = true;
            out.push(StreamEvent::TextDelta(if found.is_empty() {
                held.clone()
            } else {
                rest.to_owned()
            }));
        }
        self.tool_calls(&found, out);
    }
}

impl Decoder for OllamaDecoder {
    fn frame(&mut self, frame: &str, out: &mut Vec<StreamEvent>) -> Result<(), ProviderError> {
        let value: Value = serde_json::from_str(frame).map_err(|err| ProviderError::Protocol {
            provider: PROVIDER,
            detail: format!("a line is not JSON ({err}): {}", preview(frame)),
        })?;
        if let Some(error) = value.get("error") {
            return Err(ProviderError::in_stream(PROVIDER, error));
        }
        let message = value.get("message");
        if let Some(content) = message
            .and_then(|m| m.get("content"))
            .and_then(Value::as_str)
        {
            self.text(content, out);
        }
        let native_calls = message
            .and_then(|m| m.get("tool_calls"))
            .and_then(Value::as_array);
        if let Some(calls) = native_calls {
            self.tool_calls(calls, out);
        }
        if value.get("done").and_then(Value::as_bool) == Some(true) {
            self.release(out);
            let usage = Usage {
                input_tokens: value
                    .get("prompt_eval_count")
                    .and_then(Value::as_u64)
                    .unwrap_or(0),
                output_tokens: value.get("eval_count").and_then(Value::as_u64).unwrap_or(0),
            };
            out.push(StreamEvent::Usage(usage));
            let reason = if self.calls > 0 {
                FinishReason::ToolCalls
            } else {
                FinishReason::from_wire(
                    value
                        .get("done_reason")
                        .and_then(Value::as_str)
                        .unwrap_or("stop"),
                )
            };
            out.push(StreamEvent::Finished(reason));
            self.done = true;
        }
        Ok(())
    }

    fn is_done(&self) -> bool {
        self.done
    }

    fn finish(&mut self, _out: &mut Vec<StreamEvent>) -> Result<(), ProviderError> {
        ProviderError::unless_done(self.done, PROVIDER, "no line with \"done\": true arrived")
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::tools::ToolCall;

    fn decode(frames: &[&str]) -> Result<Vec<StreamEvent>, ProviderError> {
        crate::llm::http::decode_all(OllamaDecoder::default(), frames)
    }

    #[test]
    fn tool_calls_without_ids_get_made_up_ones() {
        let events = decode(&[
            r#"{"message":{"role":"assistant","content":"","tool_calls":[{"function":{"name":"a","arguments":{"x":1}}},{"id":"","function":{"name":"b","arguments":{}}}]},"done":false}"#,
            r#"{"message":{"role":"assistant","content":""},"done":true,"done_reason":"stop","prompt_eval_count":10,"eval_count":3}"#,
        ])
        .unwrap();
        let ids: Vec<&str> = events
            .iter()
            .filter_map(|e| match e {
                StreamEvent::ToolCall(c) => Some(c.call.id.as_str()),
                _ => None,
            })
            .collect();
        assert_eq!(ids, ["call_1", "call_2"]);
        assert_eq!(
            events[2],
            StreamEvent::Usage(Usage {
                input_tokens: 10,
                output_tokens: 3
            })
        );
        assert_eq!(events[3], StreamEvent::Finished(FinishReason::ToolCalls));
    }

    #[test]
    fn qwen_calls_written_as_text_become_calls() {
        let events = decode(&[
            r#"{"message":{"content":"<tool"},"done":false}"#,
            r#"{"message":{"content":"_call>\n{\"name\": \"get_device_status\", \"arguments\": {\"deviceName\": \"Switch One\"}}\n</tool_call>"},"done":false}"#,
            r#"{"message":{"content":""},"done":true}"#,
        ])
        .unwrap();
        assert_eq!(
            events[0],
            StreamEvent::ToolCall(ToolCallRequest {
                call: ToolCall {
                    id: "call_1".into(),
                    name: "get_device_status".into(),
                    args: json!({"deviceName": "Switch One"})
                },
                invalid_arguments: None
            })
        );
        assert!(
            !events
                .iter()
                .any(|e| matches!(e, StreamEvent::TextDelta(_)))
        );
    }

    #[test]
    fn text_that_only_looks_like_a_tag_is_shown() {
        let events = decode(&[
            r#"{"message":{"content":"<tool"},"done":false}"#,
            r#"{"message":{"content":"s> are"},"done":false}"#,
            r#"{"message":{"content":" handy"},"done":true}"#,
        ])
        .unwrap();
        let text: String = events
            .iter()
            .filter_map(|e| match e {
                StreamEvent::TextDelta(t) => Some(t.as_str()),
                _ => None,
            })
            .collect();
        assert_eq!(text, "<tools> are handy");
    }

    #[test]
    fn errors_in_the_stream_and_missing_done_are_reported() {
        let error = decode(&[r#"{"error":"model runner has unexpectedly stopped"}"#]).unwrap_err();
        assert_eq!(
            error.to_string(),
            "Ollama reported an error mid-response: model runner has unexpectedly stopped"
        );
        let garbage = decode(&["<html>502 Bad Gateway</html>"]).unwrap_err();
        assert_eq!(
            garbage.to_string(),
            "Ollama sent something that is not its API's format (a line is not JSON (expected value at line 1 column 1): <html>502 Bad Gateway</html>)"
        );
        let cut = decode(&[r#"{"message":{"content":"Hel"},"done":false}"#]).unwrap_err();
        assert_eq!(
            cut.to_string(),
            "the response from Ollama was cut off before the message was complete (no line with \"done\": true arrived)"
        );
    }
}
