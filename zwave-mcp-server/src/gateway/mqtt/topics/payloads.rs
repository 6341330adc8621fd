//! What a payload on a status or value topic says, whichever of the three payload types the
//! gateway is set to.

use serde_json::Value;

use crate::gateway::nodes::NodeStatus;

/// The value carried by a value-topic payload, in any of the three payload types:
/// 0 `{"time":..,"value":..}`, 1 the entire value object, 2 the raw value.
/// `None` means the value is undefined (an absent `value`, or an empty raw payload).
pub fn decode_value(payload: &[u8]) -> Option<Value> {
    if payload.is_empty() {
        return None;
    }
    let Ok(parsed) = serde_json::from_slice::<Value>(payload) else {
        // A raw string value is published as plain text.
        return Some(Value::String(String::from_utf8_lossy(payload).into_owned()));
    };
    match &parsed {
        Value::Object(map)
            if map.contains_key("time")
                || (map.contains_key("id") && map.contains_key("commandClass")) =>
        {
            map.get("value").cloned()
        }
        _ => Some(parsed),
    }
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
            Some(Value::Bool(true))
        );
        assert_eq!(decode_value(br#"{"time":1795305899722}"#), None);
        assert_eq!(
            decode_value(
                br#"{"id":"2-37-0-currentValue","nodeId":2,"commandClass":37,"value":false}"#
            ),
            Some(Value::Bool(false))
        );
        assert_eq!(decode_value(b"40"), Some(serde_json::json!(40)));
        assert_eq!(
            decode_value(br#"{"value":0,"unit":"seconds"}"#),
            Some(serde_json::json!({"value":0,"unit":"seconds"}))
        );
        assert_eq!(decode_value(b""), None);
        assert_eq!(decode_value(b"hello"), Some(Value::String("hello".into())));
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
