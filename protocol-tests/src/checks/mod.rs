//! The conformance suite: each check starts from what the MCP spec (2025-11-25 stdio transport,
//! lifecycle, tools) requires, drives the server with raw JSON-RPC, and reports a verdict
//! with the evidence.
//!
//! | module | checks |
//! |---|---|
//! | `lifecycle` | `initialize` per version, `server/discover`, requests before `initialize`, `ping` |
//! | `tools` | `tools/list`, an unknown tool, invalid arguments |
//! | `errors` | an unknown method, malformed and non-object lines |
//! | `robustness` | 32 concurrent requests, an id reused in flight, a batch (2025-03-26), a 1 MiB argument, ignored notifications, cancellation |
//! | `shutdown` | exit on stdin EOF |
//! | `report` | [`Verdict`], [`CheckResult`], [`Report`] |
//! | `response` | what a check reads of an answer: its error code, or the answer on one line |

mod errors;
mod lifecycle;
mod report;
mod response;
mod robustness;
mod shutdown;
mod tools;

use std::sync::{Arc, Mutex};

pub use report::{CheckResult, Report, Verdict};

use crate::session::{Session, Violations};
use errors::{check_garbage, check_unknown_method};
pub use lifecycle::{LEGACY_VERSIONS, MODERN_VERSION};
use lifecycle::{check_before_initialize, check_discover, check_initialize, check_ping};
use response::show;
use robustness::{
    check_batch, check_big_argument, check_cancelled, check_concurrency, check_duplicate_id,
    check_notifications,
};
use shutdown::check_exit;
use tools::{check_invalid_arguments, check_tools_list, check_unknown_tool};

struct Suite {
    command: Vec<String>,
    violations: Violations,
    results: Vec<CheckResult>,
}

impl Suite {
    fn record(&mut self, name: &str, verdict: Verdict, evidence: impl Into<String>) {
        self.results.push(CheckResult {
            name: name.to_owned(),
            verdict,
            evidence: evidence.into(),
        });
    }

    fn session(&mut self, label: &str) -> Option<Session> {
        match Session::start(&self.command, label, Arc::clone(&self.violations)) {
            Ok(session) => Some(session),
            Err(err) => {
                self.record(
                    label,
                    Verdict::Fail,
                    format!("cannot start the server: {err}"),
                );
                None
            }
        }
    }
}

/// Runs every check against the server started by `command`.
pub async fn run(command: &[String]) -> Report {
    let mut suite = Suite {
        command: command.to_vec(),
        violations: Arc::new(Mutex::new(Vec::new())),
        results: Vec::new(),
    };
    for version in LEGACY_VERSIONS {
        let name = format!("initialize {version}");
        if let Some(mut session) = suite.session(&name) {
            let (verdict, evidence) = check_initialize(&mut session, version, false).await;
            suite.record(&name, verdict, evidence);
        }
    }
    if let Some(mut session) = suite.session("initialize unknown version") {
        let (verdict, evidence) = check_initialize(&mut session, "1999-01-01", true).await;
        suite.record("initialize unknown version", verdict, evidence);
    }
    if let Some(mut session) = suite.session("server/discover") {
        let (verdict, evidence) = check_discover(&mut session).await;
        suite.record("server/discover", verdict, evidence);
    }
    if let Some(mut session) = suite.session("requests before initialize") {
        let (verdict, evidence) = check_before_initialize(&mut session).await;
        suite.record("requests before initialize", verdict, evidence);
    }
    if let Some(mut session) = suite.session("batch under 2025-03-26") {
        let (verdict, evidence) = check_batch(&mut session).await;
        suite.record("batch under 2025-03-26", verdict, evidence);
    }
    if let Some(mut session) = suite.session("session") {
        match session.initialize("2025-11-25").await {
            Some(response) if response.get("result").is_some() => {
                main_session(&mut suite, &mut session).await
            }
            other => suite.record(
                "session",
                Verdict::Fail,
                format!("initialize 2025-11-25 failed: {}", show(&other)),
            ),
        }
    }
    let violations = suite
        .violations
        .lock()
        .map(|v| v.clone())
        .unwrap_or_default();
    if violations.is_empty() {
        suite.record(
            "stdout is only JSON-RPC",
            Verdict::Pass,
            "every byte on stdout, in every check, was part of a complete JSON-RPC message",
        );
    } else {
        let shown: Vec<String> = violations
            .iter()
            .take(5)
            .map(|v| format!("[{}] {}: {}", v.session, v.problem, v.line))
            .collect();
        suite.record(
            "stdout is only JSON-RPC",
            Verdict::Fail,
            format!(
                "{} stdout lines were not JSON-RPC messages: {}",
                violations.len(),
                shown.join("; ")
            ),
        );
    }
    Report {
        server: command.join(" "),
        checks: suite.results,
    }
}

async fn main_session(suite: &mut Suite, session: &mut Session) {
    let (verdict, evidence) = check_ping(session).await;
    suite.record("ping", verdict, evidence);
    let mut tools = Vec::new();
    let (verdict, evidence) = check_tools_list(session, &mut tools).await;
    suite.record("tools/list", verdict, evidence);
    let (verdict, evidence) = check_unknown_tool(session).await;
    suite.record("unknown tool", verdict, evidence);
    let (verdict, evidence) = check_invalid_arguments(session, &tools).await;
    suite.record("invalid arguments", verdict, evidence);
    let (verdict, evidence) = check_unknown_method(session).await;
    suite.record("unknown method", verdict, evidence);
    let (verdict, evidence) = check_garbage(
        session,
        "{\"jsonrpc\": \"2.0\", \"id\": 9000, \"method\": \"ping\"",
        -32700,
    )
    .await;
    suite.record("malformed JSON", verdict, evidence);
    let (verdict, evidence) = check_garbage(session, "\"just a string\"", -32600).await;
    suite.record("non-object line", verdict, evidence);
    let (verdict, evidence) = check_concurrency(session).await;
    suite.record("32 concurrent requests", verdict, evidence);
    let (verdict, evidence) = check_duplicate_id(session).await;
    suite.record("id reused in flight", verdict, evidence);
    let (verdict, evidence) = check_big_argument(session, &tools).await;
    suite.record("1 MiB argument", verdict, evidence);
    let (verdict, evidence) = check_notifications(session).await;
    suite.record("notifications ignored", verdict, evidence);
    let (verdict, evidence) = check_cancelled(session, &tools).await;
    suite.record("notifications/cancelled", verdict, evidence);
    let (verdict, evidence) = check_exit(session).await;
    suite.record("exit on stdin EOF", verdict, evidence);
}
