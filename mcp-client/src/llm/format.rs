//! Tool definitions and tool results in each provider's wire format (see
//! `shared/reference/MCP_AND_LLM.md`). Pure functions: the stored tools never change; each
//! provider's shape is made at the last moment.

use rmcp::model::JsonObject;
use serde_json::{Map, Value, json};
use tracing::debug;

#[cfg(feature = "providers")]
use super::message::Message;
use super::message::ToolResult;
#[cfg(feature = "providers")]
use crate::tools::ToolCall;
use crate::tools::definition::ToolDefinition;

/// An LLM provider's API dialect.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dialect {
    /// Ollama `/api/chat` (Qwen and others).
    Ollama,
    /// OpenAI Chat Completions and compatible servers.
    OpenAi,
    /// Anthropic Messages.
    Anthropic,
}

impl Dialect {
    /// Every dialect.
    pub const ALL: [Self; 3] = [Self::Ollama, Self::OpenAi, Self::Anthropic];

    /// The dialect whose [`name`](Self::name) is `name`, in any case (`OpenAI`).
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL
            .into_iter()
            .find(|dialect| dialect.name().eq_ignore_ascii_case(name))
    }

    /// The dialect's short name (`ollama`, `openai`, `anthropic`).
    pub fn name(self) -> &'static str {
        match self {
            Self::Ollama => "ollama",
            Self::OpenAi => "openai",
            Self::Anthropic => "anthropic",
        }
    }

    /// How messages name it ("Ollama", "the OpenAI-compatible server", "Anthropic").
    #[cfg(feature = "providers")]
    pub(crate) const fn display_name(self) -> &'static str {
        match self {
            Self::Ollama => "Ollama",
            Self::OpenAi => "the OpenAI-compatible server",
            Self::Anthropic => "Anthropic",
        }
    }

    /// The conventional base URL.
    pub fn default_base_url(self) -> &'static str {
        match self {
            Self::Ollama => "http://127.0.0.1:11434",
            Self::OpenAi => "https://api.openai.com/v1",
            Self::Anthropic => "https://api.anthropic.com",
        }
    }

    /// The environment variable that holds the base URL.
    pub fn base_url_env(self) -> &'static str {
        match self {
            Self::Ollama => "OLLAMA_HOST",
            Self::OpenAi => "OPENAI_BASE_URL",
            Self::Anthropic => "ANTHROPIC_BASE_URL",
        }
    }

    /// The environment variable that holds the API key.
    pub fn key_env(self) -> &'static str {
        match self {
            Self::Ollama => "OLLAMA_API_KEY",
            Self::OpenAi => "OPENAI_API_KEY",
            Self::Anthropic => "ANTHROPIC_API_KEY",
        }
    }
}

/// `{type: "function", function: {name, description, parameters}}` for each tool; no tools →
/// an empty list.
pub fn ollama_tools(tools: &[ToolDefinition]) -> Vec<Value> {
    let converted: Vec<Value> = tools
        .iter()
        .map(|tool| function_tool(tool, Dialect::Ollama))
        .collect();
    debug!("Converted {} tools to Qwen format", converted.len());
    converted
}

/// OpenAI's function tools (same envelope as Ollama's).
pub fn openai_tools(tools: &[ToolDefinition]) -> Vec<Value> {
    tools
        .iter()
        .map(|tool| function_tool(tool, Dialect::OpenAi))
        .collect()
}

/// Anthropic's `{name, description, input_schema}`.
pub fn anthropic_tools(tools: &[ToolDefinition]) -> Vec<Value> {
    tools
        .iter()
        .map(|tool| {
            json!({
                "name": tool.name,
                "description": tool.description,
                "input_schema": sanitize_schema(&tool.parameters, Dialect::Anthropic),
            })
        })
        .collect()
}

fn function_tool(tool: &ToolDefinition, provider: Dialect) -> Value {
    json!({
        "type": "function",
        "function": {
            "name": tool.name,
            "description": tool.description,
            "parameters": sanitize_schema(&tool.parameters, provider),
        }
    })
}

/// Deepest `$ref` chain inlined; deeper (recursive) references become an open schema.
const MAX_REF_DEPTH: usize = 16;

/// A schema every provider accepts: `$ref`s into `$defs`/`definitions` inlined, `$schema`
/// and the definitions dropped, `type: "object"` (with `properties`) kept at the top. For
/// Ollama also `["x", "null"]` types become `x` and `default: null` goes: small models read
/// a plain type better, and an omitted optional parameter means the same.
pub fn sanitize_schema(schema: &JsonObject, provider: Dialect) -> Value {
    let definitions = schema
        .get("$defs")
        .or_else(|| schema.get("definitions"))
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    let mut top = clean(&Value::Object(schema.clone()), &definitions, provider, 0);
    if let Value::Object(map) = &mut top {
        map.insert("type".into(), json!("object"));
        map.entry("properties").or_insert_with(|| json!({}));
    }
    top
}

