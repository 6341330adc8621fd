//! Reviewing a tool definition as a server lists it: what keeps hosts or LLM providers from
//! using it ([`Verdict::Fail`]), what makes models use it badly ([`Verdict::Warn`]) and what
//! a host should know ([`Verdict::Note`]). The one engine behind `mcp-client doctor`'s tool
//! findings, `mcp-conformance`'s `tools/list` check and [`ToolManager::add`]'s schema check,
//! and the one [`Verdict`] scale their findings and checks are judged on.
//!
//! [`ToolManager::add`]: super::manager::ToolManager::add

use serde::Serialize;
use serde_json::Value;

use super::{builtins, names};

/// How a check came out, or how much a problem matters: the one scale of a tool review's
/// problems (`Note`, `Warn`, `Fail`), `mcp-client doctor`'s findings (and `Pass`) and
/// `mcp-conformance`'s checks (`Pass`, `Warn`, `Fail`, `Skip`, `NotApplicable`). Each report
/// prints it in its own words; JSON has the variant's name in lowercase (`notapplicable`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Verdict {
    /// Conforms; nothing wrong was found.
    Pass,
    /// Worth knowing; nothing to fix.
    Note,
    /// Usable or allowed, but worth fixing: models will use it worse.
    Warn,
    /// Does not conform: hosts or providers cannot use it as it is.
    Fail,
    /// Could not be checked (the server offers nothing to check it with).
    Skip,
    /// Does not apply to this server (nothing it offers can show the behaviour either way).
    NotApplicable,
}

impl Verdict {
    /// `PASS`, `NOTE`, `WARN`, `FAIL`, `SKIP`, `N/A`: how `mcp-conformance` prints it.
    pub fn label(self) -> &'static str {
        match self {
            Self::Pass => "PASS",
            Self::Note => "NOTE",
            Self::Warn => "WARN",
            Self::Fail => "FAIL",
            Self::Skip => "SKIP",
            Self::NotApplicable => "N/A",
        }
    }
}

/// One problem of a tool definition.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    /// How much it matters: [`Verdict::Note`], [`Verdict::Warn`] or [`Verdict::Fail`].
    pub verdict: Verdict,
    /// What is wrong and what would be right, without the tool's name.
    pub detail: String,
}

/// The parts of a tool definition a review reads.
#[derive(Debug, Clone, Copy)]
pub struct ToolParts<'a> {
    /// Its name.
    pub name: &'a str,
    /// Its description, if any.
    pub description: Option<&'a str>,
    /// Its `inputSchema`, if any.
    pub input_schema: Option<&'a Value>,
    /// Its `outputSchema`, if any.
    pub output_schema: Option<&'a Value>,
}

impl<'a> ToolParts<'a> {
    /// The parts of a tool as JSON (`tools/list` as it came over the wire).
    pub fn of_json(tool: &'a Value) -> Self {
        Self {
            name: tool.get("name").and_then(Value::as_str).unwrap_or_default(),
            description: tool.get("description").and_then(Value::as_str),
            input_schema: tool.get("inputSchema"),
            output_schema: tool.get("outputSchema"),
        }
    }
}

/// Every problem of one tool definition, in the order a reader fixes them.
pub fn review(tool: ToolParts<'_>) -> Vec<Problem> {
    let mut problems = Vec::new();
    let mut add = |verdict, detail: String| problems.push(Problem { verdict, detail });
    if builtins::builtin(tool.name).is_some() {
        add(
            Verdict::Note,
            format!(
                "has the name of a local builtin tool: hosts with local tools keep `{}` for theirs and offer this one under a prefixed name",
                tool.name
            ),
        );
    }
    if !names::is_provider_safe(tool.name) {
        add(
            Verdict::Fail,
            format!(
                "name is not valid for LLM providers (^[a-zA-Z0-9_-]{{1,64}}$); hosts must rename it (e.g. `{}`)",
                names::provider_safe(tool.name)
            ),
        );
    }
    if tool.description.is_none_or(|d| d.trim().is_empty()) {
        add(
            Verdict::Warn,
            "no description: models choose tools by their descriptions".to_owned(),
        );
    }
    match tool.input_schema {
        Some(schema) => {
            if let Err(problem) = input_validator(schema) {
                add(Verdict::Fail, format!("inputSchema {problem}"));
            }
        }
        None => add(
            Verdict::Fail,
            "has no inputSchema: give at least {\"type\": \"object\"}".to_owned(),
        ),
    }
    if let Some(Err(err)) = tool.output_schema.map(jsonschema::validator_for) {
        add(
            Verdict::Fail,
            format!("outputSchema is not valid JSON Schema: {err}"),
        );
    }
    problems
}

