//! [`Refusal`]: why an incoming line is refused before rmcp types it, and the JSON-RPC error
//! it is answered with, so that no client waits forever for an answer that will not come.
//!
//! | the line | answer |
//! |---|---|
//! | not UTF-8, not JSON, longer than the line limit | `-32700` parse error, id `null` |
//! | an object with a key twice (`{"deviceName": …, "deviceName": …}`) | `-32600`, its id when that is clear |
//! | an id that is neither a string nor an integer (`1.0`, `1e3`) | `-32600`, the id as sent |
//!
//! Duplicate keys are refused because every JSON parser picks one of them differently
//! (serde: the last): a command must mean one thing. MCP requires string or integer ids, and
//! rmcp reads `1.0` as `1`: echoing it back as `1` would answer a request nobody sent.

use std::{cell::RefCell, collections::HashSet, fmt};

use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::Value;

use crate::network::text::echoed;

/// Why a line is refused.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Refusal {
    /// Not UTF-8.
    NotUtf8,
    /// Not JSON (serde's words, with the position).
    NotJson(String),
    /// Longer than the line limit, in bytes.
    TooLong(usize),
    /// An object holds a key twice.
    DuplicateKey {
        /// The key.
        key: String,
        /// The request's id, when it is given once and valid.
        id: Option<Value>,
    },
    /// The id is neither a string nor an integer.
    BadId(Value),
}

impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::NotUtf8 => f.write_str("Parse error: the message is not UTF-8"),
            Self::NotJson(reason) => write!(f, "Parse error: the message is not JSON ({reason})"),
            Self::TooLong(limit) => write!(
                f,
                "Parse error: the message is longer than {limit} bytes and was not read"
            ),
            Self::DuplicateKey { key, .. } => write!(
                f,
                "Invalid request: the key {} appears twice in one object; send every key once",
                Value::from(&*echoed(key))
            ),
            Self::BadId(id) => write!(
                f,
                "Invalid request: the id {} is neither a string nor an integer, as MCP requires",
                echoed(&id.to_string())
            ),
        }
    }
}

impl Refusal {
    /// Checks one line (without its newline): `Ok` when rmcp may type it.
    pub fn check(line: &[u8]) -> Result<(), Self> {
        std::str::from_utf8(line).map_err(|_| Self::NotUtf8)?;
        let seen = Seen::default();
        let mut reader = serde_json::Deserializer::from_slice(line);
        let checked = Checker {
            seen: &seen,
            top: true,
        }
        .deserialize(&mut reader)
        .and_then(|()| reader.end());
        let Seen {
            duplicate,
            id,
            id_twice,
        } = seen;
        if let Some(key) = duplicate.into_inner() {
            let id = id
                .into_inner()
                .filter(|_| !id_twice.into_inner())
                .filter(valid_id);
            return Err(Self::DuplicateKey { key, id });
        }
        checked.map_err(|err| Self::NotJson(err.to_string()))?;
        match id.into_inner() {
            Some(id) if !valid_id(&id) && !id.is_null() => Err(Self::BadId(id)),
            _ => Ok(()),
        }
    }

    /// The JSON-RPC error answering the line, with its newline.
    pub fn reply(&self) -> Vec<u8> {
        let (code, id) = match self {
            Self::NotUtf8 | Self::NotJson(_) | Self::TooLong(_) => (-32700, Value::Null),
            Self::DuplicateKey { id, .. } => (-32600, id.clone().unwrap_or(Value::Null)),
            // An id too long to quote is not quoted back either.
            Self::BadId(id) if id.to_string().len() > crate::network::text::MAX_NAME_CHARS => {
                (-32600, Value::Null)
            }
            Self::BadId(id) => (-32600, id.clone()),
        };
        let message = Value::from(self.to_string());
        format!("{{\"jsonrpc\":\"2.0\",\"id\":{id},\"error\":{{\"code\":{code},\"message\":{message}}}}}\n")
            .into_bytes()
    }
}

fn valid_id(id: &Value) -> bool {
    match id {
        Value::String(_) => true,
        Value::Number(number) => number.is_i64() || number.is_u64(),
        _ => false,
    }
}

/// What the check found.
#[derive(Default)]
struct Seen {
    duplicate: RefCell<Option<String>>,
    /// The top-level `id`.
    id: RefCell<Option<Value>>,
    id_twice: RefCell<bool>,
}

/// Walks any JSON value, refusing an object with a key twice (and noting the top-level id).
#[derive(Clone, Copy)]
struct Checker<'a> {
    seen: &'a Seen,
    top: bool,
}

