//! A stored conversation made fit to send again. The store records each tool result as its
//! call finishes, so a conversation read back may hold a turn's results in several messages,
//! and — when the host died or was stopped mid-turn — calls with no result at all, which
//! every provider refuses (an assistant turn's calls must each be answered before anything
//! else is said). Here the results of a turn become one message in call order, and a call
//! with none gets an error result saying it was interrupted.

use crate::{
    llm::{Message, ToolResult},
    tools::results::ModelResult,
};

/// What a call that has no recorded result is answered with.
pub const INTERRUPTED: &str = "Error: interrupted before its result was recorded; it is not known whether it ran (check the device's state before calling it again)";

/// `messages` with every tool call answered exactly once, right after the turn that made it.
pub fn repair(messages: Vec<Message>) -> Vec<Message> {
    let mut repaired: Vec<Message> = Vec::with_capacity(messages.len());
    let mut messages = messages.into_iter().peekable();
    while let Some(message) = messages.next() {
        let Message::Assistant { tool_calls, .. } = &message else {
            // Results whose calls came earlier are gathered below; stray ones stay as they are.
            repaired.push(message);
            continue;
        };
        let calls = tool_calls.clone();
        repaired.push(message);
        if calls.is_empty() {
            continue;
        }
        let mut found: Vec<ToolResult> = Vec::new();
        while let Some(Message::ToolResults { .. }) = messages.peek() {
            if let Some(Message::ToolResults { results }) = messages.next() {
                found.extend(results);
            }
        }
        let results = calls
            .iter()
            .map(
                |call| match found.iter().position(|result| result.call_id == call.id) {
                    Some(position) => found.swap_remove(position),
                    None => ToolResult {
                        call_id: call.id.clone(),
                        tool_name: call.name.clone(),
                        result: ModelResult {
                            text: INTERRUPTED.to_owned(),
                            is_error: true,
                            artifacts: Vec::new(),
                        },
                    },
                },
            )
            .collect();
        repaired.push(Message::ToolResults { results });
    }
    repaired
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::tools::ToolCall;

    fn call(id: &str) -> ToolCall {
        ToolCall {
            id: id.into(),
            name: "control_zwave_device".into(),
            args: json!({}),
        }
    }

    fn result(id: &str, text: &str) -> ToolResult {
        ToolResult {
            call_id: id.into(),
            tool_name: "control_zwave_device".into(),
            result: ModelResult {
                text: text.into(),
                is_error: false,
                artifacts: Vec::new(),
            },
        }
    }

    #[test]
    fn results_recorded_one_by_one_become_one_message_in_call_order() {
        let repaired = repair(vec![
            Message::user("switch both"),
            Message::Assistant {
                text: String::new(),
                tool_calls: vec![call("a"), call("b")],
            },
            Message::ToolResults {
                results: vec![result("b", "b done")],
            },
            Message::ToolResults {
                results: vec![result("a", "a done")],
            },
            Message::Assistant {
                text: "Both are on.".into(),
                tool_calls: Vec::new(),
            },
        ]);
        assert_eq!(repaired.len(), 4);
        assert_eq!(
            repaired[2],
            Message::ToolResults {
                results: vec![result("a", "a done"), result("b", "b done")]
            }
        );
    }

    #[test]
    fn a_call_without_a_result_is_answered_as_interrupted() {
        let repaired = repair(vec![
            Message::user("switch both"),
            Message::Assistant {
                text: String::new(),
                tool_calls: vec![call("a"), call("b")],
            },
            Message::ToolResults {
                results: vec![result("a", "a done")],
            },
            Message::user("and now?"),
        ]);
        let Message::ToolResults { results } = &repaired[2] else {
            panic!("{repaired:?}");
        };
        assert_eq!(results[0], result("a", "a done"));
        assert_eq!(results[1].call_id, "b");
        assert!(results[1].result.is_error);
        assert_eq!(results[1].result.text, INTERRUPTED);
        assert_eq!(repaired[3], Message::user("and now?"));
        // Nothing recorded at all: every call is answered.
        let repaired = repair(vec![Message::Assistant {
            text: String::new(),
            tool_calls: vec![call("c")],
        }]);
        assert!(
            matches!(&repaired[1], Message::ToolResults { results } if results[0].result.text == INTERRUPTED)
        );
    }
}
