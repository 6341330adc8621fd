//! What a payload on a status or value topic says, whichever of the three payload types the
//! gateway is set to.

use std::collections::HashMap;

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
    if let Ok(members) = serde_json::from_str::<HashMap<String, &RawValue>>(text)
        && (members.contains_key("time")
            || (members.contains_key("id") && members.contains_key("commandClass")))
    {
        return members
            .get("value")
            .map(|value| parse_value(value.get()))
            .transpose();
    }
    match parse_value(text) {
        Ok(value) => Ok(Some(value)),
        Err(ValueRefused::NotJson(_)) => plain_text(payload),
        Err(refused) => Err(refused),
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
