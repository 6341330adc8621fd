//! `mcp-client bench`: how fast one MCP server answers and what it costs, measured through
//! the same [`ServerConnection`] a host uses, for a tool and arguments of the user's choice.
//!
//! A run has four phases:
//! 1. **start**: spawn → `initialize` answered (plus `tools/list`, to check the tool exists);
//! 2. **warm-up**: calls that are not measured (the first one must succeed, or the run stops:
//!    timing a call that fails measures its error path, not the tool);
//! 3. **sequential**: one call in flight at a time; the latency of each;
//! 4. **concurrent** (when more than one is asked for): N calls in flight; throughput and the
//!    latency each call saw under that load.
//!
//! The server's process tree is read from `/proc` around each measured phase (`usage`): its
//! CPU time per call and its peak resident memory.
//!
//! This module owns the measurement; `cli::bench` owns the command line, the progress bar and
//! the table.

pub mod latency;
pub mod usage;

use std::time::{Duration, Instant};

use futures_util::StreamExt as _;
use rmcp::model::JsonObject;
use serde::Serialize;

use crate::{ClientError, ServerConfig, ServerConnection, tools::executor::error_text};
use latency::{Latencies, Summary};
use usage::Usage;

/// The request every call of the run makes.
#[derive(Debug, Clone, PartialEq)]
pub enum Request {
    /// `tools/call` of this tool with these arguments.
    Tool {
        /// The tool's name, as the server lists it.
        name: String,
        /// Its arguments.
        arguments: JsonObject,
    },
    /// `ping`: the protocol's cheapest round trip, which every server answers.
    Ping,
}

impl Request {
    /// "tools/call NAME" or "ping".
    pub fn label(&self) -> String {
        match self {
            Self::Tool { name, .. } => format!("tools/call {name}"),
            Self::Ping => "ping".to_owned(),
        }
    }
}

/// What to measure.
#[derive(Debug, Clone, PartialEq)]
pub struct Plan {
    /// The request of every call.
    pub request: Request,
    /// Calls in each measured phase.
    pub calls: usize,
    /// Calls in flight in the concurrent phase; 1 skips that phase.
    pub concurrency: usize,
    /// Calls made before measuring (at least one is always made).
    pub warmup: usize,
}

/// What a run reports to a progress display while it runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Progress {
    /// A phase of `calls` calls begins.
    Phase {
        /// "warm-up", "sequential" or "concurrent".
        name: &'static str,
        /// Calls it will make.
        calls: usize,
    },
    /// One more call of the current phase has been answered.
    Call,
}

/// The outcome of a run.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Report {
    /// The server's name and version, as it announced them.
    pub server: String,
    /// The protocol version agreed.
    pub protocol_version: String,
    /// What every call asked ("tools/call NAME" or "ping").
    pub request: String,
    /// Spawn → `initialize` answered, in milliseconds.
    pub start_ms: f64,
    /// The measured phases, in the order they ran.
    pub phases: Vec<PhaseReport>,
    /// The server's process tree; absent where `/proc` cannot be read.
    pub server_process: Option<ProcessReport>,
}

/// One measured phase.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PhaseReport {
    /// "sequential" or "concurrent".
    pub name: &'static str,
    /// Calls in flight at once.
    pub in_flight: usize,
    /// Calls made.
    pub calls: usize,
    /// Calls the tool answered with `isError: true` (counted, and timed like the others).
    pub tool_errors: usize,
    /// Wall-clock time of the phase, in seconds.
    pub seconds: f64,
    /// Calls answered per second.
    pub calls_per_second: f64,
    /// Latency of the calls.
    #[serde(flatten)]
    pub latency: Summary,
    /// The server's CPU time (user + system) during the phase, in milliseconds; its
    /// resolution is Linux's clock tick, 10 ms.
    pub server_cpu_ms: Option<f64>,
    /// That CPU time divided by the calls, in microseconds.
    pub server_cpu_per_call_us: Option<f64>,
}

/// The server's process tree at the end of the run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct ProcessReport {
    /// The process the client spawned.
    pub pid: u32,
    /// It and the processes it started.
    pub processes: usize,
    /// The sum of their peak resident memory, in KiB.
    pub peak_rss_kib: u64,
}

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

/// Starts the server of `config`, measures it as `plan` says, and stops it.
///
/// # Errors
/// See [`BenchError`]: nothing is reported when the server does not start, lacks the tool, or
/// a call fails (other than a tool answering with `isError`).
pub async fn run(
    config: ServerConfig,
    plan: &Plan,
    progress: &(dyn Fn(Progress) + Sync),
) -> Result<Report, BenchError> {
    let server = ServerConnection::new(config);
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
        if !tools.iter().any(|t| t.name == *name) {
            return Err(BenchError::UnknownTool {
                tool: name.clone(),
                available: tools.iter().map(|t| t.name.to_string()).collect(),
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
    let pid = info.pid;
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
