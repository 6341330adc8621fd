//! Errors: an unknown method, and lines that are not JSON-RPC requests.

use std::time::Duration;

use serde_json::Value;

use super::{
    report::{Outcome, Verdict},
    response::{error_code, show},
};
use crate::session::{ANSWER_TIMEOUT, Session};

pub(super) async fn check_unknown_method(session: &mut Session) -> Outcome {
    let response = session
        .request("no/such_method", None, ANSWER_TIMEOUT)
        .await;
    match response.as_ref().and_then(error_code) {
        Some(-32601) => (Verdict::Pass, "error -32601 (method not found)".into()),
        Some(code) => (
            Verdict::Warn,
            format!("error {code}; -32601 is the code for an unknown method"),
        ),
        None => (
            Verdict::Fail,
            format!("expected error -32601: {}", show(&response)),
        ),
    }
}

/// A line that is no request: JSON-RPC requires an error with `code` (-32700 for a line that
/// is not JSON, -32600 for JSON that is no request) and id `null`.
pub(super) async fn check_garbage(session: &mut Session, line: &str, code: i64) -> Outcome {
    if session.send_raw(line).await.is_err() {
        return (Verdict::Fail, "the server closed stdin".into());
    }
    // Server notifications (list_changed, logging) may come at any time; only responses count.
    let replies: Vec<Value> = session
        .drain(Duration::from_millis(500))
        .await
        .into_iter()
        .filter(|m| m.get("method").is_none())
        .collect();
    let ping = session.request("ping", None, ANSWER_TIMEOUT).await;
    let alive = ping.as_ref().is_some_and(|p| p.get("result").is_some());
    match (replies.len(), alive) {
        (_, false) => (
            Verdict::Fail,
            format!("the session did not continue: ping got {}", show(&ping)),
        ),
        (0, true) => (
            Verdict::Warn,
            format!(
                "ignored; JSON-RPC 2.0 requires error {code} with id null, or a client waiting for an answer waits forever; the session continued"
            ),
        ),
        (1, true) if error_code(&replies[0]) == Some(code) => (
            Verdict::Pass,
            format!("answered error {code}; the session continued"),
        ),
        (1, true) if replies[0].get("error").is_some() => (
            Verdict::Warn,
            format!(
                "answered error {}; JSON-RPC 2.0 says {code}; the session continued",
                error_code(&replies[0]).unwrap_or_default()
            ),
        ),
        (n, true) => (
            Verdict::Fail,
            format!(
                "{n} replies to one bad line: {}",
                show(&replies.first().cloned())
            ),
        ),
    }
}
