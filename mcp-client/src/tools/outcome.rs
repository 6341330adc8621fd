//! What goes into the executor and what comes out: a [`ToolCall`] as models make it and a
//! [`ToolOutcome`] in spec 001's shape, and the rule that a batch gets exactly one outcome per
//! call.

use std::time::Instant;

use serde::Serialize;
use serde_json::Value;

/// A tool call as models make them (spec 000: `{id, name, args}` with parsed args).
#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize)]
pub struct ToolCall {
    /// The call's id, to pair it with its result.
    pub id: String,
    /// The tool's name.
    pub name: String,
    /// The arguments (normally an object).
    pub args: Value,
}

/// The outcome of one call, shaped exactly as spec 001 says:
/// `{success: true, result, tool_name, execution_time_ms}` or
/// `{success: false, error, tool_name, execution_time_ms}`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ToolOutcome {
    /// Whether the tool ran and succeeded.
    pub success: bool,
    /// The tool's result, on success.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub result: Option<Value>,
    /// What went wrong, on failure.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// The tool called.
    pub tool_name: String,
    /// Validation plus execution time, in milliseconds.
    pub execution_time_ms: u64,
    /// Whether the failure was an unknown tool (models are told `Unknown tool "<name>"`).
    #[serde(skip)]
    pub unknown_tool: bool,
    /// Whether the failure was transient (timeout, server died or restarting), so the same
    /// call may succeed if made again.
    #[serde(skip)]
    pub retryable: bool,
}

impl ToolOutcome {
    pub(super) fn ok(tool: &str, result: Value, started: Instant) -> Self {
        Self {
            success: true,
            result: Some(result),
            error: None,
            tool_name: tool.to_owned(),
            execution_time_ms: ms(started),
            unknown_tool: false,
            retryable: false,
        }
    }

    pub(super) fn failed(tool: &str, error: String, started: Instant) -> Self {
        Self {
            success: false,
            result: None,
            error: Some(error),
            tool_name: tool.to_owned(),
            execution_time_ms: ms(started),
            unknown_tool: false,
            retryable: false,
        }
    }

    /// A failure decided outside the executor (a call that was declined, cancelled or had
    /// unusable arguments).
    pub fn failure(tool: &str, error: &str) -> Self {
        Self::failed(tool, error.to_owned(), Instant::now())
    }

    /// A stand-in for a call that produced no outcome, so results stay one per call.
    pub fn placeholder(tool: &str, reason: &str) -> Self {
        Self::failed(
            tool,
            format!("no result was produced for this call ({reason})"),
            Instant::now(),
        )
    }
}

pub(super) fn ms(started: Instant) -> u64 {
    u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX)
}

/// One result per call, in call order: a call without an outcome gets a placeholder error, so
/// every call id gets exactly one result (spec 000 "Tool call/result mismatch prevention").
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
        let first = ToolOutcome::ok("a", json!(1), Instant::now());
        let results = one_per_call(&calls, vec![Some(first), None]);
        assert_eq!(results.len(), 3);
        assert!(results[0].success);
        assert_eq!(
            results[1].error.as_deref(),
            Some("no result was produced for this call (the call was not executed)")
        );
        assert_eq!(results[2].tool_name, "c");
        assert!(!results[2].success);
    }
}
