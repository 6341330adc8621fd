//! [`Refusal`]: why an incoming message is refused before rmcp types it, and the JSON-RPC
//! error it is answered with, so that no client waits forever for an answer that will not come.
//! [`shape`](super::shape) walks the message; this module words what it found.
//!
//! | the message | answer |
//! |---|---|
//! | not UTF-8, not JSON, longer than [`MAX_MESSAGE_BYTES`](super::shape::MAX_MESSAGE_BYTES) | `-32700` parse error, id `null` |
//! | an object with a key twice (`{"deviceName": …, "deviceName": …}`) | `-32600`, its id when that is clear |
//! | an id that is neither a string nor an integer (`1.0`, `1e3`) | `-32600`, the id as sent |
//! | more values or deeper nesting than [`shape`](super::shape) allows | `-32600`, its id |
//! | a part the server keeps (capabilities, client info, `_meta`, a progress token) over its budget | `-32602`, its id |
//!
//! Duplicate keys are refused because every JSON parser picks one of them differently
//! (serde: the last): a command must mean one thing. MCP requires string or integer ids, and
//! rmcp reads `1.0` as `1`: echoing it back as `1` would answer a request nobody sent.

use std::fmt;

use serde_json::Value;

use super::shape::{self, Fault, Kept, MAX_DEPTH, MAX_OBJECTS, MAX_VALUES};
use crate::network::text::echoed;

/// Why a message is refused.
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
    /// More values, or deeper nesting, than a message may hold.
    TooBig {
        /// Which bound: too many values, or too deep.
        fault: Fault,
        /// The request's id, when it is given once and valid.
        id: Option<Value>,
    },
    /// A part the server would keep is over its budget.
    TooLarge {
        /// The part.
        kept: Kept,
        /// At least this many bytes.
        size: usize,
        /// The request's id, when it is given once and valid.
        id: Option<Value>,
    },
    /// A part the server would keep holds more objects than its budget.
    TooManyKeptObjects {
        /// The part.
        kept: Kept,
        /// This many.
        objects: usize,
        /// The request's id, when it is given once and valid.
        id: Option<Value>,
    },
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
            Self::TooBig {
                fault: Fault::TooDeep,
                ..
            } => write!(
                f,
                "Invalid request: the message nests arrays and objects more than {MAX_DEPTH} deep; nothing this server takes does: nothing was done"
            ),
            Self::TooBig {
                fault: Fault::TooManyObjects,
                ..
            } => write!(
                f,
                "Invalid request: the message holds more than {MAX_OBJECTS} JSON objects; nothing this server takes does: nothing was done"
            ),
            Self::TooBig { .. } => write!(
                f,
                "Invalid request: the message holds more than {MAX_VALUES} JSON values; nothing this server takes does: nothing was done"
            ),
            Self::TooManyKeptObjects { kept, objects, .. } => write!(
                f,
                "Invalid params: `{}` holds {objects} JSON objects; this server keeps at most {} of it: nothing was done",
                kept.path, kept.objects
            ),
            Self::TooLarge { kept, size, .. } if kept.path == shape::PROGRESS_TOKEN.path => write!(
                f,
                "Invalid params: the progress token (`{}`) takes {size} bytes; it may take at most {} (a number or a short string): nothing was done",
                kept.path, kept.limit
            ),
            Self::TooLarge { kept, size, .. } => write!(
                f,
                "Invalid params: `{}` takes at least {size} bytes as JSON; this server keeps at most {} bytes of it: nothing was done",
                kept.path, kept.limit
            ),
        }
    }
}

impl Refusal {
    /// Checks one message (a line without its newline, or a body): `Ok` when rmcp may type it.
    pub fn check(message: &[u8]) -> Result<(), Self> {
        std::str::from_utf8(message).map_err(|_| Self::NotUtf8)?;
        let walked = shape::walk(message);
        let id = walked
            .id
            .clone()
            .filter(|_| !walked.id_twice)
            .filter(valid_id);
        match walked.fault {
            Some(Fault::DuplicateKey(key)) => return Err(Self::DuplicateKey { key, id }),
            Some(Fault::TooLarge(kept, size)) => return Err(Self::TooLarge { kept, size, id }),
            Some(Fault::TooManyKeptObjects(kept, objects)) => {
                return Err(Self::TooManyKeptObjects { kept, objects, id });
            }
            Some(fault) => return Err(Self::TooBig { fault, id }),
            None => {}
        }
        if let Some(error) = walked.error {
            return Err(Self::NotJson(error));
        }
        match walked.id {
            Some(id) if !valid_id(&id) && !id.is_null() => Err(Self::BadId(id)),
            _ => Ok(()),
        }
    }

