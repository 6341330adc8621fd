//! Running the four phases against one server: start, warm-up, sequential, concurrent.

use std::time::{Duration, Instant};

use futures_util::StreamExt as _;

use super::{
    latency::Latencies,
    plan::{Plan, Progress, Request},
    report::{PhaseReport, ProcessReport, Report},
    usage::{self, Usage},
};
use crate::{ClientError, ServerConnection, connection::Endpoint, tools::executor::error_text};

/// Why a run could not measure anything useful.
#[derive(Debug, thiserror::Error)]
pub enum BenchError {
    /// The server did not start, or did not list its tools.
    #[error("the server did not start: {0}")]
    Start(ClientError),
    /// The server has no tool of the asked name.
    #[error("the server has no tool `{tool}`; it offers {}", offered(.available))]
    UnknownTool {
        /// The name asked for.
        tool: String,
        /// The names it offers.
        available: Vec<String>,
    },
    /// The tool may change things and writes were not allowed.
    #[error(
        "`{tool}` is not marked read-only by the server (readOnlyHint), so each of the {calls} calls of this run may change something real: pass --allow-writes to benchmark it anyway"
    )]
    WritesNotAllowed {
        /// The tool.
        tool: String,
        /// Calls the run would make.
        calls: usize,
    },
    /// The first call failed: a run would time the error path.
    #[error(
        "the first {request} failed, so there is nothing worth timing (fix the tool's arguments): {reason}"
    )]
    FirstCallFailed {
        /// What was asked.
        request: String,
        /// The server's error or the tool's error text.
        reason: String,
    },
    /// A later call failed (the server died, timed out or refused the request).
    #[error("call {call} of the {phase} phase failed: {error}")]
    CallFailed {
        /// The phase.
        phase: &'static str,
        /// Which call (1-based).
        call: usize,
        /// What went wrong.
        error: ClientError,
    },
}

fn offered(names: &[String]) -> String {
    match names {
        [] => "none".to_owned(),
        names => names
            .iter()
            .map(|n| format!("`{n}`"))
            .collect::<Vec<_>>()
            .join(", "),
    }
}

/// Starts `server` (or opens a session with a remote one), measures it as `plan` says, and
/// stops it (ends the session).
///
/// # Errors
/// See [`BenchError`]: nothing is reported when the server does not start, lacks the tool,
/// offers it without marking it read-only and `plan.allow_writes` is not set (no call is made
/// then), or a call fails (other than a tool answering with `isError`).
pub async fn run(
    server: ServerConnection,
    plan: &Plan,
    progress: &(dyn Fn(Progress) + Sync),
) -> Result<Report, BenchError> {
    let report = measure(&server, plan, progress).await;
    server.shutdown().await;
    report
}

async fn measure(
    server: &ServerConnection,
    plan: &Plan,
    progress: &(dyn Fn(Progress) + Sync),
) -> Result<Report, BenchError> {
    let info = server.connect().await.map_err(BenchError::Start)?;
    if let Request::Tool { name, .. } = &plan.request {
        let tools = server.tools().await.map_err(BenchError::Start)?;
        let Some(tool) = tools.iter().find(|t| t.name == *name) else {
            return Err(BenchError::UnknownTool {
                tool: name.clone(),
                available: tools.iter().map(|t| t.name.to_string()).collect(),
            });
        };
        // As `chat` asks before a call that may change things, a run of thousands of them
        // needs the person's say-so.
        let read_only = tool
            .annotations
            .as_ref()
            .and_then(|a| a.read_only_hint)
            .unwrap_or(false);
        if !read_only && !plan.allow_writes {
            return Err(BenchError::WritesNotAllowed {
                tool: name.clone(),
                calls: plan.total_calls(),
            });
        }
    }
    progress(Progress::Phase {
        name: "warm-up",
        calls: plan.warmup.max(1),
    });
    match call(server, &plan.request).await {
        Ok(Answer::Fine) => {}
        Ok(Answer::ToolError(reason)) => {
            return Err(BenchError::FirstCallFailed {
                request: plan.request.label(),
                reason: format!("the tool answered with an error: {reason}"),
            });
        }
        Err(error) => {
            return Err(BenchError::FirstCallFailed {
                request: plan.request.label(),
                reason: error.to_string(),
            });
        }
    }
    progress(Progress::Call);
    for n in 2..=plan.warmup {
        call(server, &plan.request)
            .await
            .map_err(|error| BenchError::CallFailed {
                phase: "warm-up",
                call: n,
                error,
            })?;
        progress(Progress::Call);
    }
    // A remote server's process is not ours to read, whatever `/proc` holds.
    let server_url = match &server.config().endpoint {
        Endpoint::Http(endpoint) => Some(endpoint.url.clone()),
        Endpoint::Stdio(_) => None,
    };
    let pid = info.pid.filter(|_| server_url.is_none());
    let mut phases = vec![phase(server, plan, 1, pid, progress).await?];
    if plan.concurrency > 1 {
        phases.push(phase(server, plan, plan.concurrency, pid, progress).await?);
    }
    let server_process = pid.and_then(|pid| {
        let usage = usage::of_tree(pid)?;
        Some(ProcessReport {
            pid,
            processes: usage.processes,
            peak_rss_kib: usage.peak_rss_kib,
        })
    });
    Ok(Report {
        server: info.server,
        protocol_version: info.protocol_version,
        request: plan.request.label(),
        start_ms: info.init_time.as_secs_f64() * 1e3,
        phases,
        server_process,
        server_url,
    })
}