impl<'de> DeserializeSeed<'de> for Checker<'_> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Checker<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_bool<E>(self, _: bool) -> Result<(), E> {
        Ok(())
    }

    fn visit_i64<E>(self, _: i64) -> Result<(), E> {
        Ok(())
    }

    fn visit_u64<E>(self, _: u64) -> Result<(), E> {
        Ok(())
    }

    fn visit_f64<E>(self, _: f64) -> Result<(), E> {
        Ok(())
    }

    fn visit_str<E>(self, _: &str) -> Result<(), E> {
        Ok(())
    }

    fn visit_unit<E>(self) -> Result<(), E> {
        Ok(())
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        let inner = Checker { top: false, ..self };
        while seq.next_element_seed(inner)?.is_some() {}
        Ok(())
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let inner = Checker { top: false, ..self };
        // Most objects are small: a list is faster than hashing until there are many keys.
        let mut keys: Vec<String> = Vec::new();
        let mut many: HashSet<String> = HashSet::new();
        while let Some(key) = map.next_key::<String>()? {
            let seen = if many.is_empty() {
                keys.contains(&key)
            } else {
                many.contains(&key)
            };
            if self.top && key == "id" {
                if seen {
                    *self.seen.id_twice.borrow_mut() = true;
                } else {
                    *self.seen.id.borrow_mut() = Some(map.next_value::<Value>()?);
                }
            }
            if seen {
                *self.seen.duplicate.borrow_mut() = Some(key);
                return Err(de::Error::custom("a key appears twice"));
            }
            if !(self.top && key == "id") {
                map.next_value_seed(inner)?;
            }
            if many.is_empty() && keys.len() < 16 {
                keys.push(key);
            } else {
                many.extend(keys.drain(..));
                many.insert(key);
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn check(line: &str) -> Result<(), Refusal> {
        Refusal::check(line.as_bytes())
    }

    #[test]
    fn well_formed_lines_pass() {
        for line in [
            r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#,
            r#"{"jsonrpc":"2.0","id":"a","method":"tools/call","params":{"name":"x","arguments":{"a":{"a":1},"b":[{"a":1},{"a":2}]}}}"#,
            r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
            r#"{"jsonrpc":"2.0","id":-7,"result":{}}"#,
            r#"[1,2,{"id":1.5}]"#,
            r#"{"jsonrpc":"2.0","id":null,"method":"x"}"#,
        ] {
            assert_eq!(check(line), Ok(()), "{line}");
        }
        let many: String = (0..100).map(|n| format!("\"k{n}\":{n},")).collect();
        assert_eq!(check(&format!("{{{many}\"end\":0}}")), Ok(()));
    }

    #[test]
    fn a_key_twice_is_refused_with_the_id_when_it_is_clear() {
        let refusal = check(r#"{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"control_zwave_device","arguments":{"deviceName":"Garage Light","deviceName":"Switch One","action":"on"}}}"#).unwrap_err();
        assert_eq!(
            refusal,
            Refusal::DuplicateKey {
                key: "deviceName".into(),
                id: Some(json!(4))
            }
        );
        assert_eq!(
            String::from_utf8(refusal.reply()).unwrap(),
            "{\"jsonrpc\":\"2.0\",\"id\":4,\"error\":{\"code\":-32600,\"message\":\"Invalid request: the key \\\"deviceName\\\" appears twice in one object; send every key once\"}}\n"
        );
        assert_eq!(
            check(r#"{"id":1,"id":2,"method":"ping","jsonrpc":"2.0"}"#),
            Err(Refusal::DuplicateKey {
                key: "id".into(),
                id: None
            })
        );
        let many: String = (0..100).map(|n| format!("\"k{n}\":{n},")).collect();
        assert!(matches!(
            check(&format!("{{\"id\":\"x\",{many}\"k7\":0}}")),
            Err(Refusal::DuplicateKey { key, id: Some(id) }) if key == "k7" && id == "x"
        ));
    }

    #[test]
    fn ids_that_are_not_strings_or_integers_are_refused_as_sent() {
        let refusal = check(r#"{"jsonrpc":"2.0","id":1.0,"method":"ping"}"#).unwrap_err();
        assert_eq!(refusal, Refusal::BadId(json!(1.0)));
        assert_eq!(
            String::from_utf8(refusal.reply()).unwrap(),
            "{\"jsonrpc\":\"2.0\",\"id\":1.0,\"error\":{\"code\":-32600,\"message\":\"Invalid request: the id 1.0 is neither a string nor an integer, as MCP requires\"}}\n"
        );
        assert!(check(r#"{"jsonrpc":"2.0","id":[1],"method":"ping"}"#).is_err());
        assert!(check(r#"{"jsonrpc":"2.0","id":true,"method":"ping"}"#).is_err());
    }

    #[test]
    fn lines_that_are_not_json_get_a_parse_error() {
        assert_eq!(
            String::from_utf8(Refusal::NotUtf8.reply()).unwrap(),
            "{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32700,\"message\":\"Parse error: the message is not UTF-8\"}}\n"
        );
        assert_eq!(Refusal::check(b"{\"a\":\"\xff\"}"), Err(Refusal::NotUtf8));
        assert_eq!(
            check("not json"),
            Err(Refusal::NotJson("expected ident at line 1 column 2".into()))
        );
        assert_eq!(
            check(r#"{"a":1} {"b":2}"#),
            Err(Refusal::NotJson(
                "trailing characters at line 1 column 9".into()
            ))
        );
        assert_eq!(
            Refusal::TooLong(16).to_string(),
            "Parse error: the message is longer than 16 bytes and was not read"
        );
    }

    #[test]
    fn a_huge_key_or_id_is_quoted_cut_as_names_are() {
        let key = "k".repeat(100_000);
        let line =
            format!(r#"{{"jsonrpc":"2.0","id":1,"method":"x","params":{{"{key}":1,"{key}":2}}}}"#);
        let reply = String::from_utf8(check(&line).unwrap_err().reply()).unwrap();
        assert!(
            reply.contains(&format!(
                "the key \\\"{}…\\\" appears twice",
                "k".repeat(255)
            )),
            "{reply:.400}"
        );
        assert!(reply.len() < 1_000, "{} bytes", reply.len());
        let id = format!("[{}]", vec!["1"; 100_000].join(","));
        let line = format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"ping"}}"#);
        let reply = String::from_utf8(check(&line).unwrap_err().reply()).unwrap();
        assert!(
            reply.starts_with(r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid request: the id [1,1,"#),
            "{reply:.400}"
        );
        assert!(reply.len() < 1_000, "{} bytes", reply.len());
    }
}