    /// The JSON-RPC error answering the message, with a newline.
    pub fn reply(&self) -> Vec<u8> {
        let (code, id) = match self {
            Self::NotUtf8 | Self::NotJson(_) | Self::TooLong(_) => (-32700, Value::Null),
            Self::DuplicateKey { id, .. } | Self::TooBig { id, .. } => {
                (-32600, id.clone().unwrap_or(Value::Null))
            }
            Self::TooLarge { id, .. } | Self::TooManyKeptObjects { id, .. } => {
                (-32602, id.clone().unwrap_or(Value::Null))
            }
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
        let id = format!("[{}]", vec!["1"; 5_000].join(","));
        let line = format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"ping"}}"#);
        let reply = String::from_utf8(check(&line).unwrap_err().reply()).unwrap();
        assert!(
            reply.starts_with(r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid request: the id [1,1,"#),
            "{reply:.400}"
        );
        assert!(reply.len() < 1_000, "{} bytes", reply.len());
    }

    fn reply_of(line: &str) -> Value {
        serde_json::from_slice(&check(line).unwrap_err().reply()).unwrap()
    }

    #[test]
    fn too_many_values_or_too_deep_is_refused_with_the_id_even_when_it_comes_last() {
        let zeros = vec!["0"; MAX_VALUES].join(",");
        let line = format!(
            r#"{{"jsonrpc":"2.0","method":"tools/call","params":{{"name":"x","arguments":{{"x":[{zeros}]}}}},"id":7}}"#
        );
        assert_eq!(
            reply_of(&line),
            json!({"jsonrpc":"2.0","id":7,"error":{"code":-32600,"message":"Invalid request: the message holds more than 10000 JSON values; nothing this server takes does: nothing was done"}})
        );
        // Just under the bound: the envelope's values and the array's.
        let fits = vec!["0"; MAX_VALUES - 9].join(",");
        let line = format!(
            r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"x","arguments":{{"x":[{fits}]}}}}}}"#
        );
        assert_eq!(check(&line), Ok(()));
        let deep = |levels: usize| {
            format!(
                r#"{{"jsonrpc":"2.0","id":"d","method":"x","params":{}1{}}}"#,
                "[".repeat(levels),
                "]".repeat(levels)
            )
        };
        assert_eq!(check(&deep(MAX_DEPTH - 1)), Ok(()));
        assert_eq!(
            reply_of(&deep(MAX_DEPTH)),
            json!({"jsonrpc":"2.0","id":"d","error":{"code":-32600,"message":"Invalid request: the message nests arrays and objects more than 32 deep; nothing this server takes does: nothing was done"}})
        );
        // Deeper than serde's own limit (128): still our words, not a parse error.
        assert!(matches!(
            check(&deep(10_000)),
            Err(Refusal::TooBig {
                fault: Fault::TooDeep,
                ..
            })
        ));
    }

    #[test]
    fn a_part_the_server_keeps_is_held_to_its_budget_with_invalid_params() {
        let padded = |path: &str, bytes: usize| {
            let pad = "x".repeat(bytes);
            match path {
                "capabilities" => format!(
                    r#"{{"jsonrpc":"2.0","id":0,"method":"initialize","params":{{"protocolVersion":"2025-11-25","capabilities":{{"experimental":{{"p":"{pad}"}}}},"clientInfo":{{"name":"c","version":"1"}}}}}}"#
                ),
                "clientInfo" => format!(
                    r#"{{"jsonrpc":"2.0","id":0,"method":"initialize","params":{{"protocolVersion":"2025-11-25","capabilities":{{}},"clientInfo":{{"name":"{pad}","version":"1"}}}}}}"#
                ),
                _ => format!(
                    r#"{{"jsonrpc":"2.0","id":0,"method":"subscriptions/listen","params":{{"_meta":{{"p":"{pad}"}}}}}}"#
                ),
            }
        };
        // Compact JSON around the padding: {"experimental":{"p":""}} is 25 bytes, and so on.
        for (path, around, limit) in [
            ("capabilities", 25, 8192),
            ("clientInfo", 25, 8192),
            ("_meta", 8, 16384),
        ] {
            assert_eq!(check(&padded(path, limit - around)), Ok(()), "{path}");
            assert_eq!(
                reply_of(&padded(path, limit - around + 1)),
                json!({"jsonrpc":"2.0","id":0,"error":{"code":-32602,"message":format!(
                    "Invalid params: `params.{path}` takes at least {} bytes as JSON; this server keeps at most {limit} bytes of it: nothing was done",
                    limit + 1
                )}}),
                "{path}"
            );
        }
        let token = |token: &str| {
            format!(
                r#"{{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{{"name":"x","arguments":{{}},"_meta":{{"progressToken":{token}}}}}}}"#
            )
        };
        assert_eq!(check(&token(&format!("\"{}\"", "t".repeat(126)))), Ok(()));
        assert_eq!(check(&token("18446744073709551615")), Ok(()));
        assert_eq!(
            reply_of(&token(&format!("\"{}\"", "t".repeat(127)))),
            json!({"jsonrpc":"2.0","id":3,"error":{"code":-32602,"message":"Invalid params: the progress token (`params._meta.progressToken`) takes 129 bytes; it may take at most 128 (a number or a short string): nothing was done"}})
        );
        // Objects cost far more kept than their bytes say: counted on their own.
        let objects = |count: usize| {
            format!(
                r#"{{"jsonrpc":"2.0","id":5,"method":"initialize","params":{{"capabilities":{{"experimental":{{"a":[{}]}}}}}}}}"#,
                vec![r#"{"b":0}"#; count].join(",")
            )
        };
        assert_eq!(check(&objects(30)), Ok(()));
        assert_eq!(
            reply_of(&objects(31)),
            json!({"jsonrpc":"2.0","id":5,"error":{"code":-32602,"message":"Invalid params: `params.capabilities` holds 33 JSON objects; this server keeps at most 32 of it: nothing was done"}})
        );
        let many = format!(
            r#"{{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{{"name":"x","arguments":{{"x":[{}]}}}}}}"#,
            vec![r#"{"b":0}"#; MAX_OBJECTS].join(",")
        );
        assert_eq!(
            reply_of(&many),
            json!({"jsonrpc":"2.0","id":6,"error":{"code":-32600,"message":"Invalid request: the message holds more than 512 JSON objects; nothing this server takes does: nothing was done"}})
        );
        // Elsewhere the same names are no kept parts: a tool's argument may be called so.
        let elsewhere = format!(
            r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"x","arguments":{{"capabilities":"{}"}}}}}}"#,
            "x".repeat(20_000)
        );
        assert_eq!(check(&elsewhere), Ok(()));
    }
}
