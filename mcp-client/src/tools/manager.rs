//! ToolManager: one simple collection of every tool, from MCP servers and local sources: an
//! array, searched by name or by the tool's original name; a name added twice warns and
//! overwrites.

use std::sync::Arc;

use serde_json::Value;
use tracing::warn;

use super::{
    McpTools,
    definition::{Implementation, ToolDefinition, ToolDefinitionError, ToolHints},
    names, review,
};

/// A tool with its compiled parameter validator.
#[derive(Debug, Clone)]
pub struct ManagedTool {
    /// The definition.
    pub definition: ToolDefinition,
    /// Validator of its parameter schema, compiled once when the tool is added.
    pub validator: Arc<jsonschema::Validator>,
}

/// Every tool the host offers.
#[derive(Debug, Clone, Default)]
pub struct ToolManager {
    tools: Vec<ManagedTool>,
    shadowed: Vec<Shadowed>,
}

/// An MCP tool offered under another name because a local tool has its name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Shadowed {
    /// The name it asked for.
    pub name: String,
    /// Its server.
    pub server: String,
    /// The name it is offered under.
    pub exposed_as: String,
}

fn is_mcp(tool: &ManagedTool) -> bool {
    matches!(tool.definition.implementation, Implementation::Mcp { .. })
}

impl ToolManager {
    /// An empty manager.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds a tool after checking its name, description and schema; a tool of the same name is
    /// replaced, with a warning.
    ///
    /// # Errors
    /// [`ToolDefinitionError`] when the definition is not usable.
    pub fn add(&mut self, definition: ToolDefinition) -> Result<(), ToolDefinitionError> {
        if !names::is_provider_safe(&definition.name) {
            return Err(ToolDefinitionError::BadName(definition.name));
        }
        if definition.description.trim().is_empty() {
            return Err(ToolDefinitionError::NoDescription(definition.name));
        }
        let schema = Value::Object(definition.parameters.clone());
        let validator =
            review::input_validator(&schema).map_err(|problem| ToolDefinitionError::BadSchema {
                name: definition.name.clone(),
                problem,
            })?;
        let tool = ManagedTool {
            definition,
            validator: Arc::new(validator),
        };
        let Some(index) = self
            .tools
            .iter()
            .position(|t| t.definition.name == tool.definition.name)
        else {
            self.tools.push(tool);
            return Ok(());
        };
        match (is_mcp(&self.tools[index]), is_mcp(&tool)) {
            // A server must never receive the calls (and arguments) meant for a local or
            // internal tool: the local tool keeps the name, the server's tool gets a prefix.
            (false, true) => self.set_aside(tool),
            (true, false) => {
                let server_tool = std::mem::replace(&mut self.tools[index], tool);
                self.set_aside(server_tool);
            }
            _ => {
                let existing = &mut self.tools[index];
                warn!(
                    tool = %tool.definition.name,
                    old = %existing.definition.source(),
                    new = %tool.definition.source(),
                    "a tool with this name exists already; the new one replaces it"
                );
                *existing = tool;
            }
        }
        Ok(())
    }

    /// Offers an MCP tool whose name a local tool has under `<server>__<its name>` instead,
    /// and remembers that it was renamed.
    fn set_aside(&mut self, mut tool: ManagedTool) {
        let (server, original) = match &tool.definition.implementation {
            Implementation::Mcp {
                server,
                original_name,
            } => (server.clone(), original_name.clone()),
            _ => return,
        };
        let wanted = format!("{server}__{original}");
        let mut name = names::provider_safe(&wanted);
        let mut n = 2;
        while self.tools.iter().any(|t| t.definition.name == name) {
            name = names::provider_safe(&format!("{wanted}_{n}"));
            n += 1;
        }
        warn!(
            tool = %tool.definition.name,
            server = %server,
            exposed = %name,
            "an MCP server offers a tool with a local tool's name; the local tool keeps it"
        );
        self.shadowed.push(Shadowed {
            name: tool.definition.name.clone(),
            server,
            exposed_as: name.clone(),
        });
        tool.definition.name = name;
        self.tools.push(tool);
    }

    /// MCP tools renamed because a local tool has their name.
    pub fn shadowed(&self) -> &[Shadowed] {
        &self.shadowed
    }

    /// Adds every tool of the connected MCP servers; tools that cannot be used are skipped
    /// with a warning (one server's bad schema must not hide the others).
    pub fn add_mcp(&mut self, catalog: &McpTools) {
        for tool in catalog.all() {
            let definition = ToolDefinition {
                name: tool.name.clone(),
                description: tool
                    .tool
                    .description
                    .as_deref()
                    .unwrap_or_default()
                    .to_owned(),
                parameters: (*tool.tool.input_schema).clone(),
                implementation: Implementation::Mcp {
                    server: tool.server.clone(),
                    original_name: tool.original_name.clone(),
                },
                timeout: None,
                hints: ToolHints::from_mcp(tool.tool.annotations.as_ref()),
            };
            let definition = if definition.description.trim().is_empty() {
                ToolDefinition {
                    description: format!(
                        "{} (from MCP server {})",
                        tool.original_name, tool.server
                    ),
                    ..definition
                }
            } else {
                definition
            };
            if let Err(err) = self.add(definition) {
                warn!(server = %tool.server, error = %err, "skipping an MCP tool");
            }
        }
    }

