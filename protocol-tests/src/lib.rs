//! MCP conformance and interop testing.
//!
//! ```text
//! mcp-conformance ──spawn──▶ server under test (one process per check group)
//!   session: raw JSON-RPC lines in, every stdout byte judged
//!   checks:  lifecycle, tools, errors, robustness, shutdown → verdicts with evidence
//! ```
//!
//! # Layout
//! - [`session`]: a raw stdio session that records every stdout line that is not JSON-RPC.
//! - [`checks`]: the suite and its report.
//!
//! The peers its tests run against and the Mosquitto broker come from the `test-support`
//! crate, shared with the other packages' tests.

pub mod checks;
pub mod session;

pub use checks::{Report, Verdict, run};
