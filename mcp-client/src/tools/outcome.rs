//! What goes into the executor and what comes out: a [`ToolCall`] as models make it, a
//! [`ToolOutcome`] holding the tool's value or a typed [`ToolError`] (written in the JSON
//! shape hosts read only at the edge, by `Serialize`), and the rule that a batch gets exactly one outcome
//! per call.

use std::time::{Duration, Instant};

use serde::{Serialize, ser::SerializeStruct as _};
use serde_json::Value;

/// A tool call as models make them (`{id, name, args}` with parsed args).
#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize)]
pub struct ToolCall {
    /// The call's id, to pair it with its result.
    pub id: String,
    /// The tool's name.
    pub name: String,
    /// The arguments (normally an object).
    pub args: Value,
}

/// Why a call produced no value. The text (`Display`) is what the JSON outcome carries in `error`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ToolError {
    /// No tool by that name (models are told `Unknown tool "<name>"`).
    #[error("Tool '{name}' not found")]
    UnknownTool {
        /// The name asked for.
        name: String,
    },
    /// The arguments do not fit the tool's schema: what is wrong, and what would be valid.
    #[error("Invalid parameters: {0}")]
    InvalidParameters(String),
    /// The tool ran and reported a failure, in its own words.
    #[error("{0}")]
    Failed(String),
    /// The tool's MCP server could not carry out the call (not connected, died, refused).
    #[error("{message}")]
    Server {
        /// One line for the model.
        message: String,
        /// Whether the same call may succeed if made again (the server is restarting).
        retryable: bool,
    },
    /// The tool is defined but what runs it is missing (a handler or server not registered).
    #[error("{0}")]
    Misconfigured(String),
    /// The tool's handler panicked; the host went on.
    #[error("Tool '{name}' failed: its handler panicked ({message})")]
    Panicked {
        /// The tool.
        name: String,
        /// The panic's message.
        message: String,
    },
    /// The tool took longer than its timeout and was cancelled.
    #[error(
        "Tool '{name}' timed out after {after:?} and was cancelled; try again, or ask for less"
    )]
    TimedOut {
        /// The tool.
        name: String,
        /// Its timeout.
        after: Duration,
    },
    /// The call was not run: declined, cancelled, given unusable arguments, or left without an
    /// outcome by its batch.
    #[error("{0}")]
    NotRun(String),
}

impl ToolError {
    /// Whether the same call may succeed if made again (a timeout, a server restarting).
    pub fn is_retryable(&self) -> bool {
        match self {
            Self::TimedOut { .. } => true,
            Self::Server { retryable, .. } => *retryable,
            _ => false,
        }
    }
}

/// The outcome of one call: the tool's value or why there is none, and how long it took.
/// Serialized as `{success: true, result, tool_name, execution_time_ms}`
/// or `{success: false, error, tool_name, execution_time_ms}`.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolOutcome {
    /// The tool called.
    pub tool_name: String,
    /// Validation plus execution time, in milliseconds.
    pub execution_time_ms: u64,
    /// The tool's value, or why there is none.
    pub result: Result<Value, ToolError>,
}

impl ToolOutcome {
    /// The outcome of a call of `tool` that started at `started`.
    pub fn new(tool: &str, result: Result<Value, ToolError>, started: Instant) -> Self {
        Self {
            tool_name: tool.to_owned(),
            execution_time_ms: u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX),
            result,
        }
    }

    /// A call that was not run (declined, cancelled, unusable arguments), decided outside the
    /// executor.
    pub fn not_run(tool: &str, reason: &str) -> Self {
        Self::new(
            tool,
            Err(ToolError::NotRun(reason.to_owned())),
            Instant::now(),
        )
    }

    /// A stand-in for a call that produced no outcome, so results stay one per call.
    pub fn placeholder(tool: &str, reason: &str) -> Self {
        Self::not_run(
            tool,
            &format!("no result was produced for this call ({reason})"),
        )
    }

    /// Whether the tool ran and succeeded.
    pub fn is_success(&self) -> bool {
        self.result.is_ok()
    }

    /// Why the call failed, if it did.
    pub fn error(&self) -> Option<&ToolError> {
        self.result.as_ref().err()
    }

    /// The text of the failure (the JSON outcome's `error`), if the call failed.
    pub fn error_text(&self) -> Option<String> {
        self.error().map(ToString::to_string)
    }
}