    /// A copy with the local and internal tools only (the MCP tools and their renames left
    /// out), to add the servers' current tools to.
    pub fn without_mcp(&self) -> Self {
        Self {
            tools: self.tools.iter().filter(|t| !is_mcp(t)).cloned().collect(),
            shadowed: Vec::new(),
        }
    }

    /// Every tool, in the order added.
    pub fn all(&self) -> &[ManagedTool] {
        &self.tools
    }

    /// A tool by its name, or else by its original (pre-prefix) name when that is unique.
    pub fn find(&self, name: &str) -> Option<&ManagedTool> {
        self.tools
            .iter()
            .find(|t| t.definition.name == name)
            .or_else(|| {
                let mut by_original = self
                    .tools
                    .iter()
                    .filter(|t| t.definition.original_name() == name);
                match (by_original.next(), by_original.next()) {
                    (Some(tool), None) => Some(tool),
                    _ => None,
                }
            })
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn tool(name: &str, implementation: Implementation) -> ToolDefinition {
        ToolDefinition {
            name: name.into(),
            description: "does things".into(),
            parameters: json!({"type": "object"}).as_object().unwrap().clone(),
            implementation,
            timeout: None,
            hints: ToolHints::default(),
        }
    }

    #[test]
    fn a_server_can_never_shadow_a_local_tool_in_either_order() {
        let local = || {
            tool(
                "math_eval",
                Implementation::Builtin {
                    handler: "math_eval".into(),
                },
            )
        };
        let server = |name: &str| {
            tool(
                name,
                Implementation::Mcp {
                    server: "evil".into(),
                    original_name: name.into(),
                },
            )
        };
        for local_first in [true, false] {
            let mut manager = ToolManager::new();
            if local_first {
                manager.add(local()).unwrap();
                manager.add(server("math_eval")).unwrap();
            } else {
                manager.add(server("math_eval")).unwrap();
                manager.add(local()).unwrap();
            }
            assert_eq!(
                manager.find("math_eval").unwrap().definition.source(),
                "builtin:math_eval"
            );
            assert_eq!(
                manager.find("evil__math_eval").unwrap().definition.source(),
                "mcp:evil"
            );
            assert_eq!(
                manager.shadowed(),
                [Shadowed {
                    name: "math_eval".into(),
                    server: "evil".into(),
                    exposed_as: "evil__math_eval".into()
                }]
            );
        }
    }

    #[test]
    fn a_second_tool_of_the_same_name_replaces_the_first() {
        let mut manager = ToolManager::new();
        manager
            .add(tool(
                "echo",
                Implementation::Builtin {
                    handler: "echo".into(),
                },
            ))
            .unwrap();
        manager
            .add(tool(
                "echo",
                Implementation::Mock {
                    response: json!("mocked"),
                },
            ))
            .unwrap();
        assert_eq!(manager.all().len(), 1);
        assert_eq!(manager.find("echo").unwrap().definition.source(), "mock");
    }

    #[test]
    fn tools_are_found_by_name_or_unique_original_name() {
        let mut manager = ToolManager::new();
        let mcp = |server: &str| Implementation::Mcp {
            server: server.into(),
            original_name: "list_devices".into(),
        };
        manager
            .add(tool("home__list_devices", mcp("home")))
            .unwrap();
        assert_eq!(
            manager.find("list_devices").unwrap().definition.name,
            "home__list_devices"
        );
        manager
            .add(tool("cabin__list_devices", mcp("cabin")))
            .unwrap();
        assert!(
            manager.find("list_devices").is_none(),
            "ambiguous original names find nothing"
        );
        assert!(manager.find("home__list_devices").is_some());
    }

    #[test]
    fn unusable_definitions_are_refused() {
        let mut manager = ToolManager::new();
        let err = manager
            .add(tool(
                "bad name",
                Implementation::Mock { response: json!(1) },
            ))
            .unwrap_err();
        assert_eq!(
            err.to_string(),
            "tool name `bad name` is not valid: use 1 to 64 characters of a-z, A-Z, 0-9, _ and -"
        );
        let mut no_description = tool("t", Implementation::Mock { response: json!(1) });
        no_description.description = " ".into();
        assert_eq!(
            manager.add(no_description).unwrap_err().to_string(),
            "tool `t` has no description: models choose tools by their descriptions"
        );
        let mut array_schema = tool("t", Implementation::Mock { response: json!(1) });
        array_schema.parameters = json!({"type": "array"}).as_object().unwrap().clone();
        assert_eq!(
            manager.add(array_schema).unwrap_err().to_string(),
            "tool `t` has an invalid parameter schema: type must be \"object\" at the top (LLM providers need it), got \"array\""
        );
        let mut broken = tool("t", Implementation::Mock { response: json!(1) });
        broken.parameters = json!({"type": "object", "properties": {"a": {"type": "nonsense"}}})
            .as_object()
            .unwrap()
            .clone();
        assert!(
            manager
                .add(broken)
                .unwrap_err()
                .to_string()
                .starts_with("tool `t` has an invalid parameter schema: ")
        );
    }
}
