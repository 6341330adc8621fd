//! Tool definitions: what every tool has (unique name, description, parameter schema) and
//! how it runs. Local tools come from JSON definition files; one file can hold many:
//!
//! ```json
//! {"tools": [
//!   {"name": "weather", "description": "...", "parameters": {"type": "object", ...},
//!    "implementation": {"type": "mock", "mock_response": {"temp": 21}}},
//!   {"name": "calc", "description": "...", "parameters": {...},
//!    "implementation": {"type": "builtin", "handler": "math_eval"}, "timeout": "5s"},
//!   {"name": "volume", "description": "...", "parameters": {...},
//!    "implementation": {"type": "internal", "handler": "set_volume"}}
//! ]}
//! ```
//! A file may also be a bare array of tools or a single tool object.

use std::{path::Path, time::Duration};

use rmcp::model::JsonObject;
use serde::Deserialize;
use serde_json::Value;

/// How a tool runs.
#[derive(Debug, Clone, PartialEq)]
pub enum Implementation {
    /// Returns a fixed response (parameters are logged, not used).
    Mock {
        /// The response.
        response: Value,
    },
    /// A named Rust handler of this crate (`echo`, `math_eval`, `get_current_datetime`).
    Builtin {
        /// Handler name.
        handler: String,
    },
    /// A handler the host application registers at run time.
    Internal {
        /// Handler name.
        handler: String,
    },
    /// A tool of an MCP server.
    Mcp {
        /// The server.
        server: String,
        /// The tool's name on the server.
        original_name: String,
    },
}

/// One tool.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolDefinition {
    /// Unique name offered to models.
    pub name: String,
    /// What it does, for models.
    pub description: String,
    /// JSON Schema of its parameters (an object schema).
    pub parameters: JsonObject,
    /// How it runs.
    pub implementation: Implementation,
    /// Its own timeout, overriding the executor's default.
    pub timeout: Option<Duration>,
    /// What it promises about side effects (MCP tool annotations).
    pub hints: ToolHints,
}

/// What a tool promises about its side effects (MCP `annotations`; definition files may give
/// the same `annotations` object).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ToolHints {
    /// It changes nothing (`readOnlyHint`; MCP's default is false).
    pub read_only: bool,
    /// Calling it again with the same arguments has no further effect (`idempotentHint`).
    pub idempotent: bool,
}

impl ToolHints {
    /// A tool that changes nothing (and so may be called again freely).
    pub const READ_ONLY: Self = Self {
        read_only: true,
        idempotent: true,
    };

    /// Hints from MCP annotations; absent hints take MCP's defaults (not read-only, not
    /// idempotent).
    pub fn from_mcp(annotations: Option<&rmcp::model::ToolAnnotations>) -> Self {
        let read_only = annotations.and_then(|a| a.read_only_hint).unwrap_or(false);
        Self {
            read_only,
            idempotent: read_only || annotations.and_then(|a| a.idempotent_hint).unwrap_or(false),
        }
    }
}

impl ToolDefinition {
    /// Where it comes from, for listings: `mock`, `builtin:echo`, `mcp:zwave`, ...
    pub fn source(&self) -> String {
        match &self.implementation {
            Implementation::Mock { .. } => "mock".into(),
            Implementation::Builtin { handler } => format!("builtin:{handler}"),
            Implementation::Internal { handler } => format!("internal:{handler}"),
            Implementation::Mcp { server, .. } => format!("mcp:{server}"),
        }
    }

    /// The tool's name at its source (an MCP tool's own name; otherwise its name).
    pub fn original_name(&self) -> &str {
        match &self.implementation {
            Implementation::Mcp { original_name, .. } => original_name,
            _ => &self.name,
        }
    }
}

