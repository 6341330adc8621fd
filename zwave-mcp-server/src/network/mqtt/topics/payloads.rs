//! What a payload on a status or value topic says, whichever of the three payload types the
//! gateway is set to.

use std::fmt;

use serde::{
    Deserialize, Deserializer,
    de::{self, MapAccess, Visitor},
};
use serde_json::{Value, value::RawValue};

use crate::network::{
    nodes::NodeStatus,
    values::{MAX_VALUE_BYTES, ValueRefused, parse_value},
};

/// The value carried by a value-topic payload, in any of the three payload types:
/// 0 `{"time":..,"value":..}`, 1 the entire value object, 2 the raw value.
/// `Ok(None)` means the value is undefined (an absent `value`, or an empty raw payload).
///
/// The payload's members are kept as text until the value's is found, and that one is
/// parsed only within the bounds of one value: a huge value is never built into a tree.
///
/// # Errors
/// The value is past the bounds of one value ([`parse_value`]).
pub fn decode_value(payload: &[u8]) -> Result<Option<Value>, ValueRefused> {
    if payload.is_empty() {
        return Ok(None);
    }
    let Ok(text) = std::str::from_utf8(payload) else {
        return plain_text(payload);
    };
    if text.trim_start().starts_with('{')
        && let Ok(members) = serde_json::from_str::<Envelope<'_>>(text)
        && (members.time || (members.id && members.command_class))
    {
        return members
            .value
            .map(|value| parse_value(value.get()))
            .transpose();
    }
    match parse_value(text) {
        Ok(value) => Ok(Some(value)),
        Err(ValueRefused::NotJson(_)) => plain_text(payload),
        Err(refused) => Err(refused),
    }
}

/// What decides a payload object's type (which of its members it has), and its `value`'s text
/// (the last one, as a JSON object's duplicate member is read). Read in one pass over the
/// payload, its members' names compared where they are, nothing allocated: every report of a
/// busy network comes through here.
#[derive(Default)]
struct Envelope<'a> {
    time: bool,
    id: bool,
    command_class: bool,
    value: Option<&'a RawValue>,
}

/// A member of a payload object, by what it tells [`Envelope`].
enum Member {
    Time,
    Id,
    CommandClass,
    Value,
    Other,
}

impl<'de> Deserialize<'de> for Member {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Name;
        impl Visitor<'_> for Name {
            type Value = Member;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a member name")
            }
            fn visit_str<E: de::Error>(self, name: &str) -> Result<Member, E> {
                Ok(match name {
                    "time" => Member::Time,
                    "id" => Member::Id,
                    "commandClass" => Member::CommandClass,
                    "value" => Member::Value,
                    _ => Member::Other,
                })
            }
        }
        deserializer.deserialize_identifier(Name)
    }
}

impl<'de> Deserialize<'de> for Envelope<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Members;
        impl<'de> Visitor<'de> for Members {
            type Value = Envelope<'de>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a JSON object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Envelope<'de>, A::Error> {
                let mut envelope = Envelope::default();
                while let Some(member) = map.next_key::<Member>()? {
                    match member {
                        Member::Value => envelope.value = Some(map.next_value()?),
                        other => {
                            map.next_value::<de::IgnoredAny>()?;
                            match other {
                                Member::Time => envelope.time = true,
                                Member::Id => envelope.id = true,
                                Member::CommandClass => envelope.command_class = true,
                                Member::Value | Member::Other => {}
                            }
                        }
                    }
                }
                Ok(envelope)
            }
        }
        deserializer.deserialize_map(Members)
    }
}

/// A raw string value, published as plain text.
fn plain_text(payload: &[u8]) -> Result<Option<Value>, ValueRefused> {
    if payload.len() > MAX_VALUE_BYTES {
        return Err(ValueRefused::TooLarge {
            bytes: payload.len(),
        });
    }
    Ok(Some(Value::String(
        String::from_utf8_lossy(payload).into_owned(),
    )))
}

/// Availability from a node `status` payload: `{"value":true,"status":"Alive",..}` or bare `true`.
pub fn decode_node_status(payload: &[u8]) -> Option<(bool, Option<NodeStatus>)> {
    match serde_json::from_slice::<Value>(payload).ok()? {
        Value::Bool(available) => Some((available, None)),
        Value::Object(map) => {
            let available = map.get("value")?.as_bool()?;
            let status = map
                .get("status")
                .and_then(Value::as_str)
                .map(NodeStatus::from_word);
            Some((available, status))
        }
        _ => None,
    }
}

