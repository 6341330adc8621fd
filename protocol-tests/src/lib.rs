//! MCP conformance and interop testing.
//!
//! # Layout
//! - [`peers`]: locating our binaries and installing the third-party peers the tests run
//!   against (npm and PyPI packages, pinned, into `target/peers/`).

pub mod peers;
