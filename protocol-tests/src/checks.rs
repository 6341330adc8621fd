//! The conformance suite: each check starts from what the MCP spec (2025-11-25 stdio transport,
//! lifecycle, tools) requires, drives the server with raw JSON-RPC, and reports a verdict
//! with the evidence.

use std::{
    sync::{Arc, Mutex},
    time::Duration,
};

use serde::Serialize;
use serde_json::{Value, json};

use crate::session::{ANSWER_TIMEOUT, Session, Violations, ids};

/// Protocol versions with the legacy `initialize` handshake.
pub const LEGACY_VERSIONS: [&str; 4] = ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"];
/// The version that replaced the handshake with `server/discover`.
pub const MODERN_VERSION: &str = "2026-07-28";

/// A check's verdict.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Verdict {
    /// Conforms.
    Pass,
    /// Allowed, but worth knowing.
    Warn,
    /// Does not conform.
    Fail,
    /// Could not be checked (the server offers nothing to check it with).
    Skip,
    /// Does not apply to this server (nothing it offers can show the behaviour either way).
    NotApplicable,
}

impl Verdict {
    /// `PASS`, `WARN`, `FAIL`, `SKIP`, `N/A`.
    pub fn label(self) -> &'static str {
        match self {
            Self::Pass => "PASS",
            Self::Warn => "WARN",
            Self::Fail => "FAIL",
            Self::Skip => "SKIP",
            Self::NotApplicable => "N/A",
        }
    }
}

/// One check's result.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CheckResult {
    /// The check.
    pub name: String,
    /// Its verdict.
    pub verdict: Verdict,
    /// What was seen.
    pub evidence: String,
}

/// Every check's result for one server.
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    /// The server command line.
    pub server: String,
    /// The checks, in the order run.
    pub checks: Vec<CheckResult>,
}

impl Report {
    /// The result of the check `name`.
    pub fn get(&self, name: &str) -> Option<&CheckResult> {
        self.checks.iter().find(|c| c.name == name)
    }

    /// How many checks got `verdict`.
    pub fn count(&self, verdict: Verdict) -> usize {
        self.checks.iter().filter(|c| c.verdict == verdict).count()
    }

    /// One line per check, then the summary. Evidence that holds newlines (a server's
    /// multi-line error message) continues on lines indented by four spaces, so every line
    /// that does not start with a space starts a check; other control characters are escaped.
    pub fn text(&self) -> String {
        let mut lines: Vec<String> = self
            .checks
            .iter()
            .map(|c| {
                format!(
                    "{} {}: {}",
                    c.verdict.label(),
                    c.name,
                    indent_evidence(&c.evidence)
                )
            })
            .collect();
        lines.push(format!(
            "{} passed, {} failed, {} warnings, {} skipped, {} not applicable",
            self.count(Verdict::Pass),
            self.count(Verdict::Fail),
            self.count(Verdict::Warn),
            self.count(Verdict::Skip),
            self.count(Verdict::NotApplicable)
        ));
        lines.join("\n")
    }
}

/// `evidence` with each line break followed by four spaces and other control characters
/// escaped.
fn indent_evidence(evidence: &str) -> String {
    let mut shown = String::with_capacity(evidence.len());
    for line in evidence.trim_end_matches(['\n', '\r']).split('\n') {
        if !shown.is_empty() {
            shown.push_str("\n    ");
        }
        for c in line.chars() {
            if c.is_control() {
                shown.extend(c.escape_default());
            } else {
                shown.push(c);
            }
        }
    }
    shown
}

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
    )
    .await;
    suite.record("malformed JSON", verdict, evidence);
    let (verdict, evidence) = check_garbage(session, "\"just a string\"").await;
    suite.record("non-object line", verdict, evidence);
    let (verdict, evidence) = check_concurrency(session).await;
    suite.record("32 concurrent requests", verdict, evidence);
    let (verdict, evidence) = check_big_argument(session, &tools).await;
    suite.record("1 MiB argument", verdict, evidence);
    let (verdict, evidence) = check_notifications(session).await;
    suite.record("notifications ignored", verdict, evidence);
    let (verdict, evidence) = check_cancelled(session, &tools).await;
    suite.record("notifications/cancelled", verdict, evidence);
    let (verdict, evidence) = check_exit(session).await;
    suite.record("exit on stdin EOF", verdict, evidence);
}

type Outcome = (Verdict, String);

fn show(value: &Option<Value>) -> String {
    match value {
        None => "no answer within 10 s".into(),
        Some(value) => {
            let text = value.to_string();
            if text.len() > 200 {
                format!("{}…", &text[..text.floor_char_boundary(200)])
            } else {
                text
            }
        }
    }
}

