//! Robustness: concurrent requests, an id reused while its request is in flight, a batch
//! under 2025-03-26 (the version that requires batches), a 1 MiB argument, notifications that
//! must be ignored, `notifications/cancelled`.

use std::time::Duration;

use serde_json::{Value, json};

use super::{
    report::{Outcome, Verdict},
    response::show,
};
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

/// Two requests with one id, sent together: each must get an answer (the second may be an
/// error), or a client that reused an id by mistake waits forever.
pub(super) async fn check_duplicate_id(session: &mut Session) -> Outcome {
    let id = 77_777;
    let ping = json!({"jsonrpc": "2.0", "id": id, "method": "ping"}).to_string();
    for _ in 0..2 {
        if let Err(err) = session.send_raw(&ping).await {
            return (Verdict::Fail, format!("could not send the request: {err}"));
        }
    }
    let mut answers = Vec::new();
    while let Some(answer) = session.response(id, Duration::from_secs(2)).await {
        answers.push(answer);
        if answers.len() == 2 {
            break;
        }
    }
    let errors = answers.iter().filter(|a| a.get("error").is_some()).count();
    match answers.len() {
        2 => (
            Verdict::Pass,
            format!("both requests with id {id} were answered ({errors} with an error)"),
        ),
        1 => (
            Verdict::Warn,
            format!(
                "two requests with id {id} sent together got one answer: a client that reuses an id by mistake waits forever for the other (answer it with an error, e.g. -32600)"
            ),
        ),
        _ => (
            Verdict::Fail,
            format!("neither of two requests with id {id} was answered within 2 s"),
        ),
    }
}

/// MCP 2025-03-26 requires servers to accept JSON-RPC batches: one array in, one array of the
/// responses out.
pub(super) async fn check_batch(session: &mut Session) -> Outcome {
    let agreed = session
        .initialize("2025-03-26")
        .await
        .and_then(|response| response.pointer("/result/protocolVersion").cloned());
    if agreed != Some(json!("2025-03-26")) {
        return (
            Verdict::NotApplicable,
            format!(
                "the server did not agree on 2025-03-26 ({}), so it need not accept batches",
                show(&agreed)
            ),
        );
    }
    let batch = json!([
        {"jsonrpc": "2.0", "id": 801, "method": "ping"},
        {"jsonrpc": "2.0", "id": 802, "method": "ping"},
    ]);
    if let Err(err) = session.send_raw(&batch.to_string()).await {
        return (Verdict::Fail, format!("could not send the batch: {err}"));
    }
    let replies: Vec<Value> = session
        .drain(Duration::from_secs(2))
        .await
        .into_iter()
        .filter(|m| m.get("method").is_none())
        .collect();
    let ids = |reply: &Value| -> Vec<Value> {
        reply
            .as_array()
            .map(|items| items.iter().map(|item| item["id"].clone()).collect())
            .unwrap_or_default()
    };
    match replies.as_slice() {
        [array] if array.is_array() => {
            let mut got = ids(array);
            got.sort_by_key(|id| id.as_i64());
            if got == [json!(801), json!(802)] {
                (Verdict::Pass, "a batch of two pings was answered with one array of both responses".into())
            } else {
                (Verdict::Fail, format!("the batch's array does not answer ids 801 and 802: {}", show(&Some(array.clone()))))
            }
        }
        [] => (Verdict::Fail, "no answer to a batch of two pings within 2 s, although the server agreed on 2025-03-26, which requires batches".into()),
        [one] if one.get("error").is_some() => (
            Verdict::Fail,
            format!("refused a batch although it agreed on 2025-03-26, which requires batches: {}", show(&Some(one.clone()))),
        ),
        several => (
            Verdict::Fail,
            format!("{} separate replies to a batch of two pings; JSON-RPC answers a batch with one array", several.len()),
        ),
    }
}
