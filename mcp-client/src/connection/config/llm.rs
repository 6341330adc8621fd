//! The optional `"llm"` section of the configuration file.

use std::path::Path;

use serde_json::Value;

use super::error::ConfigError;
use crate::llm::Dialect;

/// The optional `"llm"` section of the same file: which model `mcp-client chat` talks to when
/// no flag or environment variable says.
///
/// ```json
/// {"llm": {"provider": "ollama", "model": "qwen3:8b", "baseUrl": "http://127.0.0.1:11434"},
///  "mcpServers": {...}}
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LlmSection {
    /// The model's API: `ollama`, `openai` or `anthropic` in the file, in any case.
    pub provider: Option<Dialect>,
    /// The model's name.
    pub model: Option<String>,
    /// The provider's base URL.
    pub base_url: Option<String>,
}

/// The section as the file spells it.
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct Written {
    provider: Option<String>,
    model: Option<String>,
    base_url: Option<String>,
}

/// Reads the `"llm"` section of a configuration file (empty when there is none).
///
/// # Errors
/// The file cannot be read or is too large (as for [`load`](super::load)), is not JSON, or
/// the section has unknown keys or names an unknown provider.
pub fn load_llm(path: &Path) -> Result<LlmSection, ConfigError> {
    let text = super::file::read(path)?;
    let root: Value = serde_json::from_str(&text).map_err(|err| ConfigError::Json {
        path: path.to_owned(),
        reason: err.to_string(),
    })?;
    let Some(section) = root.get("llm") else {
        return Ok(LlmSection::default());
    };
    let written: Written =
        serde_json::from_value(section.clone()).map_err(|err| ConfigError::Shape {
            path: path.to_owned(),
            problem: format!("`llm`: {err}"),
        })?;
    let provider = written
        .provider
        .map(|name| {
            Dialect::from_name(&name).ok_or_else(|| ConfigError::UnknownProvider {
                path: path.to_owned(),
                name,
            })
        })
        .transpose()?;
    Ok(LlmSection {
        provider,
        model: written.model,
        base_url: written.base_url,
    })
}
