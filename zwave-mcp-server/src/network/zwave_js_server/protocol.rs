//! zwave-js-server's messages: what the server sends (its version, a command's result, an
//! event), the commands this server sends, and the API schema it speaks.
//!
//! Facts from the recorded sessions (`fixtures/zwave-js-server/`): on connect the server sends
//! `{"type": "version", …, "minSchemaVersion", "maxSchemaVersion"}`; a command carries a
//! `messageId` its result repeats; a failed command is `success: false` with an `errorCode`
//! (`node_not_found`, `unknown_command`, `zwave_error` with a Z-Wave error code and message);
//! `node.set_value` answers `result.result = {status, message?}` (the same SetValueStatus codes
//! as Z-Wave JS UI's `writeValue`).

use std::{collections::HashMap, fmt};

use serde::de::IgnoredAny;
use serde_json::{Value, json, value::RawValue};

use crate::network::ValueId;

/// The API schema this server speaks (zwave-js-server 3.x; the recorded sessions used 44).
pub const SCHEMA_VERSION: u64 = 44;

/// The command that reads the whole state; its result replaces the cache.
pub(super) const RELOAD: &str = "start_listening";

/// One message from the server. What it carries stays JSON text borrowed from the frame until
/// its reader takes what it needs: no part of a frame becomes a `serde_json::Value` tree
/// unread (32 bytes per element: a 60 MiB `[0,0,…]` would be a 1 GB tree).
#[derive(Debug, Clone)]
pub enum Incoming<'a> {
    /// Sent first on every connection.
    Version(ServerVersion),
    /// A command's result.
    Result {
        /// The command's `messageId`.
        message_id: String,
        /// What it gave (`None`: nothing, or `null`), or why it failed.
        outcome: Result<Option<&'a RawValue>, ServerFailure>,
    },
    /// Something happened: the message's `event` (`{"source", "event", …}`), if any.
    Event(Option<&'a RawValue>),
}

/// The server's `version` message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerVersion {
    /// zwave-js-server's version.
    pub server: String,
    /// The zwave-js driver's version.
    pub driver: String,
    /// The oldest API schema it speaks.
    pub min_schema: u64,
    /// The newest.
    pub max_schema: u64,
}

impl ServerVersion {
    /// Whether it speaks [`SCHEMA_VERSION`].
    ///
    /// # Errors
    /// It does not: the message names both and what to upgrade.
    pub fn check(&self) -> Result<(), SchemaMismatch> {
        if (self.min_schema..=self.max_schema).contains(&SCHEMA_VERSION) {
            return Ok(());
        }
        Err(SchemaMismatch {
            server: self.server.clone(),
            min_schema: self.min_schema,
            max_schema: self.max_schema,
        })
    }
}

/// The server does not speak [`SCHEMA_VERSION`]: which side to upgrade.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "zwave-js-server {server} speaks API schemas {min_schema}–{max_schema}, and this server speaks {SCHEMA_VERSION}: {}",
    upgrade(*.max_schema)
)]
pub struct SchemaMismatch {
    /// zwave-js-server's version.
    pub server: String,
    /// The oldest API schema it speaks.
    pub min_schema: u64,
    /// The newest.
    pub max_schema: u64,
}

/// What to upgrade when the server speaks schemas up to `max_schema` only.
fn upgrade(max_schema: u64) -> &'static str {
    if max_schema < SCHEMA_VERSION {
        "upgrade zwave-js-server (or Z-Wave JS UI / the Z-Wave JS add-on)"
    } else {
        "upgrade zwave-mcp-server"
    }
}

/// Why a frame from the server does not read.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum FrameError {
    /// The frame is not JSON.
    #[error("a message that is not JSON ({0})")]
    NotJson(serde_json::Error),
    /// JSON, but not one of the three kinds of message (`None`: no object, or no `type`).
    #[error("a message of an unknown type ({})", type_name(.0.as_deref()))]
    UnknownType(Option<String>),
}

/// An unknown message's `type` as said: quoted, or `none`.
fn type_name(kind: Option<&str>) -> String {
    kind.map_or_else(|| "none".to_owned(), |kind| format!("{kind:?}"))
}

/// Why the server failed a command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerFailure {
    /// Its `errorCode` (`node_not_found`, `unknown_command`, `zwave_error`, …).
    pub code: String,
    /// What it said, if anything (for `zwave_error`, the driver's message, `ZW0204` …).
    pub message: String,
}