/// A boolean status payload: bare `true`/`false` or `{"value":bool,..}`.
pub fn decode_flag(payload: &[u8]) -> Option<bool> {
    match serde_json::from_slice::<Value>(payload).ok()? {
        Value::Bool(flag) => Some(flag),
        Value::Object(map) => map.get("value")?.as_bool(),
        _ => None,
    }
}

/// An epoch-milliseconds payload (`lastActive`): bare number or `{"value":number,..}`.
pub fn decode_epoch_ms(payload: &[u8]) -> Option<i64> {
    match serde_json::from_slice::<Value>(payload).ok()? {
        Value::Number(number) => number.as_i64(),
        Value::Object(map) => map.get("value")?.as_i64(),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn payloads_of_all_three_types_decode_to_the_value() {
        assert_eq!(
            decode_value(br#"{"time":1795305899722,"value":true}"#),
            Ok(Some(Value::Bool(true)))
        );
        assert_eq!(decode_value(br#"{"time":1795305899722}"#), Ok(None));
        assert_eq!(
            decode_value(
                br#"{"id":"2-37-0-currentValue","nodeId":2,"commandClass":37,"value":false}"#
            ),
            Ok(Some(Value::Bool(false)))
        );
        assert_eq!(decode_value(b"40"), Ok(Some(serde_json::json!(40))));
        assert_eq!(
            decode_value(br#"{"value":0,"unit":"seconds"}"#),
            Ok(Some(serde_json::json!({"value":0,"unit":"seconds"})))
        );
        assert_eq!(decode_value(b""), Ok(None));
        assert_eq!(
            decode_value(b"hello"),
            Ok(Some(Value::String("hello".into())))
        );
    }

    #[test]
    fn a_payload_objects_members_are_read_as_json_reads_them() {
        // An escaped member name is the name; of two `value`s the last counts; other members
        // are skipped whatever they hold.
        assert_eq!(
            decode_value(br#"{"\u0074ime":1,"value":3}"#),
            Ok(Some(serde_json::json!(3)))
        );
        assert_eq!(
            decode_value(br#"{"time":1,"value":1,"extra":{"a":[1,2]},"value":2}"#),
            Ok(Some(serde_json::json!(2)))
        );
        // Not a payload object: the value itself.
        assert_eq!(
            decode_value(br#" [1, 2]"#),
            Ok(Some(serde_json::json!([1, 2])))
        );
        assert_eq!(
            decode_value(br#"{"id":"2-37-0-currentValue","value":1}"#),
            Ok(Some(
                serde_json::json!({"id": "2-37-0-currentValue", "value": 1})
            ))
        );
        assert_eq!(
            decode_value(br#"{"time":1,"value":"#),
            Ok(Some(Value::String(r#"{"time":1,"value":"#.into())))
        );
    }

    #[test]
    fn a_value_past_its_bounds_is_refused_in_every_payload_type() {
        let zeros = format!("[{}0]", "0,".repeat(MAX_VALUE_BYTES / 2));
        let refused = Err(ValueRefused::TooLarge { bytes: zeros.len() });
        assert_eq!(decode_value(zeros.as_bytes()), refused);
        assert_eq!(
            decode_value(format!(r#"{{"time":1,"value":{zeros}}}"#).as_bytes()),
            refused
        );
        assert_eq!(
            decode_value(
                format!(r#"{{"id":"2-37-0-currentValue","commandClass":37,"value":{zeros}}}"#)
                    .as_bytes()
            ),
            refused
        );
        let text = "x".repeat(MAX_VALUE_BYTES + 1);
        assert_eq!(
            decode_value(text.as_bytes()),
            Err(ValueRefused::TooLarge { bytes: text.len() })
        );
    }

    #[test]
    fn status_payloads_decode() {
        assert_eq!(
            decode_node_status(br#"{"time":1,"value":true,"status":"Alive","nodeId":2}"#),
            Some((true, Some(NodeStatus::Alive)))
        );
        assert_eq!(decode_node_status(b"false"), Some((false, None)));
        assert_eq!(decode_flag(br#"{"value":false}"#), Some(false));
        assert_eq!(decode_flag(b"true"), Some(true));
        assert_eq!(decode_flag(b"garbage"), None);
        assert_eq!(decode_epoch_ms(b"1795305814572"), Some(1_795_305_814_572));
    }
}
