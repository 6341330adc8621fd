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
//! - [`mosquitto`]: a real Mosquitto broker for tests (installed from Debian when missing).
//! - [`peers`]: locating our binaries and installing the third-party peers the tests run
//!   against (npm and PyPI packages, pinned, into `target/peers/`).

pub mod checks;
pub mod mosquitto;
pub mod peers;
pub mod session;

pub use checks::{Report, Verdict, run};
