//! [`McpTools`]: the tools of every connected server under the names offered to models —
//! valid for every provider, collisions between servers resolved by prefixing — with the way
//! back to the server and the tool's own name. Calls go through the
//! [`ToolExecutor`](super::executor::ToolExecutor), never from here.

use std::collections::{BTreeMap, HashMap};

use rmcp::model::Tool;
use tracing::warn;

use super::{names, normalize::Normalizer};
use crate::connection::pool::ServerPool;

/// A tool discovered on a server.
#[derive(Debug, Clone)]
pub struct McpTool {
    /// The name offered to models (unique, provider-safe).
    pub name: String,
    /// The server it belongs to.
    pub server: String,
    /// Its name on the server.
    pub original_name: String,
    /// Its definition as the server gave it.
    pub tool: Tool,
}

/// The tools of every connected server.
#[derive(Debug, Clone, Default)]
pub struct McpTools {
    tools: Vec<McpTool>,
    by_name: HashMap<String, usize>,
}

impl McpTools {
    /// Builds the catalog from `(server, tool prefix, tools)`, in server order.
    pub fn build(servers: Vec<(String, Option<String>, Vec<Tool>)>) -> Self {
        let base = |prefix: &Option<String>, tool: &Tool| match prefix {
            Some(prefix) => format!("{prefix}__{}", tool.name),
            None => tool.name.to_string(),
        };
        let mut owners: HashMap<String, Vec<&str>> = HashMap::new();
        for (server, prefix, tools) in &servers {
            for tool in tools {
                owners.entry(base(prefix, tool)).or_default().push(server);
            }
        }
        let mut catalog = Self::default();
        for (server, prefix, tools) in &servers {
            for tool in tools {
                let wanted = base(prefix, tool);
                let holders = &owners[&wanted];
                let wanted = if holders.len() > 1 {
                    let prefixed = format!("{server}__{}", tool.name);
                    warn!(tool = %tool.name, servers = ?holders, exposed = %prefixed, "tool name collision between servers; prefixing with the server name");
                    prefixed
                } else {
                    wanted
                };
                let mut name = names::provider_safe(&wanted);
                let mut n = 2;
                while catalog.by_name.contains_key(&name) {
                    name = names::provider_safe(&format!("{wanted}_{n}"));
                    n += 1;
                }
                catalog.by_name.insert(name.clone(), catalog.tools.len());
                catalog.tools.push(McpTool {
                    name,
                    server: server.clone(),
                    original_name: tool.name.to_string(),
                    tool: tool.clone(),
                });
            }
        }
        catalog
    }

    /// Lists the tools of every connected server of `pool`.
    pub async fn discover(pool: &ServerPool) -> Self {
        let mut servers = Vec::new();
        for server in pool.servers() {
            if server.session().await.is_none() {
                continue;
            }
            match server.tools().await {
                Ok(tools) => servers.push((
                    server.name().to_owned(),
                    server.config().tool_prefix.clone(),
                    tools,
                )),
                Err(err) => {
                    warn!(server = server.name(), error = %err, "cannot list the server's tools")
                }
            }
        }
        Self::build(servers)
    }

    /// Every tool, in server order.
    pub fn all(&self) -> &[McpTool] {
        &self.tools
    }

    /// A tool by the name offered to models.
    pub fn get(&self, name: &str) -> Option<&McpTool> {
        self.by_name.get(name).map(|&i| &self.tools[i])
    }

    /// A normalizer with the built-in mappings plus every server's `parameterMappings`.
    pub fn normalizer(pool: &ServerPool) -> Normalizer {
        let mut normalizer = Normalizer::with_builtins();
        for server in pool.servers() {
            let mappings: &BTreeMap<String, BTreeMap<String, String>> =
                &server.config().parameter_mappings;
            for (tool, renames) in mappings {
                normalizer.add(tool, renames.iter().map(|(a, b)| (a.as_str(), b.as_str())));
            }
        }
        normalizer
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use serde_json::json;

    use super::*;

    fn tool(name: &str) -> Tool {
        Tool::new(
            name.to_owned(),
            "d",
            Arc::new(json!({"type": "object"}).as_object().unwrap().clone()),
        )
    }

    #[test]
    fn collisions_are_prefixed_with_the_server_and_names_made_safe() {
        let catalog = McpTools::build(vec![
            (
                "home".into(),
                None,
                vec![tool("echo"), tool("list.devices")],
            ),
            (
                "everything".into(),
                None,
                vec![tool("echo"), tool("get-sum")],
            ),
            ("files".into(), Some("fs".into()), vec![tool("read")]),
        ]);
        let names: Vec<(&str, &str, &str)> = catalog
            .all()
            .iter()
            .map(|t| (t.name.as_str(), t.server.as_str(), t.original_name.as_str()))
            .collect();
        assert_eq!(
            names,
            [
                ("home__echo", "home", "echo"),
                ("list_devices", "home", "list.devices"),
                ("everything__echo", "everything", "echo"),
                ("get-sum", "everything", "get-sum"),
                ("fs__read", "files", "read"),
            ]
        );
        assert_eq!(
            catalog.get("list_devices").unwrap().original_name,
            "list.devices"
        );
        assert!(catalog.get("echo").is_none());
    }
}
