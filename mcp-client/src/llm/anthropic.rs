//! Anthropic Messages (`POST /v1/messages`): the request body, and the response — SSE events
//! (`message_start`, `content_block_start|delta|stop`, `message_delta`, `message_stop`,
//! `ping`, `error`) when streaming, one message object otherwise — decoded into events.
//!
//! The API wants alternating roles with the system prompt at the top level, so consecutive
//! user content (tool results, then a follow-up prompt) is merged into one user message, and
//! every `tool_use` is answered by a `tool_result` in the very next message. When the model
//! must answer without tools, the tools stay defined and `tool_choice` is `none`: the API
//! refuses a history holding `tool_use` blocks without tool definitions.

use std::collections::BTreeMap;

use serde_json::{Value, json};

use super::{
    error::{ProviderError, preview},
    event::{FinishReason, StreamEvent, ToolCallRequest},
    format,
    http::Decoder,
    message::{ChatRequest, Message, ToolChoice, Usage},
};

const PROVIDER: &str = super::format::Dialect::Anthropic.display_name();
/// The API version this client speaks.
pub(crate) const API_VERSION: &str = "2023-06-01";

/// The `/v1/messages` body.
pub(crate) fn body(model: &str, request: &ChatRequest<'_>, stream: bool, max_tokens: u32) -> Value {
    let mut system = Vec::new();
    let mut messages: Vec<(&str, Vec<Value>)> = Vec::new();
    let mut push = |role: &'static str, blocks: Vec<Value>| match messages.last_mut() {
        Some((last, content)) if *last == role => content.extend(blocks),
        _ => messages.push((role, blocks)),
    };
    for message in request.messages {
        match message {
            Message::System { text } => system.push(text.as_str()),
            Message::User { text } => push("user", vec![json!({"type": "text", "text": text})]),
            Message::Assistant { text, tool_calls } => {
                let mut blocks = Vec::new();
                if !text.is_empty() {
                    blocks.push(json!({"type": "text", "text": text}));
                }
                for call in tool_calls {
                    let input = if call.args.is_object() {
                        call.args.clone()
                    } else {
                        json!({})
                    };
                    blocks.push(json!({"type": "tool_use", "id": call.id, "name": call.name, "input": input}));
                }
                push("assistant", blocks);
            }
            Message::ToolResults { results } => {
                let message = format::anthropic_tool_results(results);
                let blocks = message["content"].as_array().cloned().unwrap_or_default();
                push("user", blocks);
            }
        }
    }
    let messages: Vec<Value> = messages
        .into_iter()
        .map(|(role, content)| json!({"role": role, "content": content}))
        .collect();
    let mut body =
        json!({"model": model, "max_tokens": max_tokens, "messages": messages, "stream": stream});
    if !system.is_empty() {
        body["system"] = json!(system.join("\n\n"));
    }
    if !request.tools.is_empty() {
        body["tools"] = Value::Array(format::anthropic_tools(request.tools));
        match &request.tool_choice {
            ToolChoice::None => body["tool_choice"] = json!({"type": "none"}),
            ToolChoice::Required => body["tool_choice"] = json!({"type": "any"}),
            ToolChoice::Tool(name) => body["tool_choice"] = json!({"type": "tool", "name": name}),
            ToolChoice::Auto => {}
        }
    }
    body
}

/// The body of an answer-only request (`ToolChoice::None`) for a server that refuses
/// `tool_choice: {"type": "none"}` (LiteLLM answers it with HTTP 500 "Incompatible tool
/// choice param"): no tools at all, so the earlier calls and results are written as text
/// (without tool definitions, `tool_use` blocks are refused).
pub(crate) fn body_without_tools(
    model: &str,
    request: &ChatRequest<'_>,
    stream: bool,
    max_tokens: u32,
) -> Value {
    let messages: Vec<Message> = request
        .messages
        .iter()
        .map(|message| match message {
            Message::Assistant { text, tool_calls } if !tool_calls.is_empty() => {
                let mut said = text.clone();
                for call in tool_calls {
                    if !said.is_empty() {
                        said.push('\n');
                    }
                    said.push_str(&format!(
                        "(I called the tool {} with {})",
                        call.name, call.args
                    ));
                }
                Message::Assistant {
                    text: said,
                    tool_calls: Vec::new(),
                }
            }
            Message::ToolResults { results } => Message::user(
                results
                    .iter()
                    .map(|result| {
                        format!(
                            "Result of {}{}: {}",
                            result.tool_name,
                            if result.result.is_error {
                                " (failed)"
                            } else {
                                ""
                            },
                            result.result.text
                        )
                    })
                    .collect::<Vec<_>>()
                    .join("\n"),
            ),
            other => other.clone(),
        })
        .collect();
    body(
        model,
        &ChatRequest {
            messages: &messages,
            tools: &[],
            tool_choice: ToolChoice::Auto,
        },
        stream,
        max_tokens,
    )
}

