//! Starting a server: [`ServerCommand`] (program, arguments, environment, working directory)
//! and [`spawn`], which starts it in its own process group and returns its transport and
//! process.

use std::{collections::BTreeMap, path::PathBuf, process::Stdio, sync::Arc};

use tokio::{
    process::Command,
    sync::{Mutex, watch},
};

use super::{
    ChildTransport, DEFAULT_MAX_LINE, ReadStats, STDERR_LINE_CAP, STDERR_TAIL_LINES, ServerProcess,
    ServerProcesses, StderrTail, lines::LineReader, process, stderr,
};

/// How to start one server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerCommand {
    /// The server's name in logs and errors.
    pub name: String,
    /// Program to run (looked up on `PATH` when it has no `/`).
    pub command: String,
    /// Its arguments.
    pub args: Vec<String>,
    /// Extra environment variables (the host's environment is inherited).
    pub env: BTreeMap<String, String>,
    /// Working directory.
    pub cwd: Option<PathBuf>,
    /// Longest stdout line accepted.
    pub max_line: usize,
}

impl ServerCommand {
    /// `command args` named `name`, with the defaults.
    pub fn new(
        name: impl Into<String>,
        command: impl Into<String>,
        args: impl IntoIterator<Item = impl Into<String>>,
    ) -> Self {
        Self {
            name: name.into(),
            command: command.into(),
            args: args.into_iter().map(Into::into).collect(),
            env: BTreeMap::new(),
            cwd: None,
            max_line: DEFAULT_MAX_LINE,
        }
    }

    /// The command line as a person would type it.
    pub fn display(&self) -> String {
        std::iter::once(self.command.as_str())
            .chain(self.args.iter().map(String::as_str))
            .collect::<Vec<_>>()
            .join(" ")
    }
}

/// Why a server could not be started.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SpawnError {
    /// The program is not on `PATH`.
    #[error("command `{command}` not found (searched PATH={path})")]
    NotFound {
        /// The program.
        command: String,
        /// The `PATH` searched.
        path: String,
    },
    /// The program is a path, and there is nothing there that can run.
    #[error("command `{command}` {problem}")]
    NotRunnable {
        /// The program, as its path was resolved.
        command: String,
        /// What is there instead ("does not exist", "is a folder", "is not executable").
        problem: &'static str,
    },
    /// Any other failure to start it.
    #[error("cannot start `{command}`: {reason}")]
    Io {
        /// The command line.
        command: String,
        /// Why (part of the message, so not also chained as a source).
        reason: std::io::Error,
    },
}

impl SpawnError {
    /// Whether starting it again would fail the same way until someone changes something: the
    /// program is missing or cannot be run, the working directory is missing. Such a failure
    /// is not worth a retry.
    pub fn is_permanent(&self) -> bool {
        match self {
            Self::NotFound { .. } | Self::NotRunnable { .. } => true,
            Self::Io { reason, .. } => matches!(
                reason.kind(),
                std::io::ErrorKind::NotFound | std::io::ErrorKind::PermissionDenied
            ),
        }
    }
}

/// What is wrong with the program at `path`, if something visibly is (nothing there, a folder,
/// no execute permission). Checked before spawning: under the parent-death wrapper a missing
/// program would only show as the wrapper's exit status 127.
fn not_runnable(path: &std::path::Path) -> Option<&'static str> {
    use std::os::unix::fs::PermissionsExt as _;
    match std::fs::metadata(path) {
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => Some("does not exist"),
        Err(_) => None,
        Ok(meta) if meta.is_dir() => Some("is a folder, not a program"),
        Ok(meta) if meta.permissions().mode() & 0o111 == 0 => {
            Some("is not executable (no execute permission)")
        }
        Ok(_) => None,
    }
}

