//! The run at 2025-11-25 and the versions before it (the `initialize` handshake), in order:
//! one server process per group of checks, then one session for everything after the
//! handshake.

use super::{
    Suite,
    errors::{check_garbage, check_unknown_method},
    lifecycle::{LEGACY_VERSIONS, check_before_initialize, check_initialize, check_ping},
    report::Verdict,
    response::show,
    robustness::{
        check_batch, check_big_argument, check_cancelled, check_concurrency, check_duplicate_id,
        check_notifications,
    },
    shutdown::check_exit,
    tools::{check_invalid_arguments, check_tools_list, check_unknown_tool},
};
use crate::session::Session;

/// Runs the handshake's checks, then the session's.
pub(super) async fn run(suite: &mut Suite) {
    for version in LEGACY_VERSIONS {
        let name = format!("initialize {version}");
        if let Some(mut session) = suite.session(&name) {
            let outcome = check_initialize(&mut session, version, false).await;
            suite.record(&name, outcome);
        }
    }
    if let Some(mut session) = suite.session("initialize unknown version") {
        let outcome = check_initialize(&mut session, "1999-01-01", true).await;
        suite.record("initialize unknown version", outcome);
    }
    if let Some(mut session) = suite.session("requests before initialize") {
        let outcome = check_before_initialize(&mut session).await;
        suite.record("requests before initialize", outcome);
    }
    if let Some(mut session) = suite.session("batch under 2025-03-26") {
        let outcome = check_batch(&mut session).await;
        suite.record("batch under 2025-03-26", outcome);
    }
    if let Some(mut session) = suite.session("session") {
        match session.initialize("2025-11-25").await {
            Some(response) if response.get("result").is_some() => {
                after_handshake(suite, &mut session).await;
            }
            other => suite.record(
                "session",
                (
                    Verdict::Fail,
                    format!("initialize 2025-11-25 failed: {}", show(&other)),
                ),
            ),
        }
    }
}

/// The checks of one initialized session, exit at stdin EOF last.
async fn after_handshake(suite: &mut Suite, session: &mut Session) {
    suite.record("ping", check_ping(session).await);
    let mut tools = Vec::new();
    suite.record("tools/list", check_tools_list(session, &mut tools).await);
    suite.record("unknown tool", check_unknown_tool(session).await);
    suite.record(
        "invalid arguments",
        check_invalid_arguments(session, &tools).await,
    );
    suite.record("unknown method", check_unknown_method(session).await);
    let malformed = "{\"jsonrpc\": \"2.0\", \"id\": 9000, \"method\": \"ping\"";
    suite.record(
        "malformed JSON",
        check_garbage(session, malformed, -32700).await,
    );
    suite.record(
        "non-object line",
        check_garbage(session, "\"just a string\"", -32600).await,
    );
    suite.record("32 concurrent requests", check_concurrency(session).await);
    suite.record("id reused in flight", check_duplicate_id(session).await);
    suite.record("1 MiB argument", check_big_argument(session, &tools).await);
    suite.record("notifications ignored", check_notifications(session).await);
    suite.record(
        "notifications/cancelled",
        check_cancelled(session, &tools).await,
    );
    suite.record("exit on stdin EOF", check_exit(session).await);
}