#[derive(Debug)]
enum Block {
    Text,
    ToolUse {
        id: String,
        name: String,
        json: String,
    },
    Other,
}

/// Decodes Messages responses, streamed or whole.
#[derive(Debug, Default)]
pub(crate) struct AnthropicDecoder {
    blocks: BTreeMap<u64, Block>,
    usage: Usage,
    stop: Option<FinishReason>,
    done: bool,
}

impl AnthropicDecoder {
    fn event(&mut self, value: &Value, out: &mut Vec<StreamEvent>) -> Result<(), ProviderError> {
        let index = value.get("index").and_then(Value::as_u64).unwrap_or(0);
        match value
            .get("type")
            .and_then(Value::as_str)
            .unwrap_or_default()
        {
            "message_start" => {
                let usage = value.pointer("/message/usage").unwrap_or(&Value::Null);
                self.read_usage(usage);
            }
            "content_block_start" => {
                let block = value.get("content_block").unwrap_or(&Value::Null);
                let started = Self::block_started(block, out);
                self.blocks.insert(index, started);
            }
            "content_block_delta" => {
                let delta = value.get("delta").unwrap_or(&Value::Null);
                self.block_delta(index, delta, out);
            }
            "content_block_stop" => {
                if let Some(Block::ToolUse { id, name, json }) = self.blocks.remove(&index) {
                    out.push(StreamEvent::ToolCall(ToolCallRequest::from_json_text(
                        id, name, &json,
                    )));
                }
            }
            "message_delta" => {
                if let Some(reason) = value.pointer("/delta/stop_reason").and_then(Value::as_str) {
                    self.stop = Some(FinishReason::from_wire(reason));
                }
                if let Some(usage) = value.get("usage") {
                    self.read_usage(usage);
                }
            }
            "message_stop" => {
                // A tool_use block the server never closed ends with the message: its input
                // is what came (not run if that is not a JSON object), never dropped.
                for (_, block) in std::mem::take(&mut self.blocks) {
                    if let Block::ToolUse { id, name, json } = block {
                        out.push(StreamEvent::ToolCall(ToolCallRequest::from_json_text(
                            id, name, &json,
                        )));
                    }
                }
                out.push(StreamEvent::Usage(self.usage));
                out.push(StreamEvent::Finished(
                    self.stop.take().unwrap_or(FinishReason::Stop),
                ));
                self.done = true;
            }
            "error" => {
                let error = value.get("error").unwrap_or(&Value::Null);
                return Err(ProviderError::in_stream(PROVIDER, error));
            }
            // `ping` and event types added later are ignored, as the API asks.
            _ => {}
        }
        Ok(())
    }

    /// A content block begins: text is shown at once; a tool call waits for its input.
    fn block_started(block: &Value, out: &mut Vec<StreamEvent>) -> Block {
        match block.get("type").and_then(Value::as_str) {
            Some("text") => {
                if let Some(text) = block.get("text").and_then(Value::as_str)
                    && !text.is_empty()
                {
                    out.push(StreamEvent::TextDelta(text.to_owned()));
                }
                Block::Text
            }
            Some("tool_use") => {
                let id = str_of(block, "id");
                let name = str_of(block, "name");
                out.push(StreamEvent::ToolCallStarted {
                    id: id.clone(),
                    name: name.clone(),
                });
                // The start carries `input: {}`; the real input follows as deltas.
                Block::ToolUse {
                    id,
                    name,
                    json: String::new(),
                }
            }
            _ => Block::Other,
        }
    }

