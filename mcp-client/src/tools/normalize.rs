//! Argument-name normalization for MCP tools: a model's `snake_case` names reach a server
//! that wants `camelCase` (only where its schema says so).
//!
//! Models often send `device_name` where a server wants `deviceName`. First the static
//! mappings apply (built-in ones for the Z-Wave tools, more from each server's
//! `parameterMappings`), then the snake_case → camelCase heuristic.
//!
//! Decision (the spec's "evaluation", made per tool and automatic): the heuristic renames a
//! key only when the tool's input schema has the camelCase property and not the snake_case
//! one. A server that really uses snake_case is left alone, and a key the schema does not know
//! either way passes through unchanged, so the server's own error about it reaches the model.
//! Local tools are never normalized (the executor calls this for MCP tools only).

use std::collections::BTreeMap;

use rmcp::model::JsonObject;
use serde_json::Value;
use tracing::info;

/// Renames of argument names, per tool.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Normalizer {
    mappings: BTreeMap<String, BTreeMap<String, String>>,
}

impl Normalizer {
    /// The built-in mappings for the Z-Wave tools.
    pub fn with_builtins() -> Self {
        let mut normalizer = Self::default();
        normalizer.add(
            "control_zwave_device",
            [
                ("device_name", "deviceName"),
                ("command", "action"),
                ("brightness", "level"),
            ],
        );
        normalizer.add("get_device_sensor_data", [("device_name", "deviceName")]);
        normalizer.add("get_device_status", [("device_name", "deviceName")]);
        normalizer
    }

    /// Adds renames for `tool` (later ones win).
    pub fn add<'a>(&mut self, tool: &str, renames: impl IntoIterator<Item = (&'a str, &'a str)>) {
        let map = self.mappings.entry(tool.to_owned()).or_default();
        for (from, to) in renames {
            map.insert(from.to_owned(), to.to_owned());
        }
    }

    /// Normalizes `arguments` of `tool` against its input schema; logs what changed.
    pub fn normalize(
        &self,
        server: &str,
        tool: &str,
        schema: &JsonObject,
        arguments: JsonObject,
    ) -> JsonObject {
        let properties = schema.get("properties").and_then(Value::as_object);
        let knows = |name: &str| properties.is_some_and(|p| p.contains_key(name));
        let statics = self.mappings.get(tool);
        let target_of = |key: &str| match statics.and_then(|m| m.get(key)) {
            Some(to) => Some(to.clone()),
            None if key.contains('_') && !knows(key) => {
                let camel = to_camel_case(key);
                knows(&camel).then_some(camel)
            }
            None => None,
        };
        let targets: Vec<Option<String>> = arguments.keys().map(|key| target_of(key)).collect();
        let mut changed = false;
        let mut out = JsonObject::new();
        for ((key, value), target) in arguments.iter().zip(&targets) {
            match target {
                // Never overwrite a key the caller also gave under its right name, and never
                // merge two arguments into one (`user_name` and `user__name` both → `userName`):
                // then both stay as given, and validation names the problem.
                Some(to)
                    if to != key
                        && !arguments.contains_key(to)
                        && targets.iter().filter(|t| t.as_ref() == Some(to)).count() == 1 =>
                {
                    changed = true;
                    out.insert(to.clone(), value.clone());
                }
                _ => {
                    out.insert(key.clone(), value.clone());
                }
            }
        }
        if changed {
            info!(
                server,
                tool,
                "normalized arguments: {} → {}",
                show(&arguments),
                show(&out)
            );
        }
        out
    }
}

/// `new_parameter_name` → `newParameterName`.
pub fn to_camel_case(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    let mut upper = false;
    for (i, c) in name.chars().enumerate() {
        if c == '_' && i > 0 {
            upper = true;
        } else if upper {
            out.extend(c.to_uppercase());
            upper = false;
        } else {
            out.push(c);
        }
    }
    out
}

/// `{device_name: "Switch One", level: 40}`: the spec's log notation, secrets redacted.
fn show(arguments: &JsonObject) -> String {
    let parts: Vec<String> = arguments
        .iter()
        .map(|(key, value)| {
            if super::redact::is_secret_key(key) {
                format!("{key}: \"***\"")
            } else {
                format!("{key}: {}", super::redact::redacted(value))
            }
        })
        .collect();
    format!("{{{}}}", parts.join(", "))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn object(value: Value) -> JsonObject {
        value.as_object().unwrap().clone()
    }

    #[test]
    fn the_normalization_log_never_shows_secrets() {
        assert_eq!(
            show(&object(
                json!({"device_name": "A", "auth": {"password": "p"}, "api_token": "t"})
            )),
            r#"{api_token: "***", auth: {"password":"***"}, device_name: "A"}"#
        );
    }

    fn zwave_schema() -> JsonObject {
        object(
            json!({"type": "object", "properties": {"deviceName": {}, "action": {}, "level": {}}}),
        )
    }

    // Static parameter mappings for known MCP tools
    #[test]
    fn static_mappings_rename_the_zwave_arguments() {
        let out = Normalizer::with_builtins().normalize(
            "zwave",
            "control_zwave_device",
            &zwave_schema(),
            object(json!({"device_name": "Switch One", "command": "on", "brightness": 40})),
        );
        assert_eq!(
            Value::Object(out),
            json!({"deviceName": "Switch One", "action": "on", "level": 40})
        );
    }

    // Found by the `normalizing_never_loses_an_argument` property: two names that both become
    // `userName` used to be merged into one, silently dropping an argument.
    #[test]
    fn two_names_for_the_same_parameter_are_both_kept_as_given() {
        let schema = object(json!({"properties": {"userName": {}}}));
        let out = Normalizer::with_builtins().normalize(
            "s",
            "t",
            &schema,
            object(json!({"user_name": "Ann", "user__name": "Bob"})),
        );
        assert_eq!(
            Value::Object(out),
            json!({"user_name": "Ann", "user__name": "Bob"})
        );
    }

    // Heuristic conversion for unmapped parameters
    #[test]
    fn the_heuristic_renames_only_what_the_schema_wants_in_camel_case() {
        let schema = object(json!({"properties": {"newParameterName": {}, "snake_kept": {}}}));
        let out = Normalizer::default().normalize(
            "s",
            "t",
            &schema,
            object(json!({"new_parameter_name": 1, "snake_kept": 2, "unknown_key": 3, "level": 4})),
        );
        assert_eq!(
            Value::Object(out),
            json!({"newParameterName": 1, "snake_kept": 2, "unknown_key": 3, "level": 4})
        );
    }

    #[test]
    fn a_right_name_given_too_is_never_overwritten() {
        let out = Normalizer::with_builtins().normalize(
            "zwave",
            "control_zwave_device",
            &zwave_schema(),
            object(json!({"deviceName": "A", "device_name": "B", "action": "on"})),
        );
        assert_eq!(
            Value::Object(out),
            json!({"deviceName": "A", "device_name": "B", "action": "on"})
        );
    }

    #[test]
    fn camel_case_conversion() {
        assert_eq!(to_camel_case("device_name"), "deviceName");
        assert_eq!(to_camel_case("a_b_c"), "aBC");
        assert_eq!(to_camel_case("_private"), "_private");
        assert_eq!(to_camel_case("level"), "level");
    }
}
