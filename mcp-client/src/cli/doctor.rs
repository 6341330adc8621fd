//! `mcp-client doctor -- <server command>`: everything wrong with one server, as a host would
//! meet it: start-up, capabilities, ping, its tool definitions (through
//! [`tools::review`](crate::tools::review), the engine `mcp-conformance` uses too), stdout
//! pollution, stderr, and whether it stops when stdin closes.

use std::{fmt, process::ExitCode, time::Duration};

use serde_json::Value;

use super::{Stop, emit, one_server};
use crate::{
    ServerConnection,
    tools::review::{self, Severity, ToolParts},
};

/// How a finding reads: `ok`, `note`, `WARN` or `FAIL`, or a line that continues the one above.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Level {
    Ok,
    Note,
    Warn,
    Fail,
    /// A detail line of the finding above it (the offending stdout lines).
    More,
}

impl From<Severity> for Level {
    fn from(severity: Severity) -> Self {
        match severity {
            Severity::Note => Self::Note,
            Severity::Warn => Self::Warn,
            Severity::Fail => Self::Fail,
        }
    }
}

impl fmt::Display for Level {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let label = match self {
            Self::Ok => "ok",
            Self::Note => "note",
            Self::Warn => "WARN",
            Self::Fail => "FAIL",
            Self::More => "",
        };
        f.pad(label)
    }
}

/// One finding of `doctor`.
struct Finding {
    level: Level,
    check: &'static str,
    detail: String,
}

/// Examines the server `command` starts and prints one line per finding, then the counts.
/// Fails when any finding is a `FAIL`.
pub(super) async fn doctor(init_timeout: u64, command: Vec<String>, stop: &Stop) -> ExitCode {
    let config = one_server(command, Duration::from_secs(init_timeout));
    let findings =
        examine(ServerConnection::new(config).with_processes(stop.processes.clone())).await;
    let count = |level| findings.iter().filter(|f| f.level == level).count();
    let (problems, warnings) = (count(Level::Fail), count(Level::Warn));
    for finding in &findings {
        emit(&format!(
            "{:<4} {}: {}",
            finding.level, finding.check, finding.detail
        ));
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

async fn examine(server: ServerConnection) -> Vec<Finding> {
    let mut findings = Vec::new();
    let mut add = |level, check, detail: String| {
        findings.push(Finding {
            level,
            check,
            detail,
        })
    };
    let info = match server.connect().await {
        Ok(info) => info,
        Err(err) => {
            add(Level::Fail, "start", err.to_string());
            return findings;
        }
    };
    let start = format!(
        "initialize answered in {} ms ({}, protocol {})",
        info.init_time.as_millis(),
        info.server,
        info.protocol_version
    );
    if info.init_time > Duration::from_secs(2) {
        add(
            Level::Warn,
            "start",
            format!("slow: {start}; hosts often give up after 10–60 s"),
        );
    } else {
        add(Level::Ok, "start", start);
    }
    if info.has_tools {
        add(Level::Ok, "capabilities", "tools announced".into());
    } else {
        add(
            Level::Fail,
            "capabilities",
            "the server does not announce the `tools` capability".into(),
        );
    }
    match server.ping().await {
        Ok(rtt) => add(
            Level::Ok,
            "ping",
            format!("answered in {} µs", rtt.as_micros()),
        ),
        Err(err) => add(Level::Warn, "ping", err.to_string()),
    }
    match server.tools().await {
        Ok(tools) => {
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
                    clean &= problem.severity == Severity::Note;
                    add(
                        problem.severity.into(),
                        "tools",
                        format!("`{}`: {}", tool.name, problem.detail),
                    );
                }
            }
            if clean {
                add(
                    Level::Ok,
                    "tools",
                    format!(
                        "{} tools, names valid for LLM providers, object schemas, descriptions",
                        tools.len()
                    ),
                );
            }
        }
        Err(err) => add(Level::Fail, "tools", err.to_string()),
    }
    if let Some(process) = server.process().await {
        let counts = process.counts();
        if counts.dropped() == 0 && counts.invalid_utf8 == 0 {
            add(
                Level::Ok,
                "stdout",
                format!("clean: {} messages, nothing else", counts.messages),
            );
        } else {
            add(
                Level::Fail,
                "stdout",
                format!(
                    "{} lines were not MCP messages (they belong on stderr), {} had invalid UTF-8:",
                    counts.dropped(),
                    counts.invalid_utf8
                ),
            );
            for line in process.dropped_lines() {
                add(Level::More, "  stdout", line);
            }
        }
        let stderr = process.stderr().lines();
        if let Some(last) = stderr.last() {
            add(
                Level::Note,
                "stderr",
                format!("{} lines, last: {last}", process.stderr().total()),
            );
        }
        let started = std::time::Instant::now();
        let exit = process.shutdown().await;
        let took = started.elapsed();
        match exit {
            Some(exit) if took < Duration::from_secs(2) => add(
                Level::Ok,
                "shutdown",
                format!(
                    "exited within {} ms of stdin closing ({exit})",
                    took.as_millis()
                ),
            ),
            Some(exit) if !exit.killed() => add(
                Level::Warn,
                "shutdown",
                format!("ignored stdin closing; stopped by SIGTERM ({exit})"),
            ),
            Some(exit) => add(
                Level::Fail,
                "shutdown",
                format!("ignored stdin closing and SIGTERM; killed ({exit})"),
            ),
            None => add(
                Level::Fail,
                "shutdown",
                "did not exit even after SIGKILL".into(),
            ),
        }
    }
    server.shutdown().await;
    findings
}