    /// More of block `index`: text, or a fragment of a tool call's input.
    fn block_delta(&mut self, index: u64, delta: &Value, out: &mut Vec<StreamEvent>) {
        match (
            delta.get("type").and_then(Value::as_str),
            self.blocks.get_mut(&index),
        ) {
            (Some("text_delta"), _) => {
                let text = str_of(delta, "text");
                if !text.is_empty() {
                    out.push(StreamEvent::TextDelta(text));
                }
            }
            (Some("input_json_delta"), Some(Block::ToolUse { id, json, .. })) => {
                let fragment = str_of(delta, "partial_json");
                json.push_str(&fragment);
                out.push(StreamEvent::ToolCallArgumentsDelta {
                    id: id.clone(),
                    fragment,
                });
            }
            _ => {}
        }
    }

    fn read_usage(&mut self, usage: &Value) {
        if let Some(input) = usage.get("input_tokens").and_then(Value::as_u64) {
            self.usage.input_tokens = input;
        }
        if let Some(output) = usage.get("output_tokens").and_then(Value::as_u64) {
            self.usage.output_tokens = output;
        }
    }

    fn whole(&mut self, value: &Value, out: &mut Vec<StreamEvent>) {
        for block in value
            .get("content")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            match block.get("type").and_then(Value::as_str) {
                Some("text") => {
                    let text = str_of(block, "text");
                    if !text.is_empty() {
                        out.push(StreamEvent::TextDelta(text));
                    }
                }
                Some("tool_use") => out.push(StreamEvent::ToolCall(ToolCallRequest::from_value(
                    str_of(block, "id"),
                    str_of(block, "name"),
                    block.get("input").cloned().unwrap_or(Value::Null),
                ))),
                _ => {}
            }
        }
        self.read_usage(value.get("usage").unwrap_or(&Value::Null));
        out.push(StreamEvent::Usage(self.usage));
        let reason = value
            .get("stop_reason")
            .and_then(Value::as_str)
            .unwrap_or("end_turn");
        out.push(StreamEvent::Finished(FinishReason::from_wire(reason)));
        self.done = true;
    }
}

fn str_of(value: &Value, key: &str) -> String {
    value
        .get(key)
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned()
}

impl Decoder for AnthropicDecoder {
    fn frame(&mut self, frame: &str, out: &mut Vec<StreamEvent>) -> Result<(), ProviderError> {
        if frame.trim().is_empty() {
            return Ok(());
        }
        let value: Value = serde_json::from_str(frame).map_err(|err| ProviderError::Protocol {
            provider: PROVIDER,
            detail: format!("an event is not JSON ({err}): {}", preview(frame)),
        })?;
        if value.get("type").and_then(Value::as_str) == Some("message") {
            self.whole(&value, out);
            return Ok(());
        }
        self.event(&value, out)
    }

    fn is_done(&self) -> bool {
        self.done
    }

