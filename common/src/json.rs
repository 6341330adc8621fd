//! A JSON value's kind, as error messages name it: "got a string".

use serde_json::Value;

/// "null", "a boolean", "a number", "a string", "an array" or "an object".
pub fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn every_kind_reads_after_got() {
        let kinds: Vec<&str> = [
            json!(null),
            json!(true),
            json!(1),
            json!("x"),
            json!([]),
            json!({}),
        ]
        .iter()
        .map(kind)
        .collect();
        assert_eq!(
            kinds,
            [
                "null",
                "a boolean",
                "a number",
                "a string",
                "an array",
                "an object"
            ]
        );
    }
}
