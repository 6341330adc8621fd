//! The optional `"llm"` section of the configuration file.

use std::path::Path;

use serde_json::Value;

use super::ConfigError;

/// The optional `"llm"` section of the same file: which model `mcp-client chat` talks to when
/// no flag or environment variable says.
///
/// ```json
/// {"llm": {"provider": "ollama", "model": "qwen3:8b", "baseUrl": "http://127.0.0.1:11434"},
///  "mcpServers": {...}}
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct LlmSection {
    /// `ollama`, `openai` or `anthropic`.
    pub provider: Option<String>,
    /// The model's name.
    pub model: Option<String>,
    /// The provider's base URL.
    pub base_url: Option<String>,
}

/// Reads the `"llm"` section of a configuration file (empty when there is none).
///
/// # Errors
/// The file cannot be read or is too large (as for [`load`](super::load)), is not JSON, or
/// the section has unknown keys.
pub fn load_llm(path: &Path) -> Result<LlmSection, ConfigError> {
    let text = super::file::read(path)?;
    let root: Value = serde_json::from_str(&text).map_err(|err| ConfigError::Json {
        path: path.to_owned(),
        reason: err.to_string(),
    })?;
    match root.get("llm") {
        None => Ok(LlmSection::default()),
        Some(section) => {
            serde_json::from_value(section.clone()).map_err(|err| ConfigError::Shape {
                path: path.to_owned(),
                problem: format!("`llm`: {err}"),
            })
        }
    }
}