    fn finish(&mut self, _out: &mut Vec<StreamEvent>) -> Result<(), ProviderError> {
        ProviderError::unless_done(self.done, PROVIDER, "no message_stop event arrived")
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::{
        llm::message::ToolResult,
        tools::{outcome::ToolCall, results::ModelResult},
    };

    fn decode(frames: &[&str]) -> Result<Vec<StreamEvent>, ProviderError> {
        crate::llm::http::decode_all(AnthropicDecoder::default(), frames)
    }

    #[test]
    fn tool_use_input_is_assembled_from_json_deltas() {
        let events = decode(&[
            r#"{"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","content":[],"usage":{"input_tokens":100,"output_tokens":1}}}"#,
            r#"{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}"#,
            r#"{"type":"ping"}"#,
            r#"{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Dimming."}}"#,
            r#"{"type":"content_block_stop","index":0}"#,
            r#"{"type":"content_block_start","index":1,"content_block":{"type":"tool_use","id":"toolu_1","name":"control_zwave_device","input":{}}}"#,
            r#"{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":""}}"#,
            r#"{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"{\"level\": 4"}}"#,
            r#"{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"0}"}}"#,
            r#"{"type":"content_block_stop","index":1}"#,
            r#"{"type":"message_delta","delta":{"stop_reason":"tool_use","stop_sequence":null},"usage":{"output_tokens":30}}"#,
            r#"{"type":"message_stop"}"#,
        ])
        .unwrap();
        assert_eq!(events[0], StreamEvent::TextDelta("Dimming.".into()));
        let call = events
            .iter()
            .find_map(|e| match e {
                StreamEvent::ToolCall(c) => Some(c.call.clone()),
                _ => None,
            })
            .unwrap();
        assert_eq!(
            call,
            ToolCall {
                id: "toolu_1".into(),
                name: "control_zwave_device".into(),
                args: json!({"level": 40})
            }
        );
        assert_eq!(
            events[events.len() - 2],
            StreamEvent::Usage(Usage {
                input_tokens: 100,
                output_tokens: 30
            })
        );
        assert_eq!(
            events.last(),
            Some(&StreamEvent::Finished(FinishReason::ToolCalls))
        );
    }

    #[test]
    fn a_tool_use_block_never_closed_ends_with_the_message() {
        let events = decode(&[
            r#"{"type":"message_start","message":{"usage":{"input_tokens":9}}}"#,
            r#"{"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"toolu_1","name":"t","input":{}}}"#,
            r#"{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"{\"a\": 1}"}}"#,
            r#"{"type":"content_block_start","index":1,"content_block":{"type":"tool_use","id":"toolu_2","name":"t","input":{}}}"#,
            r#"{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"{\"a\":"}}"#,
            r#"{"type":"message_delta","delta":{"stop_reason":"tool_use"},"usage":{"output_tokens":5}}"#,
            r#"{"type":"message_stop"}"#,
        ])
        .unwrap();
        let calls: Vec<&ToolCallRequest> = events
            .iter()
            .filter_map(|e| match e {
                StreamEvent::ToolCall(call) => Some(call),
                _ => None,
            })
            .collect();
        assert_eq!(calls.len(), 2, "{events:?}");
        assert_eq!(calls[0].call.args, json!({"a": 1}));
        assert_eq!(calls[0].invalid_arguments, None);
        // Cut input: kept, and not run.
        assert_eq!(calls[1].call.id, "toolu_2");
        assert!(calls[1].invalid_arguments.is_some());
    }

    #[test]
    fn error_events_and_missing_stop_are_reported() {
        let error = decode(&[
            r#"{"type":"message_start","message":{"usage":{"input_tokens":1}}}"#,
            r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#,
        ])
        .unwrap_err();
        assert_eq!(
            error.to_string(),
            "Anthropic reported an error mid-response: overloaded_error: Overloaded"
        );
        let cut = decode(&[r#"{"type":"message_start","message":{"usage":{}}}"#]).unwrap_err();
        assert_eq!(
            cut.to_string(),
            "the response from Anthropic was cut off before the message was complete (no message_stop event arrived)"
        );
    }

    #[test]
    fn tool_results_and_a_follow_up_share_one_user_message() {
        let call = ToolCall {
            id: "toolu_1".into(),
            name: "t".into(),
            args: json!({}),
        };
        let messages = [
            Message::system("be brief"),
            Message::user("hi"),
            Message::Assistant {
                text: String::new(),
                tool_calls: vec![call],
            },
            Message::ToolResults {
                results: vec![ToolResult {
                    call_id: "toolu_1".into(),
                    tool_name: "t".into(),
                    result: ModelResult {
                        text: "Error: boom".into(),
                        is_error: true,
                        artifacts: vec![],
                    },
                }],
            },
            Message::user("If you need more specific info, you may search again."),
        ];
        let request = ChatRequest {
            messages: &messages,
            tools: &[],
            tool_choice: ToolChoice::Auto,
        };
        let body = body("claude", &request, true, 1024);
        assert_eq!(body["system"], "be brief");
        assert_eq!(
            body["messages"][2],
            json!({"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": "toolu_1", "content": "Error: boom", "is_error": true},
                {"type": "text", "text": "If you need more specific info, you may search again."}
            ]})
        );
        assert_eq!(body["messages"].as_array().unwrap().len(), 3);
    }
}