impl fmt::Display for ServerFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.message.is_empty() {
            f.write_str(&self.code)
        } else {
            write!(f, "{}: {}", self.code, self.message)
        }
    }
}

/// Reads one text frame from the server: its members as text, each parsed only when read.
///
/// # Errors
/// It is not JSON, or not one of the three kinds of message.
pub fn read(frame: &str) -> Result<Incoming<'_>, FrameError> {
    let members: HashMap<String, &RawValue> = match serde_json::from_str(frame) {
        Ok(members) => members,
        // JSON that is no object is told apart without being built.
        Err(_) if serde_json::from_str::<IgnoredAny>(frame).is_ok() => {
            return Err(FrameError::UnknownType(None));
        }
        Err(err) => return Err(FrameError::NotJson(err)),
    };
    let member = |key: &str| members.get(key).copied();
    let text = |key: &str| {
        member(key)
            .and_then(|raw| serde_json::from_str::<String>(raw.get()).ok())
            .unwrap_or_default()
    };
    let number = |key: &str| {
        member(key)
            .and_then(|raw| serde_json::from_str::<u64>(raw.get()).ok())
            .unwrap_or(0)
    };
    let kind = member("type").and_then(|raw| serde_json::from_str::<String>(raw.get()).ok());
    match kind.as_deref() {
        Some("version") => Ok(Incoming::Version(ServerVersion {
            server: text("serverVersion"),
            driver: text("driverVersion"),
            min_schema: number("minSchemaVersion"),
            max_schema: number("maxSchemaVersion"),
        })),
        Some("result") => {
            let success = member("success")
                .and_then(|raw| serde_json::from_str::<bool>(raw.get()).ok())
                == Some(true);
            let outcome = if success {
                Ok(member("result").filter(|raw| raw.get() != "null"))
            } else {
                let zwave = text("zwaveErrorMessage");
                Err(ServerFailure {
                    code: text("errorCode"),
                    message: if zwave.is_empty() {
                        text("message")
                    } else {
                        zwave
                    },
                })
            };
            Ok(Incoming::Result {
                message_id: text("messageId"),
                outcome,
            })
        }
        Some("event") => Ok(Incoming::Event(member("event"))),
        other => Err(FrameError::UnknownType(other.map(str::to_owned))),
    }
}

/// The text of command `command` with `message_id` and its `params` (an object's fields).
pub fn command(message_id: &str, command: &str, params: Value) -> String {
    let mut message = json!({"messageId": message_id, "command": command});
    if let (Value::Object(fields), Value::Object(params)) = (&mut message, params) {
        fields.extend(params);
    }
    message.to_string()
}

/// The parameters of `node.set_value` (with `value`) or `node.poll_value` (without) for the
/// value at `id`: `{"nodeId", "valueId": {commandClass, endpoint, property, propertyKey?}}`.
pub fn value_command(id: &ValueId, value: Option<&Value>) -> Value {
    let mut value_id = id.to_json();
    if let Value::Object(fields) = &mut value_id {
        fields.remove("nodeId");
    }
    let mut params = json!({"nodeId": id.node_id.0, "valueId": value_id});
    if let (Value::Object(fields), Some(value)) = (&mut params, value) {
        fields.insert("value".to_owned(), value.clone());
    }
    params
}

