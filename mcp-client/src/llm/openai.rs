//! OpenAI Chat Completions and compatible servers (vLLM, llama.cpp server, LM Studio): the
//! request body, and the response — SSE chunks ending in `data: [DONE]` when streaming, one
//! object otherwise — decoded into events.
//!
//! Streamed tool calls arrive as deltas keyed by `index`: the first names the call and its
//! id, later ones carry fragments of the arguments' JSON text, concatenated here. A call is
//! complete when the choice finishes.

use std::collections::BTreeMap;

use serde_json::{Value, json};

use super::{
    error::{ProviderError, preview},
    event::{FinishReason, StreamEvent, ToolCallRequest},
    format,
    http::Decoder,
    message::{ChatRequest, ToolChoice, Usage},
};

const PROVIDER: &str = super::format::Dialect::OpenAi.display_name();

/// The `/chat/completions` body.
pub(crate) fn body(
    model: &str,
    request: &ChatRequest<'_>,
    stream: bool,
    max_tokens: Option<u32>,
) -> Value {
    let messages = format::chat_messages(
        request.messages,
        |call| {
            // Arguments that were not valid JSON go back exactly as they came.
            let arguments = match &call.args {
                Value::String(raw) => raw.clone(),
                other => other.to_string(),
            };
            json!({"id": call.id, "type": "function", "function": {"name": call.name, "arguments": arguments}})
        },
        format::openai_tool_results,
    );
    let mut body = json!({"model": model, "messages": messages, "stream": stream});
    if stream {
        body["stream_options"] = json!({"include_usage": true});
    }
    if let Some(max) = max_tokens {
        body["max_tokens"] = json!(max);
    }
    if request.tool_choice.offers_tools() && !request.tools.is_empty() {
        body["tools"] = Value::Array(format::openai_tools(request.tools));
        match &request.tool_choice {
            ToolChoice::Required => body["tool_choice"] = json!("required"),
            ToolChoice::Tool(name) => {
                body["tool_choice"] = json!({"type": "function", "function": {"name": name}});
            }
            ToolChoice::Auto | ToolChoice::None => {}
        }
    }
    body
}

#[derive(Debug, Default)]
struct PartialCall {
    id: String,
    name: String,
    arguments: String,
}

/// Decodes Chat Completions responses, streamed or whole.
#[derive(Debug, Default)]
pub(crate) struct OpenAiDecoder {
    calls: BTreeMap<u64, PartialCall>,
    finish: Option<FinishReason>,
    done: bool,
}

impl OpenAiDecoder {
    fn complete_calls(&mut self, out: &mut Vec<StreamEvent>) {
        for (index, call) in std::mem::take(&mut self.calls) {
            let id = if call.id.is_empty() {
                format!("call_{index}")
            } else {
                call.id
            };
            out.push(StreamEvent::ToolCall(ToolCallRequest::from_json_text(
                id,
                call.name,
                &call.arguments,
            )));
        }
    }

    /// Which call a tool-call delta belongs to: its `index`, or, from a server that sends
    /// none, the last open call — unless the delta carries an id of its own (a new call).
    fn index_of(&self, delta: &Value) -> u64 {
        if let Some(index) = delta.get("index").and_then(Value::as_u64) {
            return index;
        }
        let id = delta
            .get("id")
            .and_then(Value::as_str)
            .filter(|id| !id.is_empty());
        match self.calls.last_key_value() {
            None => 0,
            Some((&last, open)) if id.is_none_or(|id| open.id.is_empty() || open.id == id) => last,
            Some((&last, _)) => last.saturating_add(1),
        }
    }

    fn usage(value: &Value, out: &mut Vec<StreamEvent>) {
        if let Some(usage) = value.get("usage").filter(|u| u.is_object()) {
            out.push(StreamEvent::Usage(Usage {
                input_tokens: usage
                    .get("prompt_tokens")
                    .and_then(Value::as_u64)
                    .unwrap_or(0),
                output_tokens: usage
                    .get("completion_tokens")
                    .and_then(Value::as_u64)
                    .unwrap_or(0),
            }));
        }
    }

