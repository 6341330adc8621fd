//! What a run found: [`Report`], one [`PhaseReport`] per measured phase, the server's
//! [`ProcessReport`].

use serde::Serialize;

use super::latency::Summary;

/// The outcome of a run.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Report {
    /// The server's name and version, as it announced them.
    pub server: String,
    /// The protocol version agreed.
    pub protocol_version: String,
    /// What every call asked ("tools/call NAME" or "ping").
    pub request: String,
    /// Spawn (for a remote server: the first request) → the session started, in
    /// milliseconds.
    pub start_ms: f64,
    /// The measured phases, in the order they ran.
    pub phases: Vec<PhaseReport>,
    /// The server's process tree; absent for a remote server, or where `/proc` cannot be
    /// read.
    pub server_process: Option<ProcessReport>,
    /// The remote server's URL: its process is not this run's, so the report has no figures
    /// of it (`server_process` and every phase's `server_cpu_*` are absent). `None` for a
    /// server the run started.
    pub server_url: Option<String>,
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
    /// resolution is Linux's clock tick, 10 ms. Absent for a remote server.
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
