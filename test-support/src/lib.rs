//! What the workspace's tests share, and nothing a shipped binary links: this crate is only
//! ever a dev-dependency.
//!
//! # Layout
//! - [`paths`]: the workspace root, its target directory, its built binaries, `fixtures/`.
//! - [`child`]: running a child process to its end with a deadline (no unbounded reads).
//! - [`mosquitto`]: a real Mosquitto broker (installed from Debian when missing, as root),
//!   scratch directories, TLS files.
//! - [`peers`]: the third-party peers the interop tests run against (npm and PyPI packages,
//!   pinned, installed into `target/peers/` when missing; never skipped).

pub mod child;
pub mod mosquitto;
pub mod paths;
pub mod peers;

pub use paths::{fixture_path, fixture_text, target_dir, workspace_bin, workspace_root};
