//! Logging: tracing to stderr, optionally also to a daily-rotating file. Never to stdout.
//!
//! Logging never holds up serving: every line goes through a bounded queue to a writer thread
//! of its own, and when the queue is full (a host that never reads our stderr fills the pipe)
//! lines are dropped and counted, and the count is logged at exit. Log files are the owner's
//! alone: the directory is created 0700 and files 0600 (they name devices and what was done).
//! One event is one line: a newline or other control character inside a field or message
//! (text from Z-Wave JS reaches logs) is escaped, so no text can forge a log line.

use std::path::{Path, PathBuf};

use tracing_subscriber::{EnvFilter, Layer, layer::SubscriberExt, util::SubscriberInitExt};

mod queue;

use queue::{QueueGuard, queued};

/// Lines each writer may hold while its output is slow; more are dropped and counted.
const QUEUED_LINES: usize = 4096;

/// Keeps the writer threads alive; logs are flushed (for at most a second each) when it is
/// dropped, after a last line saying how many lines were dropped, if any.
#[must_use = "dropping the guard stops logging"]
pub struct LogGuard {
    writers: Vec<(&'static str, QueueGuard)>,
}

impl Drop for LogGuard {
    fn drop(&mut self) {
        for (output, writer) in &self.writers {
            let lines = writer.dropped();
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

/// Writes each formatted event (one `write` call, ending in its newline) as one line: control
/// and layout characters before that newline are escaped.
struct OneLine<W>(W);

impl<W: std::io::Write> std::io::Write for OneLine<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let body = buf.strip_suffix(b"\n").unwrap_or(buf);
        let text = String::from_utf8_lossy(body);
        match crate::network::text::clean(&text, usize::MAX) {
            std::borrow::Cow::Borrowed(_) => self.0.write_all(buf)?,
            std::borrow::Cow::Owned(escaped) => {
                let mut line = escaped.into_bytes();
                line.extend_from_slice(&buf[body.len()..]);
                self.0.write_all(&line)?;
            }
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.0.flush()
    }
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
    /// A log writer thread cannot be started.
    #[error("cannot start a logging thread")]
    Thread {
        /// Why.
        #[source]
        source: std::io::Error,
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
        // rmcp logs every session's start (the client's whole initialize request) and every
        // notification at info: below our own lines, unless the level asks for debug.
        _ if level.trim().eq_ignore_ascii_case("info") => format!("{level},rumqttd=off,rmcp=warn"),
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
    let (stderr_writer, stderr_guard) = queued(std::io::stderr(), QUEUED_LINES, "log-stderr")
        .map_err(|source| LoggingError::Thread { source })?;
    let mut writers = vec![("stderr", stderr_guard)];
    let stderr = tracing_subscriber::fmt::layer()
        .with_writer(move || OneLine(stderr_writer.clone()))
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
            let (writer, guard) = queued(appender, QUEUED_LINES, "log-file")
                .map_err(|source| LoggingError::Thread { source })?;
            writers.push(("the log file", guard));
            Some(
                tracing_subscriber::fmt::layer()
                    .with_writer(move || OneLine(writer.clone()))
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
    Ok(LogGuard { writers })
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

#[cfg(test)]
mod tests {
    use std::{
        io::Write as _,
        sync::{Arc, Mutex},
    };

    use tracing_subscriber::layer::SubscriberExt as _;

    use super::*;

    #[derive(Clone, Default)]
    struct Captured(Arc<Mutex<Vec<u8>>>);

    impl std::io::Write for Captured {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .extend_from_slice(buf);
            Ok(buf.len())
        }

        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn setup_errors_say_what_failed_and_the_knob() {
        assert_eq!(
            LoggingError::Thread {
                source: std::io::Error::other("no threads")
            }
            .to_string(),
            "cannot start a logging thread"
        );
        assert_eq!(
            LoggingError::LogDir {
                path: "/nope".into(),
                source: std::io::Error::other("read-only")
            }
            .to_string(),
            "cannot create the log directory \"/nope\" (see --log-dir)"
        );
    }

    #[test]
    fn a_message_with_a_newline_cannot_forge_a_log_line() {
        let captured = Captured::default();
        let sink = captured.clone();
        let subscriber = tracing_subscriber::registry().with(
            tracing_subscriber::fmt::layer()
                .with_writer(move || OneLine(sink.clone()))
                .with_ansi(false),
        );
        let forged = "rejected\n2026-11-24T18:31:02Z  INFO zwave_mcp_server::mcp::tools: writing value device=\"Front Door Lock\"";
        tracing::subscriber::with_default(subscriber, || {
            tracing::warn!(error = %forged, "zwave-js-ui said no");
            tracing::info!("next");
        });
        let text = String::from_utf8(captured.0.lock().unwrap().clone()).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 2, "{text}");
        assert!(
            lines[0].ends_with("zwave-js-ui said no error=rejected\\n2026-11-24T18:31:02Z  INFO zwave_mcp_server::mcp::tools: writing value device=\"Front Door Lock\""),
            "{}",
            lines[0]
        );
        assert!(lines[1].ends_with("next"));
        let mut plain = OneLine(Vec::new());
        plain.write_all(b"one line\n").unwrap();
        assert_eq!(plain.0, b"one line\n");
    }
}
