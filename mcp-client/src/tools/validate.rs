//! Checking a call's arguments against the tool's JSON Schema, with messages that name the
//! parameter at fault, what it must be, and what it got.

use rmcp::model::JsonObject;
use serde_json::Value;

use super::{manager::ManagedTool, outcome::ToolError};

/// Checks `args` against the tool's schema; extra parameters are allowed.
pub(super) fn validate(tool: &ManagedTool, args: Value) -> Result<JsonObject, ToolError> {
    let parameters = match args {
        Value::Object(map) => map,
        Value::Null => JsonObject::new(),
        other => {
            return Err(ToolError::InvalidParameters(format!(
                "expected an object of named parameters, got {}",
                common::kind(&other)
            )));
        }
    };
    let mut instance = Value::Object(parameters);
    if let Some(error) = tool.validator.iter_errors(&instance).next() {
        return Err(ToolError::InvalidParameters(describe(&error)));
    }
    // `instance` is the object built above; taking its map back cannot come out empty.
    Ok(instance
        .as_object_mut()
        .map(std::mem::take)
        .unwrap_or_default())
}

/// Spec 001's texts for validation errors (after `Invalid parameters: `).
fn describe(error: &jsonschema::ValidationError<'_>) -> String {
    use jsonschema::error::{TypeKind, ValidationErrorKind};
    let path = error.instance_path().to_string();
    let parameter = path.trim_start_matches('/').replace('/', ".");
    let at = if parameter.is_empty() {
        "parameters".to_owned()
    } else {
        format!("'{parameter}'")
    };
    let got = error.instance();
    match error.kind() {
        ValidationErrorKind::Required { property } => {
            let property = property
                .as_str()
                .map_or_else(|| property.to_string(), str::to_owned);
            let property = if parameter.is_empty() {
                property
            } else {
                format!("{parameter}.{property}")
            };
            format!("missing '{property}'")
        }
        ValidationErrorKind::Type {
            kind: TypeKind::Single(expected),
        } => {
            let expected = expected.to_string();
            let wanted = if expected == "integer" {
                "an integer (a whole number)".to_owned()
            } else {
                article(&expected)
            };
            format!("{at} must be {wanted}, got {}", show(got))
        }
        ValidationErrorKind::Type {
            kind: TypeKind::Multiple(set),
        } => {
            let types: Vec<String> = set.iter().map(|t| t.to_string()).collect();
            format!(
                "{at} must be one of the types {}, got {}",
                types.join(", "),
                show(got)
            )
        }
        ValidationErrorKind::Enum { options } => {
            let options: Vec<String> = options
                .as_array()
                .map(|o| o.iter().map(Value::to_string).collect())
                .unwrap_or_default();
            format!(
                "{at} must be one of {}, got {}",
                options.join(", "),
                show(got)
            )
        }
        _ => format!("{at}: {error}"),
    }
}

fn article(word: &str) -> String {
    if word.starts_with(['a', 'e', 'i', 'o', 'u']) {
        format!("an {word}")
    } else {
        format!("a {word}")
    }
}

fn show(value: &Value) -> String {
    common::clip(&value.to_string(), 80)
}
