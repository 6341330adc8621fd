//! The lifecycle up to 2025-11-25: `initialize` (each version, and an unknown one), requests
//! before `initialize`, `ping`.

use std::time::Duration;

use serde_json::Value;

use super::{
    report::{Outcome, Verdict},
    response::{error_code, show},
};
use crate::session::{ANSWER_TIMEOUT, Session};

/// Protocol versions with the legacy `initialize` handshake.
pub const LEGACY_VERSIONS: [&str; 4] = ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"];

pub(super) async fn check_initialize(
    session: &mut Session,
    version: &str,
    unknown: bool,
) -> Outcome {
    let response = session.initialize(version).await;
    let Some(result) = response.as_ref().and_then(|r| r.get("result")) else {
        return (
            Verdict::Fail,
            format!("no initialize result: {}", show(&response)),
        );
    };
    let answered = result
        .get("protocolVersion")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let name = result.pointer("/serverInfo/name").and_then(Value::as_str);
    if !result.get("capabilities").is_some_and(Value::is_object) || name.is_none() {
        return (
            Verdict::Fail,
            format!("the result lacks capabilities or serverInfo.name: {result}"),
        );
    }
    let server = format!(
        "{} {}",
        name.unwrap_or_default(),
        result
            .pointer("/serverInfo/version")
            .and_then(Value::as_str)
            .unwrap_or("")
    );
    if unknown {
        return if LEGACY_VERSIONS.contains(&answered) {
            (
                Verdict::Pass,
                format!("answered with a version it supports: {answered}"),
            )
        } else {
            (
                Verdict::Fail,
                format!("answered {answered:?}, which is not a protocol version"),
            )
        };
    }
    if answered == version {
        (
            Verdict::Pass,
            format!("agreed on {answered} ({})", server.trim()),
        )
    } else if LEGACY_VERSIONS.contains(&answered) {
        (
            Verdict::Pass,
            format!("offered {answered} instead ({})", server.trim()),
        )
    } else {
        (Verdict::Fail, format!("answered {answered:?} to {version}"))
    }
}

pub(super) async fn check_before_initialize(session: &mut Session) -> Outcome {
    let early = session
        .request("tools/list", None, Duration::from_secs(3))
        .await;
    let init = session.initialize("2025-11-25").await;
    let initialized = init.as_ref().is_some_and(|r| r.get("result").is_some());
    match (&early, initialized) {
        (_, false) => (
            Verdict::Fail,
            format!(
                "after an early request the server no longer initializes: {}",
                show(&init)
            ),
        ),
        (Some(r), true) if r.get("error").is_some() => (
            Verdict::Pass,
            format!(
                "refused with error {} and initialized afterwards",
                error_code(r).unwrap_or_default()
            ),
        ),
        (None, true) => (
            Verdict::Pass,
            "ignored it and initialized afterwards".into(),
        ),
        (Some(_), true) => (
            Verdict::Warn,
            "answered tools/list before initialize (allowed, but clients must not rely on it)"
                .into(),
        ),
    }
}

pub(super) async fn check_ping(session: &mut Session) -> Outcome {
    let started = std::time::Instant::now();
    let response = session.request("ping", None, ANSWER_TIMEOUT).await;
    match &response {
        Some(r) if r.get("result").is_some_and(Value::is_object) => (
            Verdict::Pass,
            format!("answered in {} µs", started.elapsed().as_micros()),
        ),
        _ => (
            Verdict::Fail,
            format!("ping must answer with an empty result: {}", show(&response)),
        ),
    }
}
