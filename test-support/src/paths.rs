//! Where things are: the workspace, its target directory, its built binaries and its
//! `fixtures/`.

use std::path::{Path, PathBuf};

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

/// Path of a file (or folder) under the workspace's `fixtures/`.
///
/// # Panics
/// When it does not exist.
pub fn fixture_path(name: &str) -> PathBuf {
    let path = workspace_root().join("fixtures").join(name);
    assert!(path.exists(), "fixture {} is missing", path.display());
    path
}

/// A fixture's text.
///
/// # Panics
/// When it cannot be read.
pub fn fixture_text(name: &str) -> String {
    let path = fixture_path(name);
    std::fs::read_to_string(&path)
        .unwrap_or_else(|err| panic!("cannot read fixture {}: {err}", path.display()))
}
