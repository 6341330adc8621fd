//! `mcp-client bench`: how fast one MCP server answers and what it costs, measured through
//! the same [`ServerConnection`](crate::ServerConnection) a host uses, for a tool and arguments of the user's choice.
//!
//! A run has four phases:
//! 1. **start**: spawn (for a remote server, the first request) → the session started
//!    (plus `tools/list`, to check the tool exists);
//! 2. **warm-up**: calls that are not measured (the first one must succeed, or the run stops:
//!    timing a call that fails measures its error path, not the tool);
//! 3. **sequential**: one call in flight at a time; the latency of each;
//! 4. **concurrent** (when more than one is asked for): N calls in flight; throughput and the
//!    latency each call saw under that load.
//!
//! The process tree of a server the run started is read from `/proc` around each measured
//! phase (`usage`): its CPU time per call and its peak resident memory. A remote server
//! (Streamable HTTP) has no such figures: its process is not the run's.
//!
//! This module owns the measurement; `cli::bench` owns the command line, the progress bar and
//! the table.
//!
//! | module | owns |
//! |---|---|
//! | `plan` | [`Plan`], [`Request`], [`Progress`]: what to measure, what a display is told |
//! | `run` | [`run`]: the four phases against one server; [`BenchError`] |
//! | `report` | [`Report`] and its parts |
//! | `latency` | latencies and their percentiles |
//! | `usage` | the server's process tree from `/proc`: CPU time and peak memory |

pub mod latency;
mod plan;
mod report;
mod run;
pub mod usage;

pub use plan::{Plan, Progress, Request};
pub use report::{PhaseReport, ProcessReport, Report};
pub use run::{BenchError, run};
