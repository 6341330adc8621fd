//! `mcp-client doctor -- <server command>` (or `--url URL` for a remote server): everything
//! wrong with one server, as a host would meet it: start-up (over HTTP with what to fix:
//! TLS, the token, the path, an answer that is not MCP), the protocol revisions it speaks,
//! capabilities, ping, its tool definitions (through [`tools::review`](crate::tools::review),
//! the engine `mcp-conformance` uses too); for a started server also stdout pollution,
//! stderr, and whether it stops when stdin closes.

use std::{process::ExitCode, time::Duration};

use serde_json::Value;

use super::{Stop, emit};
use crate::{
    ServerConfig, ServerConnection,
    connection::SessionInfo,
    tools::review::{self, ToolParts, Verdict},
    transport::ServerProcess,
};

/// What `doctor` examines, in the order it reports them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Check {
    /// `initialize` or `server/discover`, and how long it took.
    Start,
    /// The protocol revisions it speaks: 2026-07-28's `server/discover`, and `initialize`.
    Revisions,
    /// The `tools` capability.
    Capabilities,
    /// `ping`.
    Ping,
    /// Each tool definition, through [`review::review`].
    Tools,
    /// Nothing but MCP messages on stdout.
    Stdout,
    /// What the server wrote on stderr.
    Stderr,
    /// Exiting when stdin closes.
    Shutdown,
}

impl Check {
    /// How a finding names it.
    fn name(self) -> &'static str {
        match self {
            Self::Start => "start",
            Self::Revisions => "revisions",
            Self::Capabilities => "capabilities",
            Self::Ping => "ping",
            Self::Tools => "tools",
            Self::Stdout => "stdout",
            Self::Stderr => "stderr",
            Self::Shutdown => "shutdown",
        }
    }
}

/// One finding of `doctor`.
struct Finding {
    check: Check,
    verdict: Verdict,
    detail: String,
    /// Lines shown under it (the offending stdout lines).
    lines: Vec<String>,
}

impl Finding {
    fn new(check: Check, verdict: Verdict, detail: impl Into<String>) -> Self {
        Self {
            check,
            verdict,
            detail: detail.into(),
            lines: Vec::new(),
        }
    }

    /// Its line, then one per line under it, indented to its name.
    fn print(&self) {
        emit(&format!(
            "{:<4} {}: {}",
            label(self.verdict),
            self.check.name(),
            self.detail
        ));
        for line in &self.lines {
            emit(&format!("{:<4}   {}: {line}", "", self.check.name()));
        }
    }
}

/// How `doctor` prints a verdict: `ok` and `note` in lowercase, problems in capitals.
fn label(verdict: Verdict) -> &'static str {
    match verdict {
        Verdict::Pass => "ok",
        Verdict::Note => "note",
        other => other.label(),
    }
}

/// Examines the server and prints one line per finding, then the counts. Fails when any
/// finding is a `FAIL`, a configuration the flags could not make (`config`) among them.
pub(super) async fn doctor(config: Result<ServerConfig, String>, stop: &Stop) -> ExitCode {
    let config = match config {
        Ok(config) => config,
        Err(problem) => {
            emit(&format!("FAIL start: {problem}"));
            return ExitCode::FAILURE;
        }
    };
    let findings = examine(config, stop).await;
    let count = |verdict| findings.iter().filter(|f| f.verdict == verdict).count();
    let (problems, warnings) = (count(Verdict::Fail), count(Verdict::Warn));
    for finding in &findings {
        finding.print();
    }
    emit(&format!(
        "{problems} problem{}, {warnings} warning{}",
        plural(problems),
        plural(warnings)
    ));
    if problems == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}

/// Every check, in order; a server that does not start gets only that finding.
async fn examine(config: ServerConfig, stop: &Stop) -> Vec<Finding> {
    let server = ServerConnection::new(config.clone()).with_processes(stop.processes.clone());
    let info = match server.connect().await {
        Ok(info) => info,
        Err(err) => return vec![Finding::new(Check::Start, Verdict::Fail, err.to_string())],
    };
    let mut findings = vec![start(&info)];
    findings.push(revisions(&info, config, stop).await);
    findings.extend([capabilities(&info), ping(&server).await]);
    findings.extend(tools(&server).await);
    if let Some(process) = server.process().await {
        findings.extend(
            process
                .tools_left_out()
                .into_iter()
                .map(|note| Finding::new(Check::Tools, Verdict::Fail, note)),
        );
        findings.push(stdout(&process));
        findings.extend(stderr(&process));
        findings.push(shutdown(&process).await);
    }
    server.shutdown().await;
    findings
}

