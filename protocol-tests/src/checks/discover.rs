//! `server/discover` at 2026-07-28: whether the server offers the revision at all, and what
//! its answer must hold (`resultType` "complete", `supportedVersions` naming the revision,
//! `capabilities`).

use serde_json::Value;

use super::{
    report::{Outcome, Verdict},
    response::error_code,
};
use crate::stateless::{REVISION, Stateless};

/// What `server/discover` told: the verdict, and the server's capabilities when it speaks
/// 2026-07-28 (the other 2026-07-28 checks run only then).
pub(super) async fn check_discover(
    server: &mut Stateless,
    required: bool,
) -> (Outcome, Option<Value>) {
    let response = server
        .request("server/discover", serde_json::json!({}))
        .await;
    let Some(response) = response else {
        return (
            (
                Verdict::Fail,
                format!(
                    "no answer within {:?}: a server answers every request, with an error for a method it does not know",
                    server.answer_timeout()
                ),
            ),
            None,
        );
    };
    let Some(result) = response.get("result") else {
        let refusal = format!(
            "refused (error {}: {})",
            error_code(&response).unwrap_or_default(),
            response
                .pointer("/error/message")
                .and_then(Value::as_str)
                .unwrap_or("no message")
        );
        return if required {
            (
                (
                    Verdict::Fail,
                    format!("{refusal}: the server does not speak {REVISION}"),
                ),
                None,
            )
        } else {
            (
                (
                    Verdict::Note,
                    format!("{refusal}: a 2025-11-25 server; the {REVISION} checks do not apply"),
                ),
                None,
            )
        };
    };
    let problems = problems(result);
    let capabilities = result.get("capabilities").cloned();
    if !problems.is_empty() {
        return ((Verdict::Fail, problems.join("; ")), capabilities);
    }
    let names = capabilities
        .as_ref()
        .and_then(Value::as_object)
        .map(|c| c.keys().cloned().collect::<Vec<_>>().join(", "))
        .unwrap_or_default();
    let server_info = result
        .pointer("/_meta/io.modelcontextprotocol~1serverInfo")
        .map(|info| {
            format!(
                "; {} {}",
                info["name"].as_str().unwrap_or("?"),
                info["version"].as_str().unwrap_or("")
            )
        })
        .unwrap_or_default();
    (
        (
            Verdict::Pass,
            format!(
                "supports {}; capabilities: {}{}",
                result["supportedVersions"],
                if names.is_empty() { "none" } else { &names },
                server_info.trim_end()
            ),
        ),
        capabilities,
    )
}

/// What the discover result lacks.
fn problems(result: &Value) -> Vec<String> {
    let mut problems = Vec::new();
    match result.get("resultType") {
        Some(kind) if kind == "complete" => {}
        Some(kind) => problems.push(format!("resultType is {kind}, not \"complete\"")),
        None => problems.push("no resultType (\"complete\")".into()),
    }
    match result.get("supportedVersions").and_then(Value::as_array) {
        Some(versions) if versions.iter().any(|v| v == REVISION) => {}
        Some(versions) => problems.push(format!(
            "supportedVersions {} lacks {REVISION}, the revision of the request it answered",
            Value::Array(versions.clone())
        )),
        None => problems.push("no supportedVersions list".into()),
    }
    if !result.get("capabilities").is_some_and(Value::is_object) {
        problems.push("no capabilities object".into());
    }
    problems
}
