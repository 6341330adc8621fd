//! MCP conformance and interop testing.
//!
//! ```text
//! mcp-conformance ──spawn──▶ server under test (one process per check group)
//!   config:    flags → options (which revisions, the call that asks for input)
//!   session:   raw JSON-RPC lines in, every stdout byte judged
//!   stateless: 2026-07-28 over a session: `_meta` on every request, every result kept
//!   checks:    2025-11-25 (lifecycle, tools, errors, robustness, shutdown) and 2026-07-28
//!              (discover, wire, input required) → verdicts with evidence
//! ```
//!
//! # Layout
//! - [`config`]: `mcp-conformance`'s flags.
//! - [`options`]: what a run checks.
//! - [`session`]: a raw stdio session that records every stdout line that is not JSON-RPC.
//! - [`stateless`]: protocol 2026-07-28 over a session.
//! - [`checks`]: the suite and its report.
//!
//! The peers its tests run against and the Mosquitto broker come from the `test-support`
//! crate, shared with the other packages' tests.

pub mod checks;
pub mod config;
pub mod options;
pub mod session;
pub mod stateless;

pub use checks::{Report, Verdict, run, run_with};
pub use config::Config;
pub use options::{Options, Protocol, ToolCall};