/// Whether the server speaks both lifecycles: a session of the other kind than the one it
/// chose, pinned (a second process, for a started server).
async fn revisions(info: &SessionInfo, mut config: ServerConfig, stop: &Stop) -> Finding {
    if info.has_initialize() {
        // It refused server/discover already, or the session would be of the newest.
        return Finding::new(
            Check::Revisions,
            Verdict::Note,
            format!(
                "{} only (server/discover refused): clients of 2026-07-28 fall back to initialize",
                info.protocol_version
            ),
        );
    }
    config.protocol_version = Some(rmcp::model::ProtocolVersion::V_2025_11_25);
    let other = ServerConnection::new(config).with_processes(stop.processes.clone());
    let answer = other.connect().await;
    other.shutdown().await;
    match answer {
        Ok(old) => Finding::new(
            Check::Revisions,
            Verdict::Pass,
            format!(
                "2026-07-28 (server/discover) and, for older clients, {} (initialize)",
                old.protocol_version
            ),
        ),
        Err(err) => Finding::new(
            Check::Revisions,
            Verdict::Warn,
            format!("only 2026-07-28: clients of 2025-11-25 and before cannot use it ({err})"),
        ),
    }
}

fn start(info: &SessionInfo) -> Finding {
    // From 2026-07-28 a session starts with `server/discover`, before it with `initialize`.
    let handshake = if info.has_initialize() {
        "initialize"
    } else {
        "server/discover"
    };
    let start = format!(
        "{handshake} answered in {} ms ({}, protocol {})",
        info.init_time.as_millis(),
        info.server,
        info.protocol_version
    );
    if info.init_time > Duration::from_secs(2) {
        Finding::new(
            Check::Start,
            Verdict::Warn,
            format!("slow: {start}; hosts often give up after 10–60 s"),
        )
    } else {
        Finding::new(Check::Start, Verdict::Pass, start)
    }
}

fn capabilities(info: &SessionInfo) -> Finding {
    if info.has_tools {
        Finding::new(Check::Capabilities, Verdict::Pass, "tools announced")
    } else {
        Finding::new(
            Check::Capabilities,
            Verdict::Fail,
            "the server does not announce the `tools` capability",
        )
    }
}

async fn ping(server: &ServerConnection) -> Finding {
    match server.ping().await {
        Ok(rtt) => Finding::new(
            Check::Ping,
            Verdict::Pass,
            format!("answered in {} µs", rtt.as_micros()),
        ),
        Err(err) => Finding::new(Check::Ping, Verdict::Warn, err.to_string()),
    }
}

/// A finding per problem of each tool definition, or one that says they are all fine
/// (notes alone leave them fine).
async fn tools(server: &ServerConnection) -> Vec<Finding> {
    let tools = match server.tools().await {
        Ok(tools) => tools,
        Err(err) => return vec![Finding::new(Check::Tools, Verdict::Fail, err.to_string())],
    };
    let mut findings = Vec::new();
    let mut clean = true;
    for tool in &tools {
        let input_schema = Value::Object((*tool.input_schema).clone());
        let output_schema = tool
            .output_schema
            .as_ref()
            .map(|schema| Value::Object((**schema).clone()));
        let parts = ToolParts {
            name: &tool.name,
            description: tool.description.as_deref(),
            input_schema: Some(&input_schema),
            output_schema: output_schema.as_ref(),
        };
        for problem in review::review(parts) {
            clean &= problem.verdict == Verdict::Note;
            findings.push(Finding::new(
                Check::Tools,
                problem.verdict,
                format!("`{}`: {}", tool.name, problem.detail),
            ));
        }
    }
    if clean {
        findings.push(Finding::new(
            Check::Tools,
            Verdict::Pass,
            format!(
                "{} tools, names valid for LLM providers, object schemas, descriptions",
                tools.len()
            ),
        ));
    }
    findings
}

fn stdout(process: &ServerProcess) -> Finding {
    let counts = process.counts();
    if counts.dropped() == 0 && counts.invalid_utf8 == 0 {
        return Finding::new(
            Check::Stdout,
            Verdict::Pass,
            format!("clean: {} messages, nothing else", counts.messages),
        );
    }
    let mut finding = Finding::new(
        Check::Stdout,
        Verdict::Fail,
        format!(
            "{} lines were not MCP messages (they belong on stderr), {} had invalid UTF-8:",
            counts.dropped(),
            counts.invalid_utf8
        ),
    );
    finding.lines = process.dropped_lines();
    finding
}

fn stderr(process: &ServerProcess) -> Option<Finding> {
    let stderr = process.stderr().lines();
    let last = stderr.last()?;
    Some(Finding::new(
        Check::Stderr,
        Verdict::Note,
        format!("{} lines, last: {last}", process.stderr().total()),
    ))
}

async fn shutdown(process: &ServerProcess) -> Finding {
    let started = std::time::Instant::now();
    let exit = process.shutdown().await;
    let took = started.elapsed();
    let (verdict, detail) = match exit {
        Some(exit) if took < Duration::from_secs(2) => (
            Verdict::Pass,
            format!(
                "exited within {} ms of stdin closing ({exit})",
                took.as_millis()
            ),
        ),
        Some(exit) if !exit.killed() => (
            Verdict::Warn,
            format!("ignored stdin closing; stopped by SIGTERM ({exit})"),
        ),
        Some(exit) => (
            Verdict::Fail,
            format!("ignored stdin closing and SIGTERM; killed ({exit})"),
        ),
        None => (Verdict::Fail, "did not exit even after SIGKILL".to_owned()),
    };
    Finding::new(Check::Shutdown, verdict, detail)
}