/// What one call got back.
enum Answer {
    Fine,
    /// The tool answered with `isError: true`; its text.
    ToolError(String),
}

async fn call(server: &ServerConnection, request: &Request) -> Result<Answer, ClientError> {
    match request {
        Request::Ping => server.ping().await.map(|_| Answer::Fine),
        Request::Tool { name, arguments } => {
            let result = server.call_tool(name, arguments.clone()).await?;
            Ok(if result.is_error == Some(true) {
                Answer::ToolError(error_text(&result))
            } else {
                Answer::Fine
            })
        }
    }
}

/// Makes `plan.calls` calls with `in_flight` of them outstanding at any time.
async fn phase(
    server: &ServerConnection,
    plan: &Plan,
    in_flight: usize,
    pid: Option<u32>,
    progress: &(dyn Fn(Progress) + Sync),
) -> Result<PhaseReport, BenchError> {
    let name = if in_flight == 1 {
        "sequential"
    } else {
        "concurrent"
    };
    progress(Progress::Phase {
        name,
        calls: plan.calls,
    });
    let before = pid.and_then(usage::of_tree);
    let started = Instant::now();
    let mut answers = futures_util::stream::iter(1..=plan.calls)
        .map(|n| async move {
            let sent = Instant::now();
            let answer = call(server, &plan.request).await;
            (n, sent.elapsed(), answer)
        })
        .buffer_unordered(in_flight);
    let mut samples = Vec::with_capacity(plan.calls);
    let mut tool_errors = 0;
    while let Some((n, took, answer)) = answers.next().await {
        match answer {
            Ok(Answer::Fine) => {}
            Ok(Answer::ToolError(_)) => tool_errors += 1,
            Err(error) => {
                return Err(BenchError::CallFailed {
                    phase: name,
                    call: n,
                    error,
                });
            }
        }
        samples.push(took);
        progress(Progress::Call);
    }
    let elapsed = started.elapsed();
    let after = pid.and_then(usage::of_tree);
    let cpu = cpu_between(before, after);
    let latency = Latencies::new(samples);
    Ok(PhaseReport {
        name,
        in_flight,
        calls: latency.len(),
        tool_errors,
        seconds: elapsed.as_secs_f64(),
        calls_per_second: latency.len() as f64 / elapsed.as_secs_f64().max(f64::EPSILON),
        latency: latency.summary(),
        server_cpu_ms: cpu.map(|c| c.as_secs_f64() * 1e3),
        server_cpu_per_call_us: cpu.map(|c| c.as_secs_f64() * 1e6 / latency.len().max(1) as f64),
    })
}

/// CPU time spent between two readings of the same tree (none if either is missing; a
/// process that exited in between makes the total shrink, which reads as zero).
fn cpu_between(before: Option<Usage>, after: Option<Usage>) -> Option<Duration> {
    Some(after?.cpu.saturating_sub(before?.cpu))
}
