//! A stored conversation made fit to send again. The store records each tool result as its
//! call finishes, so a conversation read back may hold a turn's results in several messages,
//! and — when the host died or was stopped mid-turn — calls with no result at all, which
//! every provider refuses (an assistant turn's calls must each be answered before anything
//! else is said). Here the results of a turn become one message in call order, and a call
//! with none gets an error result saying it was interrupted.
//!
//! A conversation that two chats wrote at once (before chats claimed their conversation)
//! may repeat a call id in several turns, with the results of all of them after the last:
//! a repeated id is renamed (`<id>_2`, as the loop does; Anthropic refuses repeats), and a
//! call whose id several results name is told its result is not known, never given one
//! that may be another call's.

use std::collections::HashSet;

use crate::{
    llm::{Message, ToolResult},
    tools::{ToolCall, results::ModelResult},
};

/// What a call that has no recorded result is answered with.
pub const INTERRUPTED: &str = "Error: interrupted before its result was recorded; it is not known whether it ran (check the device's state before calling it again)";

/// What a call is answered with when several recorded results name its id.
pub const AMBIGUOUS: &str = "Error: several results were recorded under this call's id (two chats wrote this conversation at once); which one is this call's is not known (check the device's state before calling it again)";

/// `messages` with every tool call answered exactly once, right after the turn that made it,
/// and every call id used once.
pub fn repair(messages: Vec<Message>) -> Vec<Message> {
    let mut taken: HashSet<String> = messages
        .iter()
        .flat_map(|message| match message {
            Message::Assistant { tool_calls, .. } => tool_calls.as_slice(),
            _ => &[],
        })
        .map(|call| call.id.clone())
        .collect();
    let mut seen: HashSet<String> = HashSet::new();
    let mut repaired: Vec<Message> = Vec::with_capacity(messages.len());
    let mut messages = messages.into_iter().peekable();
    while let Some(message) = messages.next() {
        let Message::Assistant { text, tool_calls } = message else {
            // Results whose calls came earlier are gathered below; stray ones stay as they are.
            repaired.push(message);
            continue;
        };
        let calls: Vec<ToolCall> = tool_calls
            .iter()
            .map(|call| {
                let mut call = call.clone();
                if !seen.insert(call.id.clone()) {
                    let fresh = (2u32..)
                        .map(|n| format!("{}_{n}", call.id))
                        .find(|candidate| !taken.contains(candidate))
                        .unwrap_or_default();
                    taken.insert(fresh.clone());
                    seen.insert(fresh.clone());
                    call.id = fresh;
                }
                call
            })
            .collect();
        repaired.push(Message::Assistant {
            text,
            tool_calls: calls.clone(),
        });
        if calls.is_empty() {
            continue;
        }
        let mut found: Vec<ToolResult> = Vec::new();
        while let Some(Message::ToolResults { .. }) = messages.peek() {
            if let Some(Message::ToolResults { results }) = messages.next() {
                found.extend(results);
            }
        }
        let results = tool_calls
            .iter()
            .zip(&calls)
            .map(|(stored, call)| {
                let mut named = found
                    .iter()
                    .enumerate()
                    .filter(|(_, result)| result.call_id == stored.id)
                    .map(|(position, _)| position);
                match (named.next(), named.next()) {
                    (Some(position), None) => {
                        let mut result = found.swap_remove(position);
                        result.call_id.clone_from(&call.id);
                        result
                    }
                    (None, _) => error(call, INTERRUPTED),
                    (Some(_), Some(_)) => error(call, AMBIGUOUS),
                }
            })
            .collect();
        repaired.push(Message::ToolResults { results });
    }
    repaired
}

fn error(call: &ToolCall, text: &str) -> ToolResult {
    ToolResult {
        call_id: call.id.clone(),
        tool_name: call.name.clone(),
        result: ModelResult {
            text: text.to_owned(),
            is_error: true,
            artifacts: Vec::new(),
        },
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

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

    #[test]
    fn a_conversation_two_chats_wrote_at_once_resumes_with_unique_ids_and_no_borrowed_result() {
        // Two chats resumed one conversation: both questions, both calls `c0_2`, both
        // results, both answers — each kind in a row.
        let repaired = repair(vec![
            Message::user("switch it"),
            Message::Assistant {
                text: String::new(),
                tool_calls: vec![call("c0")],
            },
            Message::ToolResults {
                results: vec![result("c0", "done")],
            },
            Message::user("again"),
            Message::user("again"),
            Message::Assistant {
                text: String::new(),
                tool_calls: vec![call("c0_2")],
            },
            Message::Assistant {
                text: String::new(),
                tool_calls: vec![call("c0_2")],
            },
            Message::ToolResults {
                results: vec![result("c0_2", "first chat's")],
            },
            Message::ToolResults {
                results: vec![result("c0_2", "second chat's")],
            },
        ]);
        let ids: Vec<&str> = repaired
            .iter()
            .flat_map(|message| match message {
                Message::Assistant { tool_calls, .. } => tool_calls.as_slice(),
                _ => &[],
            })
            .map(|call| call.id.as_str())
            .collect();
        assert_eq!(ids, ["c0", "c0_2", "c0_2_2"]);
        let answers: Vec<(&str, &str)> = repaired
            .iter()
            .flat_map(|message| match message {
                Message::ToolResults { results } => results.as_slice(),
                _ => &[],
            })
            .map(|result| (result.call_id.as_str(), result.result.text.as_str()))
            .collect();
        assert_eq!(
            answers,
            [("c0", "done"), ("c0_2", INTERRUPTED), ("c0_2_2", AMBIGUOUS)]
        );
    }
}
