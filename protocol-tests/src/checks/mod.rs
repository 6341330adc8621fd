//! The conformance suite: each check starts from what the MCP spec requires (2025-11-25 and
//! before: stdio transport, lifecycle, tools; 2026-07-28: the stateless lifecycle and its
//! questions), drives the server with raw JSON-RPC, and reports a verdict with the evidence.
//!
//! | module | checks |
//! |---|---|
//! | `v2025` | the run at 2025-11-25 and before, in order |
//! | `lifecycle` | `initialize` per version, requests before `initialize`, `ping` |
//! | `tools` | `tools/list`, an unknown tool, invalid arguments |
//! | `errors` | an unknown method, malformed and non-object lines |
//! | `robustness` | 32 concurrent requests, an id reused in flight, a batch (2025-03-26), a 1 MiB argument, ignored notifications, cancellation |
//! | `shutdown` | exit on stdin EOF |
//! | `v2026` | the run at 2026-07-28, in order |
//! | `discover` | `server/discover`: whether the server speaks 2026-07-28, and its answer |
//! | `wire` | caching hints, the request `_meta`, `resultType`, no request from the server |
//! | [`input_required`] | a call that asks: round trip, replayed and tampered state, declined |
//! | [`answers`] | what the checker answers to a server's questions |
//! | `report` | [`Verdict`], [`CheckResult`], [`Report`] |
//! | `response` | what a check reads of an answer: its error code, or the answer on one line |

pub mod answers;
mod discover;
mod errors;
pub mod input_required;
mod lifecycle;
mod report;
mod response;
mod robustness;
mod shutdown;
mod tools;
mod v2025;
mod v2026;
mod wire;

use std::sync::{Arc, Mutex};

pub use lifecycle::LEGACY_VERSIONS;
pub use report::{CheckResult, Outcome, Report, Verdict};

use crate::{
    options::Options,
    session::{Session, Violations},
};

/// A run in progress: the server's command line, what its sessions wrote that is not
/// JSON-RPC, and the results so far.
pub(crate) struct Suite {
    command: Vec<String>,
    violations: Violations,
    results: Vec<CheckResult>,
}

impl Suite {
    fn record(&mut self, name: &str, (verdict, evidence): Outcome) {
        self.results.push(CheckResult {
            name: name.to_owned(),
            verdict,
            evidence,
        });
    }

    fn session(&mut self, label: &str) -> Option<Session> {
        match Session::start(&self.command, label, Arc::clone(&self.violations)) {
            Ok(session) => Some(session),
            Err(err) => {
                self.record(
                    label,
                    (Verdict::Fail, format!("cannot start the server: {err}")),
                );
                None
            }
        }
    }

    /// The last check: every byte any session read from stdout was JSON-RPC.
    fn check_stdout(&mut self) {
        let violations = self
            .violations
            .lock()
            .map(|v| v.clone())
            .unwrap_or_default();
        if violations.is_empty() {
            self.record(
                "stdout is only JSON-RPC",
                (
                    Verdict::Pass,
                    "every byte on stdout, in every check, was part of a complete JSON-RPC message"
                        .into(),
                ),
            );
            return;
        }
        let shown: Vec<String> = violations
            .iter()
            .take(5)
            .map(|v| format!("[{}] {}: {}", v.session, v.problem, v.line))
            .collect();
        self.record(
            "stdout is only JSON-RPC",
            (
                Verdict::Fail,
                format!(
                    "{} stdout lines were not JSON-RPC messages: {}",
                    violations.len(),
                    shown.join("; ")
                ),
            ),
        );
    }
}

/// Runs every check, at both revisions, against the server started by `command`.
pub async fn run(command: &[String]) -> Report {
    run_with(command, &Options::default()).await
}

/// Runs the checks `options` choose against the server started by `command`.
pub async fn run_with(command: &[String], options: &Options) -> Report {
    let mut suite = Suite {
        command: command.to_vec(),
        violations: Arc::new(Mutex::new(Vec::new())),
        results: Vec::new(),
    };
    if options.protocol.has_initialize() {
        v2025::run(&mut suite).await;
    }
    if options.protocol.has_stateless() {
        v2026::run(&mut suite, options).await;
    }
    suite.check_stdout();
    Report {
        server: command.join(" "),
        checks: suite.results,
    }
}