/// `node.set_value`'s result as Z-Wave JS UI's `writeValue` gives it (`{status, message?}`),
/// so one set of rules reads both.
pub fn set_value_result(result: &Value) -> Value {
    result.get("result").cloned().unwrap_or(Value::Null)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every frame the server sent in a recorded session.
    fn received(name: &str) -> Vec<String> {
        test_support::fixture_text(&format!("zwave-js-server/{name}"))
            .lines()
            .filter_map(|line| serde_json::from_str::<Value>(line).ok())
            .filter(|line| line["dir"] == "in" && line["src"] == "ws")
            .map(|line| line["msg"].to_string())
            .collect()
    }

    #[test]
    fn every_recorded_frame_reads() {
        for name in ["ws-session.jsonl", "ws-startup.jsonl", "confirm-ws.jsonl"] {
            let frames = received(name);
            assert!(frames.len() > 40, "{name}: {}", frames.len());
            for frame in frames {
                read(&frame).unwrap_or_else(|err| panic!("{err}: {frame}"));
            }
        }
    }

    #[test]
    fn the_version_is_checked_against_the_schema_spoken_here() {
        let Incoming::Version(version) = read(r#"{"type":"version","homeId":2119630849,"driverVersion":"15.29.0","serverVersion":"3.10.2","minSchemaVersion":0,"maxSchemaVersion":50}"#).unwrap() else {
            panic!("not a version");
        };
        assert_eq!(version.check(), Ok(()));
        let old = ServerVersion {
            max_schema: 30,
            ..version.clone()
        };
        assert_eq!(
            old.check().unwrap_err().to_string(),
            "zwave-js-server 3.10.2 speaks API schemas 0–30, and this server speaks 44: upgrade zwave-js-server (or Z-Wave JS UI / the Z-Wave JS add-on)"
        );
        let newer = ServerVersion {
            min_schema: 45,
            ..version
        };
        assert!(
            newer
                .check()
                .unwrap_err()
                .to_string()
                .ends_with(": upgrade zwave-mcp-server")
        );
    }

    #[test]
    fn results_carry_their_id_and_failures_their_code_and_message() {
        let Incoming::Result {
            message_id,
            outcome: Ok(Some(result)),
        } = read(r#"{"type":"result","success":true,"messageId":"ws-6","result":{"result":{"status":254}}}"#).unwrap()
        else {
            panic!("not a success");
        };
        assert_eq!(
            (message_id.as_str(), result.get()),
            ("ws-6", r#"{"result":{"status":254}}"#)
        );
        let Incoming::Result { outcome: Err(missing), .. } = read(r#"{"type":"result","success":false,"messageId":"ws-3","errorCode":"node_not_found","message":"","args":{"nodeId":99}}"#).unwrap() else {
            panic!("not a failure");
        };
        assert_eq!(missing.to_string(), "node_not_found");
        let Incoming::Result { outcome: Err(nack), .. } = read(r#"{"type":"result","success":false,"messageId":"ws-16","errorCode":"zwave_error","zwaveErrorCode":204,"zwaveErrorCodeName":"Controller_CallbackNOK","zwaveErrorMessage":"The node did not acknowledge the command (ZW0204)"}"#).unwrap() else {
            panic!("not a failure");
        };
        assert_eq!(
            nack.to_string(),
            "zwave_error: The node did not acknowledge the command (ZW0204)"
        );
        assert_eq!(
            set_value_result(&json!({"result": {"status": 5, "message": "bad"}})),
            json!({"status": 5, "message": "bad"})
        );
        assert_eq!(
            read("[1]").unwrap_err().to_string(),
            "a message of an unknown type (none)"
        );
        assert!(
            read("{")
                .unwrap_err()
                .to_string()
                .starts_with("a message that is not JSON")
        );
    }

    #[test]
    fn an_event_stays_text_until_it_is_read() {
        let zeros = format!("[{}0]", "0,".repeat(1 << 20));
        let frame = format!(
            r#"{{"type":"event","event":{{"source":"node","event":"value updated","nodeId":3,"args":{{"newValue":{zeros}}}}}}}"#
        );
        let Incoming::Event(Some(event)) = read(&frame).unwrap() else {
            panic!("not an event");
        };
        // The very text of the frame: borrowed, not built.
        let at = frame.find(r#"{"source""#).unwrap();
        assert!(std::ptr::eq(event.get().as_ptr(), frame[at..].as_ptr()));
        assert_eq!(
            read(&zeros).unwrap_err().to_string(),
            "a message of an unknown type (none)"
        );
    }

    #[test]
    fn commands_carry_their_id_and_parameters() {
        let sent: Value = serde_json::from_str(&command(
            "zm-1",
            "node.set_value",
            json!({"nodeId": 3, "valueId": {"commandClass": 38, "endpoint": 0, "property": "targetValue"}, "value": 40}),
        ))
        .unwrap();
        assert_eq!(
            sent,
            json!({"messageId": "zm-1", "command": "node.set_value", "nodeId": 3,
                   "valueId": {"commandClass": 38, "endpoint": 0, "property": "targetValue"}, "value": 40})
        );
        assert_eq!(
            command("zm-2", "start_listening", json!({})),
            r#"{"command":"start_listening","messageId":"zm-2"}"#
        );
    }
}