impl Serialize for ToolOutcome {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut outcome = serializer.serialize_struct("ToolOutcome", 4)?;
        outcome.serialize_field("success", &self.is_success())?;
        match &self.result {
            Ok(value) => outcome.serialize_field("result", value)?,
            Err(error) => outcome.serialize_field("error", &error.to_string())?,
        }
        outcome.serialize_field("tool_name", &self.tool_name)?;
        outcome.serialize_field("execution_time_ms", &self.execution_time_ms)?;
        outcome.end()
    }
}

/// One result per call, in call order: a call without an outcome gets a placeholder error, so
/// every call id gets exactly one result.
pub fn one_per_call(
    calls: &[ToolCall],
    mut outcomes: Vec<Option<ToolOutcome>>,
) -> Vec<ToolOutcome> {
    outcomes.resize(calls.len(), None);
    calls
        .iter()
        .zip(outcomes)
        .map(|(call, outcome)| {
            outcome.unwrap_or_else(|| {
                ToolOutcome::placeholder(&call.name, "the call was not executed")
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn every_call_gets_exactly_one_result() {
        let calls: Vec<ToolCall> = ["a", "b", "c"]
            .iter()
            .map(|n| ToolCall {
                id: format!("id-{n}"),
                name: (*n).into(),
                args: json!({}),
            })
            .collect();
        let first = ToolOutcome::new("a", Ok(json!(1)), Instant::now());
        let results = one_per_call(&calls, vec![Some(first), None]);
        assert_eq!(results.len(), 3);
        assert!(results[0].is_success());
        assert_eq!(
            results[1].error_text().as_deref(),
            Some("no result was produced for this call (the call was not executed)")
        );
        assert_eq!(results[2].tool_name, "c");
        assert!(!results[2].is_success());
    }

    #[test]
    fn outcomes_serialize_in_spec_001s_two_shapes() {
        let mut ok = ToolOutcome::new("add", Ok(json!({"sum": 3})), Instant::now());
        ok.execution_time_ms = 4;
        assert_eq!(
            serde_json::to_value(&ok).unwrap(),
            json!({"success": true, "result": {"sum": 3}, "tool_name": "add", "execution_time_ms": 4})
        );
        let mut failed = ToolOutcome::new(
            "add",
            Err(ToolError::InvalidParameters("missing 'b'".into())),
            Instant::now(),
        );
        failed.execution_time_ms = 0;
        assert_eq!(
            serde_json::to_value(&failed).unwrap(),
            json!({"success": false, "error": "Invalid parameters: missing 'b'", "tool_name": "add", "execution_time_ms": 0})
        );
    }

    #[test]
    fn only_timeouts_and_restarting_servers_are_worth_a_retry() {
        let timed_out = ToolError::TimedOut {
            name: "slow".into(),
            after: Duration::from_millis(1500),
        };
        assert_eq!(
            timed_out.to_string(),
            "Tool 'slow' timed out after 1.5s and was cancelled; try again, or ask for less"
        );
        assert!(timed_out.is_retryable());
        let restarting = ToolError::Server {
            message: "server `home` is restarting".into(),
            retryable: true,
        };
        assert!(restarting.is_retryable());
        for error in [
            ToolError::UnknownTool { name: "fly".into() },
            ToolError::InvalidParameters("missing 'b'".into()),
            ToolError::Failed("no such device".into()),
            ToolError::Server {
                message: "the server refused".into(),
                retryable: false,
            },
            ToolError::Misconfigured("Builtin handler 'x' not found".into()),
            ToolError::Panicked {
                name: "t".into(),
                message: "boom".into(),
            },
            ToolError::NotRun("declined".into()),
        ] {
            assert!(!error.is_retryable(), "{error:?}");
        }
    }
}
