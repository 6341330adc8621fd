//! What the workspace's tests share, and nothing a shipped binary links: this crate is only
//! ever a dev-dependency.
//!
//! # Layout
//! - [`paths`]: the workspace root, its target directory, its built binaries, `fixtures/`.
//! - [`browser`]: Debian's Chromium under Debian's ChromeDriver, for the server's pages.
//! - [`debian`]: Debian's packages a test needs, installed when missing (as root).
//! - [`child`]: running a child process to its end with a deadline (no unbounded reads).
//! - [`daemon`]: a server process a test owns: logged, awaited on its port, killed with it.
//! - [`mosquitto`]: a real Mosquitto broker (installed from Debian when missing, as root),
//!   scratch directories, TLS files.
//! - [`peers`]: the third-party peers the interop tests run against (npm and PyPI packages,
//!   pinned, installed into `target/peers/` when missing, or into a per-machine cache when
//!   slow to install; never skipped).
//! - [`proxy`]: a loopback HTTP proxy adding a header (a bearer token) for peers that cannot.
//! - [`zwave_js`]: the real zwave-js driver behind the real zwave-js-server, on the mock
//!   controller with the lab's simulated network.
//! - [`llm`]: real model servers on loopback (llama-cpp-python's server with SmolLM2, the
//!   LiteLLM proxy), for the agent's tests.

pub mod browser;
pub mod child;
pub mod daemon;
pub mod debian;
pub mod llm;
pub mod mosquitto;
pub mod paths;
pub mod peers;
pub mod proxy;
pub mod zwave_js;

pub use paths::{fixture_path, fixture_text, target_dir, workspace_bin, workspace_root};