fn clean(
    value: &Value,
    definitions: &Map<String, Value>,
    provider: Dialect,
    depth: usize,
) -> Value {
    match value {
        Value::Object(map) => {
            if let Some(reference) = map.get("$ref").and_then(Value::as_str) {
                let name = reference.rsplit('/').next().unwrap_or_default();
                let target = definitions.get(name).filter(|_| depth < MAX_REF_DEPTH);
                let mut inlined = match target {
                    Some(target) => clean(target, definitions, provider, depth + 1),
                    None => json!({}),
                };
                // Keywords beside the $ref (a description, say) are kept and win.
                if let Value::Object(inlined) = &mut inlined {
                    for (key, sibling) in map.iter().filter(|(k, _)| k.as_str() != "$ref") {
                        inlined.insert(key.clone(), clean(sibling, definitions, provider, depth));
                    }
                }
                return inlined;
            }
            let mut out = Map::new();
            for (key, child) in map {
                if matches!(key.as_str(), "$schema" | "$defs" | "definitions") {
                    continue;
                }
                if provider == Dialect::Ollama && key == "default" && child.is_null() {
                    continue;
                }
                let child = if provider == Dialect::Ollama && key == "type" {
                    plain_type(child)
                } else {
                    clean(child, definitions, provider, depth)
                };
                out.insert(key.clone(), child);
            }
            Value::Object(out)
        }
        Value::Array(items) => Value::Array(
            items
                .iter()
                .map(|v| clean(v, definitions, provider, depth))
                .collect(),
        ),
        other => other.clone(),
    }
}

fn plain_type(value: &Value) -> Value {
    match value.as_array().map(|types| {
        types
            .iter()
            .filter(|t| t.as_str() != Some("null"))
            .collect::<Vec<_>>()
    }) {
        Some(types) if types.len() == 1 => types[0].clone(),
        _ => value.clone(),
    }
}

/// Anthropic: ONE user message holding every `tool_result` block, in call order, right after
/// the assistant's `tool_use` turn.
pub fn anthropic_tool_results(results: &[ToolResult]) -> Value {
    let blocks: Vec<Value> = results
        .iter()
        .map(|result| {
            let mut block = json!({"type": "tool_result", "tool_use_id": result.call_id, "content": result.result.text});
            if result.result.is_error {
                block["is_error"] = json!(true);
            }
            block
        })
        .collect();
    json!({"role": "user", "content": blocks})
}

/// The `messages` of a chat body shaped like OpenAI's (OpenAI-compatible servers and Ollama
/// share it): they differ only in how a call is written (`call`) and how results are
/// (`results`). An assistant turn's `content` is always a string, `""` when it only calls
/// tools: llama.cpp's server refuses `null` and its templates fail without the key.
#[cfg(feature = "providers")]
pub(crate) fn chat_messages(
    messages: &[Message],
    call: impl Fn(&ToolCall) -> Value,
    results: impl Fn(&[ToolResult]) -> Vec<Value>,
) -> Vec<Value> {
    messages
        .iter()
        .flat_map(|message| match message {
            Message::System { text } => vec![json!({"role": "system", "content": text})],
            Message::User { text } => vec![json!({"role": "user", "content": text})],
            Message::Assistant { text, tool_calls } => {
                let mut turn = json!({"role": "assistant", "content": text});
                if !tool_calls.is_empty() {
                    turn["tool_calls"] = tool_calls.iter().map(&call).collect();
                }
                vec![turn]
            }
            Message::ToolResults { results: done } => results(done),
        })
        .collect()
}

/// OpenAI: one `role: "tool"` message per call id.
pub fn openai_tool_results(results: &[ToolResult]) -> Vec<Value> {
    results
        .iter()
        .map(|result| json!({"role": "tool", "tool_call_id": result.call_id, "content": result.result.text}))
        .collect()
}

/// Ollama: one `role: "tool"` message per call, in call order (Qwen's template pairs results
/// with calls by position), naming the tool and the call id.
pub fn ollama_tool_results(results: &[ToolResult]) -> Vec<Value> {
    results
        .iter()
        .map(|result| {
            json!({"role": "tool", "tool_name": result.tool_name, "tool_call_id": result.call_id, "content": result.result.text})
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn object(value: Value) -> JsonObject {
        value.as_object().unwrap().clone()
    }

    #[test]
    fn refs_are_inlined_and_definitions_dropped() {
        let schema = object(json!({
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "$defs": {"Action": {"type": "string", "enum": ["on", "off"]}},
            "properties": {"action": {"$ref": "#/$defs/Action", "description": "what to do"}},
            "required": ["action"]
        }));
        assert_eq!(
            sanitize_schema(&schema, Dialect::OpenAi),
            json!({
                "type": "object",
                "properties": {"action": {"type": "string", "enum": ["on", "off"], "description": "what to do"}},
                "required": ["action"]
            })
        );
    }

    #[test]
    fn recursive_refs_stop_at_an_open_schema() {
        let schema = object(json!({
            "type": "object",
            "definitions": {"Node": {"type": "object", "properties": {"next": {"$ref": "#/definitions/Node"}}}},
            "properties": {"root": {"$ref": "#/definitions/Node"}}
        }));
        let text = sanitize_schema(&schema, Dialect::Anthropic).to_string();
        assert!(!text.contains("$ref"), "{text}");
    }

    #[test]
    fn ollama_gets_plain_types_without_null_defaults() {
        let schema = object(
            json!({"type": "object", "properties": {"level": {"type": ["integer", "null"], "default": null}}}),
        );
        assert_eq!(
            sanitize_schema(&schema, Dialect::Ollama),
            json!({"type": "object", "properties": {"level": {"type": "integer"}}})
        );
    }

    #[test]
    fn no_tools_convert_to_an_empty_list() {
        assert_eq!(ollama_tools(&[]), Vec::<Value>::new());
    }
}
