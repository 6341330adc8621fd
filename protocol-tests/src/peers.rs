//! Third-party peers and our own binaries, found or installed on demand.
//!
//! The README's test command must work on a fresh machine, so a peer that is missing is
//! installed here, pinned, into `target/peers/` (outside the source tree, kept between runs),
//! under a file lock shared by every test process. A peer that cannot be had fails the test
//! with the command to run; it is never skipped.

use std::{
    fs::File,
    path::{Path, PathBuf},
    process::Command,
};

/// `@modelcontextprotocol/server-everything`, pinned: its tool names change between releases.
pub const SERVER_EVERYTHING: &str = "@modelcontextprotocol/server-everything@2026.8.31";

/// The workspace root.
pub fn workspace_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// The Cargo target directory the running test binary was built into.
pub fn target_dir() -> PathBuf {
    // Test executables live in <target>/<profile>/deps/.
    let exe = std::env::current_exe().expect("the test executable has a path");
    exe.ancestors()
        .nth(3)
        .map(Path::to_path_buf)
        .unwrap_or_else(|| workspace_root().join("target"))
}

/// A binary of this workspace, built next to the running test.
///
/// # Panics
/// When it has not been built: run `cargo build --workspace --bins` first.
pub fn workspace_bin(name: &str) -> PathBuf {
    let exe = std::env::current_exe().expect("the test executable has a path");
    let profile_dir = exe
        .parent()
        .and_then(Path::parent)
        .expect("tests run from <target>/<profile>/deps");
    let path = profile_dir.join(name);
    assert!(
        path.is_file(),
        "{} is missing: run `cargo build --workspace --bins` first (the README's test command does)",
        path.display()
    );
    path
}

/// The command line that starts server-everything on stdio, installing it when missing.
pub fn server_everything() -> (String, Vec<String>) {
    let dir = target_dir().join("peers").join("npm");
    let entry = dir.join("node_modules/@modelcontextprotocol/server-everything/dist/index.js");
    with_install_lock(&dir, || {
        if !entry.is_file() {
            eprintln!("installing {SERVER_EVERYTHING} into {}", dir.display());
            let status = Command::new("npm")
                .args([
                    "install",
                    "--no-audit",
                    "--no-fund",
                    "--loglevel=error",
                    "--prefix",
                ])
                .arg(&dir)
                .arg(SERVER_EVERYTHING)
                .status();
            assert!(
                status.is_ok_and(|s| s.success()) && entry.is_file(),
                "cannot install {SERVER_EVERYTHING}: run `npm install --prefix {} {SERVER_EVERYTHING}` (needs node and npm)",
                dir.display()
            );
        }
    });
    (
        "node".to_owned(),
        vec![entry.to_string_lossy().into_owned(), "stdio".to_owned()],
    )
}

/// Runs `install` holding an exclusive lock on `<dir>.lock`, so concurrent test processes
/// install once.
fn with_install_lock(dir: &Path, install: impl FnOnce()) {
    std::fs::create_dir_all(dir)
        .unwrap_or_else(|err| panic!("cannot create {}: {err}", dir.display()));
    let lock_path = dir.with_extension("lock");
    let lock = File::create(&lock_path)
        .unwrap_or_else(|err| panic!("cannot create {}: {err}", lock_path.display()));
    lock.lock()
        .unwrap_or_else(|err| panic!("cannot lock {}: {err}", lock_path.display()));
    install();
    let _ = lock.unlock();
}