fn error_code(response: &Value) -> Option<i64> {
    response.get("error")?.get("code")?.as_i64()
}

async fn check_initialize(session: &mut Session, version: &str, unknown: bool) -> Outcome {
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

async fn check_discover(session: &mut Session) -> Outcome {
    let params = json!({"_meta": {
        "io.modelcontextprotocol/protocolVersion": MODERN_VERSION,
        "io.modelcontextprotocol/clientInfo": {"name": "mcp-conformance", "version": env!("CARGO_PKG_VERSION")},
        "io.modelcontextprotocol/clientCapabilities": {},
    }});
    let response = session
        .request("server/discover", Some(params), ANSWER_TIMEOUT)
        .await;
    match &response {
        Some(r) if r.get("result").is_some() => {
            let versions = r
                .pointer("/result/supportedVersions")
                .map_or_else(|| "no supportedVersions".to_owned(), Value::to_string);
            (Verdict::Pass, format!("answered; {versions}"))
        }
        Some(r) => (
            Verdict::Warn,
            format!(
                "not supported (error {}): the server speaks only the legacy initialize handshake",
                error_code(r).unwrap_or_default()
            ),
        ),
        None => (Verdict::Fail, "no answer within 10 s".into()),
    }
}

async fn check_before_initialize(session: &mut Session) -> Outcome {
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

async fn check_ping(session: &mut Session) -> Outcome {
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

async fn check_tools_list(session: &mut Session, tools: &mut Vec<Value>) -> Outcome {
    let mut cursor: Option<Value> = None;
    let mut pages = 0;
    loop {
        let params = cursor.as_ref().map(|c| json!({"cursor": c}));
        let response = session.request("tools/list", params, ANSWER_TIMEOUT).await;
        let Some(page) = response
            .as_ref()
            .and_then(|r| r.pointer("/result/tools"))
            .and_then(Value::as_array)
        else {
            return (
                Verdict::Fail,
                format!("no tools in the tools/list result: {}", show(&response)),
            );
        };
        tools.extend(page.iter().cloned());
        pages += 1;
        cursor = response
            .as_ref()
            .and_then(|r| r.pointer("/result/nextCursor"))
            .filter(|c| !c.is_null())
            .cloned();
        if cursor.is_none() {
            break;
        }
        if pages >= 50 {
            return (
                Verdict::Fail,
                "more than 50 pages: the cursor never ends".into(),
            );
        }
    }
    let mut problems = Vec::new();
    let mut warnings = Vec::new();
    let mut seen = std::collections::HashSet::new();
    for tool in tools.iter() {
        let name = tool.get("name").and_then(Value::as_str).unwrap_or_default();
        if !seen.insert(name.to_owned()) {
            problems.push(format!("`{name}` is listed twice"));
        }
        if !mcp_client::tools::names::is_provider_safe(name) {
            problems.push(format!(
                "`{name}` is not a valid tool name for LLM providers (^[a-zA-Z0-9_-]{{1,64}}$)"
            ));
        }
        if tool
            .get("description")
            .and_then(Value::as_str)
            .is_none_or(|d| d.trim().is_empty())
        {
            warnings.push(format!("`{name}` has no description"));
        }
        match tool.get("inputSchema") {
            Some(schema) if schema.get("type") == Some(&json!("object")) => {
                if let Err(err) = jsonschema::validator_for(schema) {
                    problems.push(format!(
                        "`{name}` inputSchema is not valid JSON Schema: {err}"
                    ));
                }
            }
            other => problems.push(format!(
                "`{name}` inputSchema must have type \"object\", got {}",
                show(&other.cloned())
            )),
        }
        if let Some(schema) = tool.get("outputSchema")
            && jsonschema::validator_for(schema).is_err()
        {
            problems.push(format!("`{name}` outputSchema is not valid JSON Schema"));
        }
    }
    let summary = format!(
        "{} tools in {pages} page{}",
        tools.len(),
        if pages == 1 { "" } else { "s" }
    );
    if !problems.is_empty() {
        (Verdict::Fail, format!("{summary}: {}", problems.join("; ")))
    } else if !warnings.is_empty() {
        (Verdict::Warn, format!("{summary}: {}", warnings.join("; ")))
    } else {
        (
            Verdict::Pass,
            format!(
                "{summary}; names valid for LLM providers; object schemas that compile; descriptions"
            ),
        )
    }
}

async fn check_unknown_tool(session: &mut Session) -> Outcome {
    let params = json!({"name": "no_such_tool_mcp_conformance", "arguments": {}});
    let response = session
        .request("tools/call", Some(params), ANSWER_TIMEOUT)
        .await;
    match &response {
        Some(r) if r.get("error").is_some() => (
            Verdict::Pass,
            format!("JSON-RPC error {}", error_code(r).unwrap_or_default()),
        ),
        Some(r) if r.pointer("/result/isError") == Some(&json!(true)) => (
            Verdict::Warn,
            "answered with an isError result; the spec asks for a JSON-RPC error for unknown tools"
                .into(),
        ),
        _ => (
            Verdict::Fail,
            format!("expected a JSON-RPC error: {}", show(&response)),
        ),
    }
}

/// A tool with required parameters, to call without them.
fn tool_with_required(tools: &[Value]) -> Option<&Value> {
    tools.iter().find(|t| {
        t.pointer("/inputSchema/required")
            .and_then(Value::as_array)
            .is_some_and(|r| !r.is_empty())
    })
}

async fn check_invalid_arguments(session: &mut Session, tools: &[Value]) -> Outcome {
    let Some(tool) = tool_with_required(tools) else {
        return (Verdict::Skip, "no tool has required parameters".into());
    };
    let name = tool["name"].as_str().unwrap_or_default().to_owned();
    let response = session
        .request(
            "tools/call",
            Some(json!({"name": name, "arguments": {}})),
            ANSWER_TIMEOUT,
        )
        .await;
    match &response {
        Some(r) if r.pointer("/result/isError") == Some(&json!(true)) => {
            let text = r
                .pointer("/result/content/0/text")
                .and_then(Value::as_str)
                .unwrap_or("(no text)");
            (
                Verdict::Pass,
                format!("`{name}` without its required parameters: isError result \"{text}\""),
            )
        }
        Some(r) if r.get("error").is_some() => (
            Verdict::Warn,
            format!(
                "`{name}`: JSON-RPC error {}; MCP 2025-11-25 asks for an isError result the model can read",
                error_code(r).unwrap_or_default()
            ),
        ),
        _ => (
            Verdict::Fail,
            format!(
                "`{name}` without required parameters did not fail: {}",
                show(&response)
            ),
        ),
    }
}

async fn check_unknown_method(session: &mut Session) -> Outcome {
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

async fn check_garbage(session: &mut Session, line: &str) -> Outcome {
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
        (0, true) => (Verdict::Pass, "ignored; the session continued".into()),
        (1, true) if replies[0].get("error").is_some() => (
            Verdict::Pass,
            format!(
                "answered one error ({}); the session continued",
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

async fn check_concurrency(session: &mut Session) -> Outcome {
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

async fn check_big_argument(session: &mut Session, tools: &[Value]) -> Outcome {
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

async fn check_notifications(session: &mut Session) -> Outcome {
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

async fn check_cancelled(session: &mut Session, tools: &[Value]) -> Outcome {
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

async fn check_exit(session: &mut Session) -> Outcome {
    if session
        .request("ping", None, ANSWER_TIMEOUT)
        .await
        .is_none()
    {
        return (
            Verdict::Fail,
            "no answer to ping before closing stdin".into(),
        );
    }
    let before = session.violations().len();
    let exited = session.close_and_wait(Duration::from_secs(2)).await;
    let after = session.drain(Duration::from_millis(200)).await;
    let late = after.len() + session.violations().len() - before;
    match exited {
        None => (
            Verdict::Fail,
            "still running 2 s after stdin closed (killed)".into(),
        ),
        Some(_) if late > 0 => (
            Verdict::Fail,
            format!("wrote {late} messages to stdout after stdin closed"),
        ),
        Some(took) => (
            Verdict::Pass,
            format!(
                "exited {} ms after stdin closed, nothing written after",
                took.as_millis()
            ),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn multi_line_evidence_stays_under_its_check() {
        let report = Report {
            server: "s".into(),
            checks: vec![
                CheckResult {
                    name: "invalid arguments".into(),
                    verdict: Verdict::Pass,
                    evidence: "2 validation errors\nx\n  Field required\r\u{1b}[31m\n".into(),
                },
                CheckResult {
                    name: "ping".into(),
                    verdict: Verdict::Pass,
                    evidence: "answered".into(),
                },
            ],
        };
        assert_eq!(
            report.text(),
            "PASS invalid arguments: 2 validation errors\n    x\n      Field required\\r\\u{1b}[31m\nPASS ping: answered\n2 passed, 0 failed, 0 warnings, 0 skipped, 0 not applicable"
        );
    }
}
