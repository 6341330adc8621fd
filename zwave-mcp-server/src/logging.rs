//! Logging: tracing to stderr, optionally also to a daily-rotating file. Never to stdout.

use std::path::{Path, PathBuf};

use tracing_appender::non_blocking::WorkerGuard;
use tracing_subscriber::{EnvFilter, Layer, layer::SubscriberExt, util::SubscriberInitExt};

/// Keeps the file writer's background thread alive; logs are flushed when it is dropped.
#[must_use = "dropping the guard stops file logging"]
pub struct LogGuard {
    _file: Option<WorkerGuard>,
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
    let stderr = tracing_subscriber::fmt::layer()
        .with_writer(std::io::stderr)
        .with_ansi(false)
        .with_target(true)
        .with_filter(filter(&filter_text)?);
    let (file, guard) = match log_dir {
        Some(dir) => {
            std::fs::create_dir_all(dir).map_err(|source| LoggingError::LogDir {
                path: dir.to_owned(),
                source,
            })?;
            let appender = tracing_appender::rolling::daily(dir, "zwave-mcp-server.log");
            let (writer, guard) = tracing_appender::non_blocking(appender);
            let layer = tracing_subscriber::fmt::layer()
                .with_writer(writer)
                .with_ansi(false)
                .with_filter(filter(&filter_text)?);
            (Some(layer), Some(guard))
        }
        None => (None, None),
    };
    // A second init (tests) keeps the first subscriber.
    let _ = tracing_subscriber::registry()
        .with(stderr)
        .with(file)
        .try_init();
    Ok(LogGuard { _file: guard })
}