    fn chunk(&mut self, value: &Value, out: &mut Vec<StreamEvent>) {
        let choice = value
            .get("choices")
            .and_then(Value::as_array)
            .and_then(|choices| choices.first());
        if let Some(choice) = choice {
            let delta = choice.get("delta").unwrap_or(&Value::Null);
            if let Some(text) = delta.get("content").and_then(Value::as_str)
                && !text.is_empty()
            {
                out.push(StreamEvent::TextDelta(text.to_owned()));
            }
            for call in delta
                .get("tool_calls")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                let index = self.index_of(call);
                let partial = self.calls.entry(index).or_default();
                let function = call.get("function").unwrap_or(&Value::Null);
                if let Some(id) = call.get("id").and_then(Value::as_str)
                    && partial.id.is_empty()
                {
                    partial.id = id.to_owned();
                }
                if let Some(name) = function.get("name").and_then(Value::as_str)
                    && partial.name.is_empty()
                {
                    partial.name = name.to_owned();
                    out.push(StreamEvent::ToolCallStarted {
                        id: partial.id.clone(),
                        name: partial.name.clone(),
                    });
                }
                if let Some(fragment) = function.get("arguments").and_then(Value::as_str)
                    && !fragment.is_empty()
                {
                    partial.arguments.push_str(fragment);
                    out.push(StreamEvent::ToolCallArgumentsDelta {
                        id: partial.id.clone(),
                        fragment: fragment.to_owned(),
                    });
                }
            }
            if let Some(reason) = choice.get("finish_reason").and_then(Value::as_str) {
                self.complete_calls(out);
                self.finish = Some(FinishReason::from_wire(reason));
            }
        }
        Self::usage(value, out);
    }

    fn whole(&mut self, value: &Value, out: &mut Vec<StreamEvent>) {
        let choice = value
            .get("choices")
            .and_then(Value::as_array)
            .and_then(|choices| choices.first());
        let message = choice
            .and_then(|c| c.get("message"))
            .unwrap_or(&Value::Null);
        if let Some(text) = message.get("content").and_then(Value::as_str)
            && !text.is_empty()
        {
            out.push(StreamEvent::TextDelta(text.to_owned()));
        }
        for (index, call) in message
            .get("tool_calls")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .enumerate()
        {
            let function = call.get("function").unwrap_or(&Value::Null);
            let id = call
                .get("id")
                .and_then(Value::as_str)
                .map_or_else(|| format!("call_{index}"), str::to_owned);
            let name = function
                .get("name")
                .and_then(Value::as_str)
                .unwrap_or_default();
            let request = match function.get("arguments") {
                Some(Value::String(text)) => {
                    ToolCallRequest::from_json_text(id, name.to_owned(), text)
                }
                Some(other) => ToolCallRequest::from_value(id, name.to_owned(), other.clone()),
                None => ToolCallRequest::from_value(id, name.to_owned(), Value::Null),
            };
            out.push(StreamEvent::ToolCall(request));
        }
        Self::usage(value, out);
        let reason = choice
            .and_then(|c| c.get("finish_reason"))
            .and_then(Value::as_str)
            .unwrap_or("stop");
        out.push(StreamEvent::Finished(FinishReason::from_wire(reason)));
        self.done = true;
    }
}

impl Decoder for OpenAiDecoder {
    fn frame(&mut self, frame: &str, out: &mut Vec<StreamEvent>) -> Result<(), ProviderError> {
        let frame = frame.trim();
        if frame == "[DONE]" {
            return self.finish(out);
        }
        if frame.is_empty() {
            return Ok(());
        }
        let value: Value = serde_json::from_str(frame).map_err(|err| ProviderError::Protocol {
            provider: PROVIDER,
            detail: format!("a chunk is not JSON ({err}): {}", preview(frame)),
        })?;
        if let Some(error) = value.get("error") {
            return Err(ProviderError::in_stream(PROVIDER, error));
        }
        if value.get("object").and_then(Value::as_str) == Some("chat.completion")
            || value
                .pointer("/choices/0/message")
                .is_some_and(Value::is_object)
        {
            self.whole(&value, out);
        } else {
            self.chunk(&value, out);
        }
        Ok(())
    }

    fn is_done(&self) -> bool {
        self.done
    }