/// Starts the server described by `command`, registered in `processes` (so that the host can
/// stop it with the others when it is asked to stop).
///
/// # Errors
/// [`SpawnError`] when the program cannot be started.
pub fn spawn(
    command: &ServerCommand,
    processes: &ServerProcesses,
) -> Result<(ChildTransport, ServerProcess), SpawnError> {
    let path = command
        .env
        .get("PATH")
        .cloned()
        .or_else(|| std::env::var("PATH").ok())
        .unwrap_or_default();
    // Looked up here, not by the wrapper, so that a missing program stays a spawn error.
    let program =
        process::find_program(&command.command, &path).ok_or_else(|| SpawnError::NotFound {
            command: command.command.clone(),
            path: path.clone(),
        })?;
    let mut process = match process::parent_death_wrapper() {
        Some(setpriv) => {
            let mut wrapped = Command::new(setpriv);
            wrapped.args(["--pdeathsig", "KILL", "--"]).arg(&program);
            wrapped
        }
        None => Command::new(&program),
    };
    process
        .args(&command.args)
        .envs(&command.env)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .kill_on_drop(true);
    if let Some(cwd) = &command.cwd {
        // Checked first: the OS reports a missing directory as a missing program, which
        // would send the user looking at PATH.
        if !cwd.is_dir() {
            return Err(SpawnError::Io {
                command: command.display(),
                reason: std::io::Error::new(
                    std::io::ErrorKind::NotFound,
                    format!("its working directory {cwd:?} is not a directory"),
                ),
            });
        }
        process.current_dir(cwd);
    }
    // A relative path runs from the working directory the server gets.
    let at = match &command.cwd {
        Some(cwd) if program.is_relative() => cwd.join(&program),
        _ => program.clone(),
    };
    if let Some(problem) = not_runnable(&at) {
        return Err(SpawnError::NotRunnable {
            command: at.to_string_lossy().into_owned(),
            problem,
        });
    }
    let mut child = process.spawn().map_err(|source| {
        if source.kind() == std::io::ErrorKind::NotFound && !command.command.contains('/') {
            SpawnError::NotFound {
                command: command.command.clone(),
                path,
            }
        } else {
            SpawnError::Io {
                command: command.display(),
                reason: source,
            }
        }
    })?;
    let name: Arc<str> = Arc::from(command.name.as_str());
    let stdin = Arc::new(Mutex::new(child.stdin.take()));
    let stdout = child.stdout.take().ok_or_else(|| SpawnError::Io {
        command: command.display(),
        reason: std::io::Error::other("stdout was not captured"),
    })?;
    let tail = Arc::new(StderrTail::new(STDERR_TAIL_LINES, STDERR_LINE_CAP));
    let (drained_tx, drained) = watch::channel(false);
    if let Some(stderr) = child.stderr.take() {
        let (name, tail) = (Arc::clone(&name), Arc::clone(&tail));
        tokio::spawn(async move {
            stderr::drain(name, stderr, tail).await;
            let _ = drained_tx.send(true);
        });
    } else {
        let _ = drained_tx.send(true);
    }
    let stats = Arc::new(ReadStats::default());
    let transport = ChildTransport::new(
        Arc::clone(&name),
        Arc::clone(&stdin),
        LineReader::new(stdout, command.max_line),
        Arc::clone(&stats),
    );
    let process = ServerProcess::start(
        processes,
        name,
        command.display(),
        child,
        stdin,
        tail,
        drained,
        stats,
    );
    Ok((transport, process))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_program_that_cannot_start_is_named_with_its_cause_once() {
        // A working directory that does not exist: the process cannot be created at all.
        let mut command = ServerCommand::new("s", "true", Vec::<String>::new());
        command.cwd = Some("/nonexistent/dir".into());
        let Err(err) = spawn(&command, &ServerProcesses::new()) else {
            panic!("a server started in a missing directory");
        };
        assert_eq!(
            err.to_string(),
            "cannot start `true`: its working directory \"/nonexistent/dir\" is not a directory"
        );
        assert!(
            std::error::Error::source(&err).is_none(),
            "the cause would print twice"
        );
    }

    #[tokio::test]
    async fn a_path_to_nothing_runnable_is_named_before_anything_starts() {
        let folder = std::env::temp_dir();
        for (program, cwd, expected) in [
            (
                "/nonexistent/bin/server",
                None,
                "command `/nonexistent/bin/server` does not exist",
            ),
            (
                "./no-such-server-31",
                Some(folder.clone()),
                "/./no-such-server-31` does not exist",
            ),
            (
                folder.to_str().unwrap_or("/tmp"),
                None,
                "is a folder, not a program",
            ),
            (
                "/etc/passwd",
                None,
                "is not executable (no execute permission)",
            ),
        ] {
            let mut command = ServerCommand::new("s", program, Vec::<String>::new());
            command.cwd = cwd;
            let Err(err) = spawn(&command, &ServerProcesses::new()) else {
                panic!("{program} started");
            };
            assert!(err.to_string().ends_with(expected), "{err}");
            assert!(err.is_permanent(), "{err}");
        }
    }
}
