//! Logging: tracing to stderr, optionally also to a daily-rotating file. Never to stdout.
//!
//! Logging never holds up serving: every line goes through a bounded queue to a writer thread
//! of its own, and when the queue is full (a host that never reads our stderr fills the pipe)
//! lines are dropped and counted, and the count is logged at exit. Log files are the owner's
//! alone: the directory is created 0700 and files 0600 (they name devices and what was done).

use std::path::{Path, PathBuf};

use tracing_appender::non_blocking::{ErrorCounter, NonBlocking, NonBlockingBuilder, WorkerGuard};
use tracing_subscriber::{EnvFilter, Layer, layer::SubscriberExt, util::SubscriberInitExt};

/// Lines each writer may hold while its output is slow; more are dropped and counted.
const QUEUED_LINES: usize = 4096;

/// Keeps the writer threads alive; logs are flushed (for at most a second each) when it is
/// dropped, after a last line saying how many lines were dropped, if any.
#[must_use = "dropping the guard stops logging"]
pub struct LogGuard {
    dropped: Vec<(&'static str, ErrorCounter)>,
    _writers: Vec<WorkerGuard>,
}

impl Drop for LogGuard {
    fn drop(&mut self) {
        for (output, counter) in &self.dropped {
            let lines = counter.dropped_lines();
            if lines > 0 {
                tracing::warn!(
                    lines,
                    output,
                    "log lines were dropped: the output could not take them in time (is stderr read?)"
                );
            }
        }
    }
}

fn lossy(writer: impl std::io::Write + Send + 'static, name: &str) -> (NonBlocking, WorkerGuard) {
    NonBlockingBuilder::default()
        .lossy(true)
        .buffered_lines_limit(QUEUED_LINES)
        .thread_name(name)
        .finish(writer)
}

/// Why logging could not be set up.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum LoggingError {
    /// The filter does not parse.
    #[error(
        "invalid log filter `{filter}`: {reason} (use e.g. info, debug, or zwave_mcp_server=debug)"
    )]
    Filter {
        /// The filter given.
        filter: String,
        /// Why it does not parse.
        reason: String,
    },
    /// The log directory cannot be created.
    #[error("cannot create the log directory {path:?} (see --log-dir)")]
    LogDir {
        /// The directory.
        path: PathBuf,
        /// Why it failed.
        #[source]
        source: std::io::Error,
    },
}

/// Installs the global subscriber: `RUST_LOG` when set, else `level`; stderr always, and a
/// daily file `zwave-mcp-server.log.<date>` in `log_dir` when given.
///
/// # Errors
/// An invalid filter, or a log directory that cannot be created.
pub fn init(level: &str, log_dir: Option<&Path>) -> Result<LogGuard, LoggingError> {
    let filter_text = match std::env::var("RUST_LOG") {
        Ok(text) if !text.trim().is_empty() => text,
        // The embedded broker (demo, tests) logs every client disconnect as an error; problems
        // that matter surface as connection errors of our own client. RUST_LOG re-enables it.
        _ => format!("{level},rumqttd=off"),
    };
    let filter = |text: &str| {
        EnvFilter::builder()
            .parse(text)
            .map_err(|err| LoggingError::Filter {
                filter: text.to_owned(),
                reason: err.to_string(),
            })
    };
    // stdout is the MCP protocol: the writer must be stderr (fmt() defaults to stdout).
    let (stderr_writer, stderr_guard) = lossy(std::io::stderr(), "log-stderr");
    let mut dropped = vec![("stderr", stderr_writer.error_counter())];
    let mut writers = vec![stderr_guard];
    let stderr = tracing_subscriber::fmt::layer()
        .with_writer(stderr_writer)
        .with_ansi(false)
        .with_target(true)
        .with_filter(filter(&filter_text)?);
    let file = match log_dir {
        Some(dir) => {
            private_dir(dir).map_err(|source| LoggingError::LogDir {
                path: dir.to_owned(),
                source,
            })?;
            let appender = tracing_appender::rolling::daily(dir, "zwave-mcp-server.log");
            let (writer, guard) = lossy(appender, "log-file");
            dropped.push(("the log file", writer.error_counter()));
            writers.push(guard);
            Some(
                tracing_subscriber::fmt::layer()
                    .with_writer(writer)
                    .with_ansi(false)
                    .with_filter(filter(&filter_text)?),
            )
        }
        None => None,
    };
    // A second init (tests) keeps the first subscriber.
    let _ = tracing_subscriber::registry()
        .with(stderr)
        .with(file)
        .try_init();
    Ok(LogGuard {
        dropped,
        _writers: writers,
    })
}

/// Creates `dir` (0700) if needed, and makes every file this process creates from now on its
/// owner's alone (umask 077: the log files the appender creates, rotation after rotation).
#[cfg(unix)]
fn private_dir(dir: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::DirBuilderExt as _;
    rustix::process::umask(rustix::fs::Mode::from_raw_mode(0o077));
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
}

#[cfg(not(unix))]
fn private_dir(dir: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)
}
