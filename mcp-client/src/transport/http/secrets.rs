//! [`Secrets`]: the values of an entry's `headers` (its token), and cutting them out of what a
//! server sends back. A server that quotes the `Authorization` header in an error or a result
//! would otherwise put the token in our errors, the log, a model's context and the history.
//!
//! A value is found as the entry has it or as JSON writes it (`"`, `\`, `/` escaped); a value
//! shorter than [`SHORTEST`] is left alone: no credential is that short, and cutting it would
//! garble the server's text (`en`, `1`).

use std::{borrow::Cow, sync::Arc};

use serde_json::Value;

/// Shortest value treated as a secret.
const SHORTEST: usize = 8;

/// What a secret is replaced with.
const REDACTED: &str = "[redacted]";

/// The header values of one entry, as they may appear in a server's text.
#[derive(Clone, Default)]
pub struct Secrets {
    /// Each value (and the credential after its scheme: `Bearer <credential>`) and its
    /// JSON-escaped forms, longest first so that a value is cut before a part of it.
    needles: Arc<[String]>,
}

impl Secrets {
    /// The values of `headers`.
    pub fn of<'a>(headers: impl IntoIterator<Item = &'a String>) -> Self {
        let mut needles = Vec::new();
        for value in headers {
            let value = value.trim();
            let credential = value
                .split_once(' ')
                .map(|(_, credential)| credential.trim());
            for secret in std::iter::once(value).chain(credential) {
                if secret.chars().count() < SHORTEST {
                    continue;
                }
                let json = serde_json::to_string(secret).expect("a string serializes");
                let json = json[1..json.len() - 1].to_owned();
                let slashes = json.replace('/', "\\/");
                needles.extend([secret.to_owned(), json, slashes]);
            }
        }
        needles.sort_by_key(|needle| std::cmp::Reverse(needle.len()));
        needles.dedup();
        Self {
            needles: needles.into(),
        }
    }

    /// Whether there is nothing to look for.
    pub fn is_empty(&self) -> bool {
        self.needles.is_empty()
    }

    /// Whether `text` holds a secret.
    pub fn found_in(&self, text: &str) -> bool {
        self.needles
            .iter()
            .any(|needle| text.contains(needle.as_str()))
    }

    /// `text` with every secret replaced by `[redacted]`.
    pub fn scrub<'a>(&self, text: &'a str) -> Cow<'a, str> {
        if !self.found_in(text) {
            return Cow::Borrowed(text);
        }
        let mut text = text.to_owned();
        for needle in self.needles.iter() {
            text = text.replace(needle.as_str(), REDACTED);
        }
        Cow::Owned(text)
    }

    /// `json` (a JSON text) with every secret in its strings and keys replaced, as JSON; a
    /// text that is not JSON is scrubbed as text.
    pub fn scrub_json<'a>(&self, json: &'a str) -> Cow<'a, str> {
        if !self.found_in(json) {
            return Cow::Borrowed(json);
        }
        match serde_json::from_str::<Value>(json) {
            Ok(mut value) => {
                self.scrub_value(&mut value);
                Cow::Owned(value.to_string())
            }
            Err(_) => self.scrub(json),
        }
    }

    /// Replaces every secret in the strings and keys of `value`.
    pub fn scrub_value(&self, value: &mut Value) {
        match value {
            Value::String(text) => {
                if let Cow::Owned(scrubbed) = self.scrub(text) {
                    *text = scrubbed;
                }
            }
            Value::Array(items) => items.iter_mut().for_each(|item| self.scrub_value(item)),
            Value::Object(map) => {
                let entries = std::mem::take(map);
                for (key, mut item) in entries {
                    self.scrub_value(&mut item);
                    map.insert(self.scrub(&key).into_owned(), item);
                }
            }
            Value::Null | Value::Bool(_) | Value::Number(_) => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn secrets() -> Secrets {
        let headers = [
            "Bearer s3cret/t0ken+xyz".to_owned(),
            "en".to_owned(),
            "key\"with-quote".to_owned(),
        ];
        Secrets::of(&headers)
    }

    #[test]
    fn the_value_and_the_credential_after_its_scheme_are_cut() {
        let secrets = secrets();
        assert_eq!(
            secrets.scrub("bad header Bearer s3cret/t0ken+xyz, and s3cret/t0ken+xyz again"),
            "bad header [redacted], and [redacted] again"
        );
        assert_eq!(secrets.scrub("en: nothing secret"), "en: nothing secret");
    }

    #[test]
    fn json_escaped_forms_are_cut_and_the_json_stays_json() {
        let secrets = secrets();
        let php =
            r#"{"error": {"message": "token s3cret\/t0ken+xyz refused", "s3cret/t0ken+xyz": 1}}"#;
        let scrubbed: Value = serde_json::from_str(&secrets.scrub_json(php)).unwrap();
        assert_eq!(
            scrubbed,
            json!({"error": {"message": "token [redacted] refused", "[redacted]": 1}})
        );
        let quoted = serde_json::to_string(&json!({"said": "key\"with-quote"})).unwrap();
        assert_eq!(secrets.scrub_json(&quoted), r#"{"said":"[redacted]"}"#);
        assert!(matches!(
            secrets.scrub_json(r#"{"ok": true}"#),
            Cow::Borrowed(_)
        ));
    }
}