/// Why a tool definition cannot be used: its file cannot be read or parsed (naming the file
/// and the tool), or [`ToolManager::add`](super::manager::ToolManager::add) refused it.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ToolDefinitionError {
    /// The file could not be read.
    #[error("cannot read tool definitions {path:?}: {reason}")]
    Read {
        /// The file.
        path: std::path::PathBuf,
        /// Why (part of the message, so not also chained as a source).
        reason: std::io::Error,
    },
    /// The file or a tool in it does not parse.
    #[error("tool definitions {path:?}: {problem}")]
    Invalid {
        /// The file.
        path: std::path::PathBuf,
        /// What is wrong, naming the tool.
        problem: String,
    },
    /// The name is empty or not valid for LLM providers.
    #[error("tool name `{0}` is not valid: use 1 to 64 characters of a-z, A-Z, 0-9, _ and -")]
    BadName(String),
    /// No description.
    #[error("tool `{0}` has no description: models choose tools by their descriptions")]
    NoDescription(String),
    /// The schema is not an object schema or not valid JSON Schema.
    #[error("tool `{name}` has an invalid parameter schema: {problem}")]
    BadSchema {
        /// The tool.
        name: String,
        /// What is wrong.
        problem: String,
    },
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct FileTool {
    name: String,
    description: String,
    #[serde(default = "empty_object_schema")]
    parameters: JsonObject,
    implementation: FileImplementation,
    #[serde(default)]
    timeout: Option<Value>,
    #[serde(default)]
    annotations: Option<FileAnnotations>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct FileAnnotations {
    read_only_hint: Option<bool>,
    idempotent_hint: Option<bool>,
}

fn empty_object_schema() -> JsonObject {
    let mut schema = JsonObject::new();
    schema.insert("type".into(), Value::String("object".into()));
    schema
}

#[derive(Deserialize)]
#[serde(tag = "type", rename_all = "lowercase", deny_unknown_fields)]
enum FileImplementation {
    Mock { mock_response: Value },
    Builtin { handler: String },
    Internal { handler: String },
}

/// Reads the tools of one definition file.
///
/// # Errors
/// [`ToolDefinitionError`] naming the file and the tool at fault.
pub fn load_file(path: &Path) -> Result<Vec<ToolDefinition>, ToolDefinitionError> {
    let text = std::fs::read_to_string(path).map_err(|reason| ToolDefinitionError::Read {
        path: path.to_owned(),
        reason,
    })?;
    parse(&text).map_err(|problem| ToolDefinitionError::Invalid {
        path: path.to_owned(),
        problem,
    })
}

/// Parses definition-file JSON.
///
/// # Errors
/// What is wrong, naming the tool (by name or position).
pub fn parse(text: &str) -> Result<Vec<ToolDefinition>, String> {
    let root: Value = serde_json::from_str(text).map_err(|err| format!("not valid JSON: {err}"))?;
    let items = match root {
        Value::Array(items) => items,
        Value::Object(mut map) if map.contains_key("tools") => match map.remove("tools") {
            Some(Value::Array(items)) => items,
            _ => return Err("`tools` must be an array of tool definitions".into()),
        },
        object @ Value::Object(_) => vec![object],
        _ => return Err("expected a tool object, an array of tools, or {\"tools\": [...]}".into()),
    };
    items
        .into_iter()
        .enumerate()
        .map(|(index, item)| {
            let label = item
                .get("name")
                .and_then(Value::as_str)
                .map_or_else(|| format!("tool #{}", index + 1), |n| format!("tool `{n}`"));
            let tool: FileTool =
                serde_json::from_value(item).map_err(|err| format!("{label}: {err}"))?;
            let timeout = match &tool.timeout {
                None => None,
                Some(value) => Some(
                    duration(value).map_err(|problem| format!("{label}: `timeout` {problem}"))?,
                ),
            };
            // Mock and builtin tools change nothing; internal tools do unless they say not.
            let local_read_only =
                !matches!(tool.implementation, FileImplementation::Internal { .. });
            let read_only = tool
                .annotations
                .as_ref()
                .and_then(|a| a.read_only_hint)
                .unwrap_or(local_read_only);
            let hints = ToolHints {
                read_only,
                idempotent: read_only
                    || tool
                        .annotations
                        .as_ref()
                        .and_then(|a| a.idempotent_hint)
                        .unwrap_or(false),
            };
            Ok(ToolDefinition {
                name: tool.name,
                description: tool.description,
                parameters: tool.parameters,
                hints,
                implementation: match tool.implementation {
                    FileImplementation::Mock { mock_response } => Implementation::Mock {
                        response: mock_response,
                    },
                    FileImplementation::Builtin { handler } => Implementation::Builtin { handler },
                    FileImplementation::Internal { handler } => {
                        Implementation::Internal { handler }
                    }
                },
                timeout,
            })
        })
        .collect()
}

/// A tool's timeout: a duration as `mcpServers` takes it, more than 0 and at most an hour.
fn duration(value: &Value) -> Result<Duration, String> {
    match crate::connection::config::duration(value) {
        Ok(timeout) if !timeout.is_zero() && timeout <= Duration::from_secs(3600) => Ok(timeout),
        _ => Err(format!(
            "is {}: use a number of seconds (30) or a duration such as 500ms or 30s, more than 0 and at most an hour",
            common::clip(&value.to_string(), 60)
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_unreadable_file_is_named_with_its_cause_once() {
        let err = load_file(Path::new("/nonexistent/tools.json")).unwrap_err();
        assert_eq!(
            err.to_string(),
            "cannot read tool definitions \"/nonexistent/tools.json\": No such file or directory (os error 2)"
        );
        assert!(
            std::error::Error::source(&err).is_none(),
            "the cause would print twice"
        );
    }

    #[test]
    fn every_file_shape_parses() {
        let many = parse(
            r#"{"tools": [
                {"name": "weather", "description": "d", "implementation": {"type": "mock", "mock_response": {"t": 1}}},
                {"name": "calc", "description": "d", "parameters": {"type": "object"}, "implementation": {"type": "builtin", "handler": "math_eval"}, "timeout": "500ms"}
            ]}"#,
        )
        .unwrap();
        assert_eq!(many.len(), 2);
        assert_eq!(
            many[0].implementation,
            Implementation::Mock {
                response: serde_json::json!({"t": 1})
            }
        );
        assert_eq!(many[1].timeout, Some(Duration::from_millis(500)));
        assert_eq!(many[1].source(), "builtin:math_eval");
        assert_eq!(many[0].hints, ToolHints::READ_ONLY);
        let one = parse(r#"{"name": "v", "description": "d", "implementation": {"type": "internal", "handler": "set_volume"}}"#).unwrap();
        assert_eq!(one[0].source(), "internal:set_volume");
        assert_eq!(one[0].hints, ToolHints::default());
        let annotated = parse(r#"{"name": "v", "description": "d", "implementation": {"type": "internal", "handler": "get_volume"}, "annotations": {"readOnlyHint": true}}"#).unwrap();
        assert!(annotated[0].hints.read_only);
    }

    #[test]
    fn problems_name_the_tool() {
        assert_eq!(
            parse(r#"[{"name": "x", "description": "d", "implementation": {"type": "magic"}}]"#)
                .unwrap_err(),
            "tool `x`: unknown variant `magic`, expected one of `mock`, `builtin`, `internal`"
        );
        assert_eq!(
            parse(
                r#"[{"description": "d", "implementation": {"type": "mock", "mock_response": 1}}]"#
            )
            .unwrap_err(),
            "tool #1: missing field `name`"
        );
        assert_eq!(
            parse(r#"[{"name": "t", "description": "d", "implementation": {"type": "builtin", "handler": "echo"}, "timeout": -1}]"#)
                .unwrap_err(),
            "tool `t`: `timeout` is -1: use a number of seconds (30) or a duration such as 500ms or 30s, more than 0 and at most an hour"
        );
    }
}