    fn finish(&mut self, out: &mut Vec<StreamEvent>) -> Result<(), ProviderError> {
        if self.done {
            return Ok(());
        }
        // Some compatible servers end the stream without `[DONE]`: a finished choice suffices.
        let Some(reason) = self.finish.take() else {
            return Err(ProviderError::StreamCut {
                provider: PROVIDER,
                detail: "no chunk with a finish_reason arrived".into(),
            });
        };
        out.push(StreamEvent::Finished(reason));
        self.done = true;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn decode(frames: &[&str]) -> Result<Vec<StreamEvent>, ProviderError> {
        crate::llm::http::decode_all(OpenAiDecoder::default(), frames)
    }

    /// The two calls both delta tests stream: a status of Switch One, then a device list.
    fn assert_two_calls(events: &[StreamEvent]) {
        let calls: Vec<(&str, &str, &Value)> = events
            .iter()
            .filter_map(|e| match e {
                StreamEvent::ToolCall(c) => {
                    Some((c.call.id.as_str(), c.call.name.as_str(), &c.call.args))
                }
                _ => None,
            })
            .collect();
        assert_eq!(
            calls,
            [
                (
                    "call_a",
                    "get_device_status",
                    &json!({"deviceName": "Switch One"})
                ),
                ("call_b", "list_zwave_devices", &json!({}))
            ]
        );
    }

    #[test]
    fn deltas_without_an_index_continue_the_open_call_until_a_new_id_comes() {
        let events = decode(&[
            r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"id":"call_a","type":"function","function":{"name":"get_device_status","arguments":""}}]},"finish_reason":null}]}"#,
            r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"function":{"arguments":"{\"deviceName\":"}}]},"finish_reason":null}]}"#,
            r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"function":{"arguments":" \"Switch One\"}"}}]},"finish_reason":null}]}"#,
            r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"id":"call_b","function":{"name":"list_zwave_devices","arguments":"{}"}}]},"finish_reason":null}]}"#,
            r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"id":"call_b","function":{"arguments":""}}]},"finish_reason":null}]}"#,
            r#"{"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}"#,
            "[DONE]",
        ])
        .unwrap();
        assert_two_calls(&events);
    }

    #[test]
    fn tool_call_deltas_are_merged_by_index() {
        let events = decode(&[
            r#"{"choices":[{"index":0,"delta":{"role":"assistant","content":null,"tool_calls":[{"index":0,"id":"call_a","type":"function","function":{"name":"get_device_status","arguments":""}},{"index":1,"id":"call_b","type":"function","function":{"name":"list_zwave_devices","arguments":"{}"}}]},"finish_reason":null}]}"#,
            r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"deviceName\":"}}]},"finish_reason":null}]}"#,
            r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":" \"Switch One\"}"}}]},"finish_reason":null}]}"#,
            r#"{"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}"#,
            r#"{"choices":[],"usage":{"prompt_tokens":50,"completion_tokens":12,"total_tokens":62}}"#,
            "[DONE]",
        ])
        .unwrap();
        assert_two_calls(&events);
        assert_eq!(
            events[events.len() - 2],
            StreamEvent::Usage(Usage {
                input_tokens: 50,
                output_tokens: 12
            })
        );
        assert_eq!(
            events.last(),
            Some(&StreamEvent::Finished(FinishReason::ToolCalls))
        );
    }

    #[test]
    fn a_whole_response_gives_the_same_events() {
        let events = decode(&[
            r#"{"id":"chatcmpl-1","object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":null,"tool_calls":[{"id":"call_a","type":"function","function":{"name":"t","arguments":"{\"x\": 1"}}]},"finish_reason":"tool_calls"}],"usage":{"prompt_tokens":5,"completion_tokens":2}}"#,
        ])
        .unwrap();
        let StreamEvent::ToolCall(call) = &events[0] else {
            panic!("{events:?}")
        };
        assert_eq!(
            call.invalid_arguments.as_deref(),
            Some(
                "the arguments are not valid JSON (EOF while parsing an object at line 1 column 7)"
            )
        );
        assert_eq!(
            events.last(),
            Some(&StreamEvent::Finished(FinishReason::ToolCalls))
        );
    }

    #[test]
    fn a_stream_without_a_finish_is_cut() {
        let error =
            decode(&[r#"{"choices":[{"index":0,"delta":{"content":"Hel"}}]}"#]).unwrap_err();
        assert_eq!(
            error.to_string(),
            "the response from the OpenAI-compatible server was cut off before the message was complete (no chunk with a finish_reason arrived)"
        );
    }
}
