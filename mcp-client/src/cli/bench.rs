//! `mcp-client bench -- <server command>` (or `--url URL` for a remote server): the command
//! line of [`crate::bench`], its progress bar (on a terminal only) and its answer, a table or
//! JSON. A tool not marked read-only is called only with `--allow-writes`.

use std::{io::IsTerminal as _, process::ExitCode, time::Duration};

use clap::Args;

use super::{Stop, UsageError, emit, target::TargetArgs, tools::parse_arguments};
use crate::{
    ServerConnection,
    bench::{self, BenchError, PhaseReport, Plan, Progress, Report, Request},
};

/// Arguments of `mcp-client bench`.
#[derive(Debug, Args)]
pub struct BenchArgs {
    /// The tool to call (none: measure `ping`, which every server answers).
    #[arg(long)]
    tool: Option<String>,
    /// The tool's arguments as a JSON object.
    #[arg(long, requires = "tool")]
    args: Option<String>,
    /// Calls in each measured phase.
    #[arg(long, default_value_t = 2_000, value_parser = clap::value_parser!(u32).range(1..=10_000_000))]
    calls: u32,
    /// Calls in flight in the concurrent phase (1: sequential only).
    #[arg(long, default_value_t = 8, value_parser = clap::value_parser!(u32).range(1..=4_096))]
    concurrency: u32,
    /// Calls made before measuring; the first must succeed.
    #[arg(long, default_value_t = 100, value_parser = clap::value_parser!(u32).range(1..=1_000_000))]
    warmup: u32,
    /// Call the tool even though the server does not mark it read-only (`readOnlyHint`): each
    /// of the run's thousands of calls may change something real.
    #[arg(long, requires = "tool")]
    allow_writes: bool,
    /// Longest wait for `initialize`: seconds (60) or a duration (90s, 2m).
    #[arg(long, value_parser = common::parse_duration, default_value = "60")]
    init_timeout: Duration,
    /// Longest wait for one call: seconds (30) or a duration (500ms, 1m).
    #[arg(long, value_parser = common::parse_duration, default_value = "30")]
    call_timeout: Duration,
    /// The MCP revision to speak (such as 2025-11-25, with a session over HTTP); none: the
    /// newest the server offers.
    #[arg(long, value_parser = crate::connection::lifecycle::parse)]
    protocol_version: Option<rmcp::model::ProtocolVersion>,
    /// Print the report as JSON instead of a table.
    #[arg(long)]
    json: bool,
    /// The server: `-- COMMAND…`, or `--url URL` (a remote server: the report then has no
    /// figures of its process).
    #[command(flatten)]
    target: TargetArgs,
}

/// Runs the benchmark; exit code 0 with a report, 1 when the server failed it, 2 on usage
/// errors (including a tool the server does not have).
pub(super) async fn run(args: BenchArgs, stop: &Stop) -> anyhow::Result<ExitCode> {
    let request = match args.tool {
        Some(name) => Request::Tool {
            name,
            arguments: parse_arguments(args.args.as_deref().unwrap_or("{}"))?,
        },
        None => Request::Ping,
    };
    let plan = Plan {
        request,
        calls: args.calls as usize,
        concurrency: args.concurrency as usize,
        warmup: args.warmup as usize,
        allow_writes: args.allow_writes,
    };
    let mut config = args
        .target
        .into_config(args.init_timeout)
        .map_err(UsageError)?;
    config.call_timeout = args.call_timeout;
    config.protocol_version = args.protocol_version;
    let bar = progress_bar();
    let server = ServerConnection::new(config).with_processes(stop.processes.clone());
    let report = bench::run(server, &plan, &|event| match event {
        Progress::Phase { name, calls } => {
            bar.set_message(name);
            bar.set_length(calls as u64);
            bar.set_position(0);
        }
        Progress::Call => bar.inc(1),
    })
    .await;
    bar.finish_and_clear();
    match report {
        Ok(report) if args.json => {
            emit(&serde_json::to_string_pretty(&report)?);
            Ok(ExitCode::SUCCESS)
        }
        Ok(report) => {
            emit(&table(&report));
            Ok(ExitCode::SUCCESS)
        }
        Err(err @ (BenchError::UnknownTool { .. } | BenchError::WritesNotAllowed { .. })) => {
            Err(UsageError(err.to_string()).into())
        }
        Err(err) => {
            eprintln!("mcp-client bench: {err}");
            Ok(ExitCode::FAILURE)
        }
    }
}

/// A bar on stderr when it is a terminal; hidden otherwise (logs and pipes stay clean).
fn progress_bar() -> indicatif::ProgressBar {
    if !std::io::stderr().is_terminal() {
        return indicatif::ProgressBar::hidden();
    }
    let bar = indicatif::ProgressBar::new(0);
    bar.set_draw_target(indicatif::ProgressDrawTarget::stderr());
    if let Ok(style) =
        indicatif::ProgressStyle::with_template("{msg:>10} [{bar:40}] {pos}/{len} ({per_sec})")
    {
        bar.set_style(style.progress_chars("=> "));
    }
    bar
}

/// The report as a human reads it.
fn table(report: &Report) -> String {
    let mut lines = vec![
        format!(
            "server   {} (protocol {})",
            report.server, report.protocol_version
        ),
        format!("request  {}", report.request),
        format!(
            "start    {} from {} to a started session",
            micros(report.start_ms * 1e3),
            if report.server_url.is_some() {
                "the first request"
            } else {
                "spawn"
            }
        ),
    ];
    if report.server_url.is_some() {
        lines.push(
            "memory   not measured: a remote server's process is not this run's (nor its CPU time)"
                .to_owned(),
        );
    } else if let Some(process) = &report.server_process {
        lines.push(format!(
            "memory   {:.1} MiB peak resident ({} process{}, pid {})",
            process.peak_rss_kib as f64 / 1024.0,
            process.processes,
            if process.processes == 1 { "" } else { "es" },
            process.pid
        ));
    }
    lines.push(String::new());
    lines.push(format!(
        "{:<10} {:>9} {:>8} {:>7} {:>10} {:>10} {:>10} {:>10} {:>9} {:>15}",
        "phase",
        "in flight",
        "calls",
        "errors",
        "p50",
        "p90",
        "p99",
        "max",
        "calls/s",
        "server CPU/call"
    ));
    lines.extend(report.phases.iter().map(row));
    lines.join("\n")
}

fn row(phase: &PhaseReport) -> String {
    format!(
        "{:<10} {:>9} {:>8} {:>7} {:>10} {:>10} {:>10} {:>10} {:>9.0} {:>15}",
        phase.name,
        phase.in_flight,
        phase.calls,
        phase.tool_errors,
        micros(phase.latency.p50_us),
        micros(phase.latency.p90_us),
        micros(phase.latency.p99_us),
        micros(phase.latency.max_us),
        phase.calls_per_second,
        phase
            .server_cpu_per_call_us
            .map_or_else(|| "n/a".to_owned(), micros)
    )
}

/// A duration in microseconds, in the unit that reads best.
fn micros(us: f64) -> String {
    if us < 1e3 {
        format!("{us:.1} µs")
    } else if us < 1e6 {
        format!("{:.2} ms", us / 1e3)
    } else {
        format!("{:.2} s", us / 1e6)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_read_in_the_unit_that_fits() {
        assert_eq!(micros(57.14), "57.1 µs");
        assert_eq!(micros(1_234.0), "1.23 ms");
        assert_eq!(micros(2_500_000.0), "2.50 s");
    }
}