/// Compiles a tool's parameter schema, after checking that its top level is an object schema
/// (LLM providers take nothing else). The error reads after the schema's name: "type must be
/// …" or "is not valid JSON Schema: …".
///
/// # Errors
/// What is wrong with the schema.
pub fn input_validator(schema: &Value) -> Result<jsonschema::Validator, String> {
    match schema.get("type") {
        Some(Value::String(kind)) if kind == "object" => {}
        Some(other) => {
            return Err(format!(
                "type must be \"object\" at the top (LLM providers need it), got {other}"
            ));
        }
        None => {
            return Err(
                "type must be \"object\" at the top (LLM providers need it), got none".to_owned(),
            );
        }
    }
    jsonschema::validator_for(schema).map_err(|err| format!("is not valid JSON Schema: {err}"))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn details(tool: &Value) -> Vec<(Verdict, String)> {
        review(ToolParts::of_json(tool))
            .into_iter()
            .map(|p| (p.verdict, p.detail))
            .collect()
    }

    #[test]
    fn a_clean_tool_has_no_problems() {
        let tool = json!({"name": "list_devices", "description": "Lists devices",
                          "inputSchema": {"type": "object", "properties": {}}});
        assert_eq!(details(&tool), []);
    }

    #[test]
    fn each_problem_names_what_would_be_right() {
        let tool = json!({"name": "files.read", "inputSchema": {"type": "array"},
                          "outputSchema": {"type": 5}});
        let found = details(&tool);
        assert_eq!(found.len(), 4, "{found:?}");
        assert_eq!(
            found[0],
            (
                Verdict::Fail,
                "name is not valid for LLM providers (^[a-zA-Z0-9_-]{1,64}$); hosts must rename it (e.g. `files_read`)".into()
            )
        );
        assert_eq!(
            found[1],
            (
                Verdict::Warn,
                "no description: models choose tools by their descriptions".into()
            )
        );
        assert_eq!(
            found[2],
            (
                Verdict::Fail,
                "inputSchema type must be \"object\" at the top (LLM providers need it), got \"array\"".into()
            )
        );
        assert_eq!(found[3].0, Verdict::Fail);
        assert!(
            found[3]
                .1
                .starts_with("outputSchema is not valid JSON Schema: "),
            "{found:?}"
        );
    }

    #[test]
    fn missing_and_broken_input_schemas_fail() {
        let none = json!({"name": "t", "description": "d"});
        assert_eq!(
            details(&none),
            [(
                Verdict::Fail,
                "has no inputSchema: give at least {\"type\": \"object\"}".into()
            )]
        );
        let untyped = json!({"name": "t", "description": "d", "inputSchema": {}});
        assert_eq!(
            details(&untyped)[0].1,
            "inputSchema type must be \"object\" at the top (LLM providers need it), got none"
        );
        let broken = json!({"name": "t", "description": "d",
                            "inputSchema": {"type": "object", "properties": {"a": {"type": "nope"}}}});
        assert!(
            details(&broken)[0]
                .1
                .starts_with("inputSchema is not valid JSON Schema: "),
            "{:?}",
            details(&broken)
        );
    }

    #[test]
    fn a_builtin_name_is_a_note() {
        let tool = json!({"name": "echo", "description": "d", "inputSchema": {"type": "object"}});
        assert_eq!(details(&tool)[0].0, Verdict::Note);
    }
}
