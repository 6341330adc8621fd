//! What the checker answers to a server's questions at 2026-07-28 (`inputRequests`): it
//! accepts each form with its defaults, or declines. It declared forms only, so a question of
//! another kind (sampling, roots) is the server's fault and gets no answer.

use rmcp::model::{
    ElicitRequestParams, ElicitResult, ElicitationAction, ElicitationSchema, InputRequest,
    InputRequests,
};
use serde_json::{Map, Value, json};

/// How the checker answers every form of a round.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reply {
    /// Accept, with each field's default ([`form_defaults`]).
    Accept,
    /// Decline.
    Decline,
}

/// The `inputResponses` that answer `requests` with `reply`, keyed as the server keyed them.
///
/// # Errors
/// A request that is no form (sampling, roots), which the checker did not declare it can do.
pub fn answer(requests: &InputRequests, reply: Reply) -> Result<Map<String, Value>, String> {
    let mut responses = Map::new();
    for (key, request) in requests {
        let params = match request {
            InputRequest::Elicitation(elicit) => &elicit.params,
            InputRequest::CreateMessage(_) => {
                return Err(undeclared(key, "sampling/createMessage"));
            }
            InputRequest::ListRoots(_) => return Err(undeclared(key, "roots/list")),
            _ => return Err(undeclared(key, "a request of a kind rmcp does not know")),
        };
        let result = match (reply, params) {
            (Reply::Decline, _) => ElicitResult::new(ElicitationAction::Decline),
            (
                Reply::Accept,
                ElicitRequestParams::FormElicitationParams {
                    requested_schema, ..
                },
            ) => ElicitResult::new(ElicitationAction::Accept)
                .with_content(form_defaults(requested_schema)),
            // A URL form is filled in elsewhere: its accept carries nothing.
            (Reply::Accept, _) => ElicitResult::new(ElicitationAction::Accept),
        };
        let value = serde_json::to_value(result)
            .map_err(|err| format!("cannot write the answer to `{key}`: {err}"))?;
        responses.insert(key.clone(), value);
    }
    Ok(responses)
}

fn undeclared(key: &str, method: &str) -> String {
    format!(
        "`{key}` asks for {method}, which the client did not declare (its capabilities: form elicitation only)"
    )
}

/// What a person who changes nothing submits: each field's `default`; a required field
/// without one gets `true` (a yes/no question answered yes), its first choice, its minimum
/// (else 0), or the shortest string it allows.
pub fn form_defaults(schema: &ElicitationSchema) -> Value {
    let required = schema.required.as_deref().unwrap_or_default();
    let mut content = Map::new();
    for (name, property) in &schema.properties {
        let property = serde_json::to_value(property).unwrap_or_default();
        if let Some(default) = property.get("default") {
            content.insert(name.clone(), default.clone());
        } else if required.contains(name) {
            content.insert(name.clone(), filled(&property));
        }
    }
    Value::Object(content)
}

/// A value `property` (one field's schema, as JSON) accepts, for a field without a default.
fn filled(property: &Value) -> Value {
    let first_choice = property
        .get("enum")
        .and_then(|choices| choices.get(0))
        .or_else(|| property.pointer("/oneOf/0/const"))
        .or_else(|| property.pointer("/anyOf/0/const"))
        .or_else(|| property.pointer("/items/enum/0"))
        .or_else(|| property.pointer("/items/anyOf/0/const"));
    match property.get("type").and_then(Value::as_str) {
        Some("array") => json!(first_choice.into_iter().collect::<Vec<_>>()),
        _ if first_choice.is_some() => first_choice.cloned().unwrap_or_default(),
        Some("boolean") => json!(true),
        Some("number" | "integer") => property.get("minimum").cloned().unwrap_or(json!(0)),
        _ => {
            let shortest = property
                .get("minLength")
                .and_then(Value::as_u64)
                .unwrap_or(0);
            json!("x".repeat(usize::try_from(shortest).unwrap_or(0)))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn requests(value: Value) -> InputRequests {
        serde_json::from_value(value).unwrap()
    }

    fn form(schema: Value) -> Value {
        json!({"method": "elicitation/create", "params": {
            "mode": "form", "message": "Sure?", "requestedSchema": schema}})
    }

    #[test]
    fn a_form_is_accepted_with_its_defaults_and_required_fields_filled() {
        let asked = requests(json!({"q": form(json!({
            "type": "object",
            "properties": {
                "confirm": {"type": "boolean"},
                "room": {"type": "string", "default": "hall"},
                "colour": {"type": "string", "enum": ["red", "blue"]},
                "level": {"type": "integer", "minimum": 5},
                "name": {"type": "string", "minLength": 2},
                "note": {"type": "string"},
            },
            "required": ["confirm", "colour", "level", "name"],
        }))}));
        assert_eq!(
            Value::Object(answer(&asked, Reply::Accept).unwrap()),
            json!({"q": {"action": "accept", "content": {
                "confirm": true, "room": "hall", "colour": "red", "level": 5, "name": "xx"}}})
        );
        assert_eq!(
            Value::Object(answer(&asked, Reply::Decline).unwrap()),
            json!({"q": {"action": "decline"}})
        );
    }

    #[test]
    fn a_question_the_client_did_not_declare_gets_no_answer() {
        let asked = requests(json!({"llm": {"method": "sampling/createMessage",
            "params": {"messages": [], "maxTokens": 5}}}));
        assert_eq!(
            answer(&asked, Reply::Accept).unwrap_err(),
            "`llm` asks for sampling/createMessage, which the client did not declare (its capabilities: form elicitation only)"
        );
    }
}
