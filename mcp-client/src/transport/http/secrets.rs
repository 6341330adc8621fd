//! [`Secrets`]: the values of an entry's `headers` (its token) and, for a signed-in client, the
//! OAuth tokens it holds now ([`LiveSecrets`]), and cutting them out of what a server sends
//! back. A server that quotes the `Authorization` header in an error or a result would
//! otherwise put the token in our errors, the log, a model's context and the history.
//!
//! A value is found as the entry has it, as JSON writes it (`"`, `\`, `/` escaped) or
//! percent-encoded (as a server that puts it in a URL or a form writes it). A value shorter
//! than [`SHORTEST`] is left alone: no credential is that short (an OAuth token carries at
//! least 128 bits, RFC 6749 §10.10; an API key as many), and cutting a short value would
//! garble the server's text (`en`, `1`) while hiding nothing worth hiding. Other encodings
//! (base64 of the value, a value split across strings) are not looked for: a server that
//! goes that far to quote the token back has it already, and this guard is against mistakes,
//! not against the server.

use std::{
    borrow::Cow,
    sync::{Arc, PoisonError, RwLock},
};

use serde_json::Value;

/// Shortest value treated as a secret.
const SHORTEST: usize = 8;

/// What a secret is replaced with.
const REDACTED: &str = "[redacted]";

/// The forms of `values` (and of the credential after a scheme: `Bearer <credential>`) that a
/// server's text may hold, longest first so that a value is cut before a part of it.
fn needles<'a>(values: impl IntoIterator<Item = &'a str>) -> Arc<[String]> {
    let mut needles = Vec::new();
    for value in values {
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
            let encoded = percent_encoded(secret);
            // A form writes a space `+`; some encoders write hex digits in lowercase.
            let form = encoded.replace("%20", "+");
            let lower = lowercase_escapes(&encoded);
            needles.extend([secret.to_owned(), json, slashes, encoded, form, lower]);
        }
    }
    needles.sort_by_key(|needle| std::cmp::Reverse(needle.len()));
    needles.dedup();
    needles.into()
}

/// `value` with every byte but RFC 3986's unreserved ones written `%XX`.
fn percent_encoded(value: &str) -> String {
    let mut out = String::with_capacity(value.len());
    for byte in value.bytes() {
        if byte.is_ascii_alphanumeric() || b"-._~".contains(&byte) {
            out.push(char::from(byte));
        } else {
            out.push_str(&format!("%{byte:02X}"));
        }
    }
    out
}

/// `encoded` with the hex digits of its `%XX` escapes in lowercase.
fn lowercase_escapes(encoded: &str) -> String {
    let mut out = String::with_capacity(encoded.len());
    let mut escape = 0;
    for c in encoded.chars() {
        if c == '%' {
            escape = 2;
            out.push(c);
        } else if escape > 0 {
            escape -= 1;
            out.push(c.to_ascii_lowercase());
        } else {
            out.push(c);
        }
    }
    out
}

/// Secrets that change while a session lasts: the OAuth tokens a signed-in client holds now.
/// Shared by the client's token store, which sets them on every sign-in and refresh, and the
/// guard of each of its sessions.
#[derive(Clone, Default)]
pub struct LiveSecrets(Arc<RwLock<Arc<[String]>>>);

impl LiveSecrets {
    /// From now on, the secrets are `values` (the tokens held).
    #[cfg(any(feature = "oauth", test))]
    pub fn set<'a>(&self, values: impl IntoIterator<Item = &'a str>) {
        let needles = needles(values);
        *self.0.write().unwrap_or_else(PoisonError::into_inner) = needles;
    }

    fn needles(&self) -> Arc<[String]> {
        Arc::clone(&self.0.read().unwrap_or_else(PoisonError::into_inner))
    }
}

/// The header values of one entry, and the tokens of its signed-in client, as they may appear
/// in a server's text.
#[derive(Clone, Default)]
pub struct Secrets {
    /// The forms of the entry's header values.
    fixed: Arc<[String]>,
    /// The tokens held now, when the client signs in.
    live: Option<LiveSecrets>,
}

impl Secrets {
    /// The values of `headers`.
    pub fn of<'a>(headers: impl IntoIterator<Item = &'a String>) -> Self {
        Self {
            fixed: needles(headers.into_iter().map(String::as_str)),
            live: None,
        }
    }

    /// These secrets and, from now on, whatever `live` holds at the time.
    pub fn with_live(self, live: Option<LiveSecrets>) -> Self {
        Self { live, ..self }
    }

    /// Every form of every secret, the entry's first.
    fn lists(&self) -> [Arc<[String]>; 2] {
        let live = self
            .live
            .as_ref()
            .map_or_else(|| Arc::from([]), LiveSecrets::needles);
        [Arc::clone(&self.fixed), live]
    }

    /// Whether there is nothing to look for.
    pub fn is_empty(&self) -> bool {
        self.lists().iter().all(|list| list.is_empty())
    }

    /// Whether `text` holds a secret.
    pub fn found_in(&self, text: &str) -> bool {
        self.lists()
            .iter()
            .flat_map(|list| list.iter())
            .any(|needle| text.contains(needle.as_str()))
    }

    /// `text` with every secret replaced by `[redacted]`.
    pub fn scrub<'a>(&self, text: &'a str) -> Cow<'a, str> {
        if !self.found_in(text) {
            return Cow::Borrowed(text);
        }
        let mut text = text.to_owned();
        for list in self.lists() {
            for needle in list.iter() {
                text = text.replace(needle.as_str(), REDACTED);
            }
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

    #[test]
    fn percent_encoded_echoes_are_cut_in_either_case_and_as_a_form_writes_them() {
        let secrets = Secrets::of(&["Bearer s3cret/t0ken+xyz=".to_owned()]);
        assert_eq!(
            secrets.scrub("GET /?t=s3cret%2Ft0ken%2Bxyz%3D and s3cret%2ft0ken%2bxyz%3d"),
            "GET /?t=[redacted] and [redacted]"
        );
        assert_eq!(
            secrets.scrub("auth=Bearer+s3cret%2Ft0ken%2Bxyz%3D"),
            "auth=[redacted]"
        );
    }

    #[test]
    fn live_secrets_are_cut_as_they_are_now_not_as_they_were() {
        let live = LiveSecrets::default();
        let secrets =
            Secrets::of(&["X-Key k3y-0f-the-entry".to_owned()]).with_live(Some(live.clone()));
        live.set(["access-t0ken-one", "refresh-t0ken-one"]);
        assert_eq!(
            secrets.scrub("access-t0ken-one refresh-t0ken-one k3y-0f-the-entry"),
            "[redacted] [redacted] [redacted]"
        );
        live.set(["access-t0ken-two"]);
        assert_eq!(secrets.scrub("access-t0ken-two"), "[redacted]");
        assert_eq!(secrets.scrub("access-t0ken-one"), "access-t0ken-one");
        assert!(!Secrets::default().with_live(Some(live)).is_empty());
    }

    #[test]
    fn a_value_shorter_than_eight_characters_is_not_a_secret() {
        let secrets = Secrets::of(&["Bearer abc1234".to_owned()]);
        assert_eq!(secrets.scrub("abc1234"), "abc1234");
        assert_eq!(secrets.scrub("Bearer abc1234"), "[redacted]");
    }
}
