//! What a run checks: the protocol revisions ([`Protocol`]) and the call that asks for input at
//! 2026-07-28 ([`ToolCall`]), as the library's callers and the binary's flags give them.

use std::fmt;

use serde_json::Value;

/// The protocol revisions a run speaks.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum Protocol {
    /// 2025-11-25 and earlier (the `initialize` handshake), then 2026-07-28 where the server
    /// offers it: a server that refuses `server/discover` is a 2025-11-25 server.
    #[default]
    Both,
    /// Only the `initialize` handshake of 2025-11-25 and the versions before it.
    #[value(name = "2025-11-25")]
    Initialize,
    /// Only the stateless 2026-07-28: a server that refuses `server/discover` fails.
    #[value(name = "2026-07-28")]
    Stateless,
}

impl Protocol {
    /// Whether the run checks the `initialize` handshake's revisions.
    pub fn has_initialize(self) -> bool {
        matches!(self, Self::Both | Self::Initialize)
    }

    /// Whether the run checks 2026-07-28.
    pub fn has_stateless(self) -> bool {
        matches!(self, Self::Both | Self::Stateless)
    }
}

/// A `tools/call` the checker makes: the tool and its arguments (a JSON object).
#[derive(Debug, Clone, PartialEq)]
pub struct ToolCall {
    /// The tool's name.
    pub tool: String,
    /// Its arguments.
    pub arguments: serde_json::Map<String, Value>,
}

impl ToolCall {
    /// The call of `tool` with `arguments`, JSON text that must hold an object.
    ///
    /// # Errors
    /// When `arguments` is not JSON, or not an object.
    pub fn parse(tool: &str, arguments: &str) -> Result<Self, String> {
        match serde_json::from_str::<Value>(arguments) {
            Ok(Value::Object(arguments)) => Ok(Self {
                tool: tool.to_owned(),
                arguments,
            }),
            Ok(other) => Err(format!(
                "the arguments of `{tool}` must be a JSON object, got {}",
                common::kind(&other)
            )),
            Err(err) => Err(format!("the arguments of `{tool}` are not JSON: {err}")),
        }
    }
}

impl fmt::Display for ToolCall {
    /// `tool {"arg": …}`, as the evidence names a call.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "`{}` {}",
            self.tool,
            Value::Object(self.arguments.clone())
        )
    }
}

/// What a run checks besides the server's command line.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// The revisions to speak.
    pub protocol: Protocol,
    /// A call known to answer `input_required` at 2026-07-28; without it, the checker uses a
    /// call of its own that happened to ask.
    pub input_required_call: Option<ToolCall>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tool_call_takes_only_an_object_of_arguments() {
        let call = ToolCall::parse("control", r#"{"action": "unlock"}"#).unwrap();
        assert_eq!(call.to_string(), r#"`control` {"action":"unlock"}"#);
        assert_eq!(
            ToolCall::parse("control", "[1]").unwrap_err(),
            "the arguments of `control` must be a JSON object, got an array"
        );
        assert!(
            ToolCall::parse("control", "{")
                .unwrap_err()
                .starts_with("the arguments of `control` are not JSON: EOF")
        );
    }
}
