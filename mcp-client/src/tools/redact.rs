//! Tool arguments as logs show them: the value of every key that names a secret (password,
//! token, secret, key, authorization, cookie, credential, …) replaced by `***`, at any depth.
//! Everything that logs arguments goes through here.

use rmcp::model::JsonObject;
use serde_json::Value;

const SECRET_WORDS: [&str; 9] = [
    "password",
    "passwd",
    "secret",
    "token",
    "authorization",
    "cookie",
    "credential",
    "apikey",
    "api_key",
];

/// Whether a key's value must not be logged.
pub fn is_secret_key(key: &str) -> bool {
    let lower = key.to_lowercase();
    SECRET_WORDS.iter().any(|word| lower.contains(word))
        || lower == "key"
        || lower.ends_with("_key")
        || lower.ends_with("-key")
        // camelCase: privateKey, accessKey (but not "monkey")
        || (key.len() > 3 && key.ends_with("Key"))
}

/// `value` with every secret redacted, at any depth.
pub fn redacted(value: &Value) -> Value {
    match value {
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(key, child)| {
                    let shown = if is_secret_key(key) {
                        Value::String("***".into())
                    } else {
                        redacted(child)
                    };
                    (key.clone(), shown)
                })
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.iter().map(redacted).collect()),
        other => other.clone(),
    }
}

/// Parameters for logs, as JSON, with secrets replaced by `***`.
pub fn redact(parameters: &JsonObject) -> String {
    redacted(&Value::Object(parameters.clone())).to_string()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn secrets_are_redacted_at_any_depth() {
        let parameters = json!({
            "city": "Oslo", "password": "p", "API_KEY": "k", "authToken": "t",
            "auth": {"headers": [{"Authorization": "Bearer x", "accept": "json"}], "key": "k2"},
            "session": {"cookie": "c", "privateKey": "pk", "monkey": "banana"}
        });
        assert_eq!(
            redact(parameters.as_object().unwrap()),
            r#"{"API_KEY":"***","auth":{"headers":[{"Authorization":"***","accept":"json"}],"key":"***"},"authToken":"***","city":"Oslo","password":"***","session":{"cookie":"***","monkey":"banana","privateKey":"***"}}"#
        );
    }
}
