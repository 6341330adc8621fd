//! Robustness: concurrent requests, a 1 MiB argument, notifications that must be ignored,
//! `notifications/cancelled`.

use std::time::Duration;

use serde_json::{Value, json};

use super::{Outcome, Verdict, show};
use crate::session::{ANSWER_TIMEOUT, Session, ids};

pub(super) async fn check_concurrency(session: &mut Session) -> Outcome {
    let mut sent = Vec::new();
    for i in 0..32 {
        let method = if i % 2 == 0 { "ping" } else { "tools/list" };
        match session.send_request(method, None).await {
            Ok(id) => sent.push(id),
            Err(err) => return (Verdict::Fail, format!("could not send request {i}: {err}")),
        }
    }
    let mut answers = Vec::new();
    for id in &sent {
        if let Some(response) = session.response(*id, ANSWER_TIMEOUT).await {
            answers.push(response);
        }
    }
    let extra = session.drain(Duration::from_millis(100)).await;
    answers.extend(extra.into_iter().filter(|m| m.get("method").is_none()));
    let counts = ids(&answers);
    let missing: Vec<i64> = sent
        .iter()
        .copied()
        .filter(|id| !counts.contains_key(id))
        .collect();
    let doubled: Vec<i64> = counts
        .iter()
        .filter(|(_, n)| **n > 1)
        .map(|(id, _)| *id)
        .collect();
    if missing.is_empty() && doubled.is_empty() {
        (
            Verdict::Pass,
            "all 32 answered, each once, with the right id".into(),
        )
    } else {
        (
            Verdict::Fail,
            format!("unanswered ids {missing:?}, answered twice {doubled:?}"),
        )
    }
}

pub(super) async fn check_big_argument(session: &mut Session, tools: &[Value]) -> Outcome {
    let Some(tool) = tools.first() else {
        return (Verdict::Skip, "the server has no tools".into());
    };
    let name = tool["name"].as_str().unwrap_or_default().to_owned();
    let property = tool
        .pointer("/inputSchema/properties")
        .and_then(Value::as_object)
        .and_then(|p| {
            p.iter()
                .find(|(_, s)| s.get("type") == Some(&json!("string")))
                .map(|(k, _)| k.clone())
        })
        .unwrap_or_else(|| "padding".into());
    let big = "x".repeat(1024 * 1024);
    let sent = session
        .send_request(
            "tools/call",
            Some(json!({"name": name, "arguments": {property.clone(): big}})),
        )
        .await;
    let id = match sent {
        Ok(id) => id,
        Err(err) => {
            return (
                Verdict::Fail,
                format!("`{name}` with a 1 MiB `{property}` could not be sent: {err}"),
            );
        }
    };
    let response = session.response(id, ANSWER_TIMEOUT).await;
    let ping = session.request("ping", None, ANSWER_TIMEOUT).await;
    match (&response, ping.is_some()) {
        (Some(_), true) => (
            Verdict::Pass,
            format!("`{name}` with a 1 MiB `{property}` was answered; the session continued"),
        ),
        (None, _) => (
            Verdict::Fail,
            format!("no answer to `{name}` with a 1 MiB `{property}` within 10 s"),
        ),
        (Some(_), false) => (
            Verdict::Fail,
            "the session did not survive a 1 MiB argument".into(),
        ),
    }
}

pub(super) async fn check_notifications(session: &mut Session) -> Outcome {
    let _ = session.notify("notifications/initialized", None).await;
    let _ = session
        .notify(
            "notifications/mcp_conformance_unknown",
            Some(json!({"x": 1})),
        )
        .await;
    let replies = session.drain(Duration::from_millis(500)).await;
    let answers: Vec<&Value> = replies
        .iter()
        .filter(|m| m.get("method").is_none())
        .collect();
    let ping = session.request("ping", None, ANSWER_TIMEOUT).await;
    match (answers.is_empty(), ping.is_some()) {
        (true, true) => (
            Verdict::Pass,
            "no reply to notifications; the session continued".into(),
        ),
        (false, _) => (
            Verdict::Fail,
            format!(
                "replied to a notification: {}",
                show(&answers.first().map(|v| (*v).clone()))
            ),
        ),
        (true, false) => (
            Verdict::Fail,
            "the session did not continue after notifications".into(),
        ),
    }
}

pub(super) async fn check_cancelled(session: &mut Session, tools: &[Value]) -> Outcome {
    let slow = tools.iter().find(|t| {
        let name = t["name"].as_str().unwrap_or_default();
        ["long", "slow", "sleep", "wait"]
            .iter()
            .any(|w| name.contains(w))
    });
    // Only a tool that takes a while can show a cancellation taking effect: with fast tools
    // alone, an answer proves nothing either way.
    let Some(tool) = slow else {
        return (
            Verdict::NotApplicable,
            "no slow tool (a name with long, slow, sleep or wait) to cancel; a fast tool's answer shows nothing either way".into(),
        );
    };
    let name = tool["name"].as_str().unwrap_or_default().to_owned();
    let Ok(id) = session
        .send_request("tools/call", Some(json!({"name": name, "arguments": {}})))
        .await
    else {
        return (Verdict::Fail, "could not send the request".into());
    };
    let _ = session
        .notify(
            "notifications/cancelled",
            Some(json!({"requestId": id, "reason": "conformance check"})),
        )
        .await;
    let answer = session.response(id, Duration::from_secs(2)).await;
    let ping = session.request("ping", None, ANSWER_TIMEOUT).await;
    match (answer, ping.is_some()) {
        (_, false) => (
            Verdict::Fail,
            "the session did not continue after a cancellation".into(),
        ),
        (None, true) => (
            Verdict::Pass,
            format!("`{name}` cancelled: no answer came, the session continued"),
        ),
        (Some(_), true) => (
            Verdict::Warn,
            format!("the slow tool `{name}` still answered 2 s after its cancellation"),
        ),
    }
}
