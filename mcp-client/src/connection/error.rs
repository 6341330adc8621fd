//! What can go wrong talking to a server: [`ClientError`], with [`Failure`] holding what is
//! known about the server's end (exit status, stderr tail, what to check).

use std::{fmt, time::Duration};

use crate::transport::Exit;

/// What went wrong talking to a server, with what is known about the server's end.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Failure {
    /// The server's name.
    pub server: String,
    /// What failed.
    pub reason: String,
    /// How the process ended, if it did.
    pub exit: Option<Exit>,
    /// The last lines of its stderr.
    pub stderr: Vec<String>,
    /// What to check.
    pub hint: Option<String>,
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "server `{}`: {}", self.server, self.reason)?;
        if let Some(exit) = &self.exit {
            write!(f, "\n  process: {exit}")?;
        }
        if !self.stderr.is_empty() {
            write!(f, "\n  stderr (last {} lines):", self.stderr.len())?;
            for line in &self.stderr {
                write!(f, "\n    {line}")?;
            }
        }
        if let Some(hint) = &self.hint {
            write!(f, "\n  check: {hint}")?;
        }
        Ok(())
    }
}

/// An error of the connection layer.
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum ClientError {
    /// Every connection attempt failed ("MCP connection failed after 3 attempts").
    #[error("MCP connection failed after {attempts} attempt{}: {failure}", if *.attempts == 1 { "" } else { "s" })]
    ConnectFailed {
        /// Attempts made.
        attempts: u32,
        /// The last attempt's failure.
        failure: Failure,
    },
    /// The server died while a request was in flight (or before it could be sent).
    #[error("MCP server died during `{method}`: {failure}")]
    ServerDied {
        /// The request.
        method: String,
        /// What is known about the death.
        failure: Failure,
    },
    /// A remote server could not be reached, or its answer broke off, during a request; the
    /// request is not sent again (the server may have run it).
    #[error("MCP server unreachable during `{method}`: {failure}")]
    Unreachable {
        /// The request.
        method: String,
        /// What the HTTP client saw, and what to check.
        failure: Failure,
    },
    /// A remote server answered 404 to a request of its session: it no longer knows the
    /// session (it restarted, or ended it), so it did not run the request. The next request
    /// starts a new session.
    #[error(
        "MCP server `{server}` no longer knows this session (HTTP 404: it restarted, or ended the session); `{method}` was not run, and the next request starts a new session"
    )]
    SessionExpired {
        /// The server.
        server: String,
        /// The request.
        method: String,
    },
    /// No answer in time; the request was cancelled with `notifications/cancelled`.
    #[error(
        "MCP server `{server}` did not answer `{method}` within {timeout:?}; the request was cancelled (see timeouts.call)"
    )]
    Timeout {
        /// The server.
        server: String,
        /// The request.
        method: String,
        /// The timeout.
        timeout: Duration,
    },
    /// The server crashed and is waiting to be restarted.
    #[error("MCP server `{server}` is down ({last}); restarting it in {retry_in:?}")]
    BackingOff {
        /// The server.
        server: String,
        /// Time until the next restart attempt.
        retry_in: Duration,
        /// Why it is down.
        last: String,
    },
    /// A connection attempt is under way; calls fail at once rather than queue behind it.
    #[error(
        "MCP server `{server}` is connecting, attempt {attempt} of {of}; try again in a moment"
    )]
    Connecting {
        /// The server.
        server: String,
        /// The attempt running now (1-based).
        attempt: u32,
        /// Attempts planned.
        of: u32,
    },
    /// The server answered with a JSON-RPC error.
    #[error("MCP server `{server}` refused `{method}`: {message}")]
    Refused {
        /// The server.
        server: String,
        /// The request.
        method: String,
        /// The server's error.
        message: String,
    },
    /// The server refused our credentials, or signing in failed: the connection does not try
    /// again by itself (each try could ask a person to sign in), until the host connects
    /// anew ([`ServerConnection::connect`](super::ServerConnection::connect)).
    #[error(
        "MCP server `{server}` is not authorized ({last}); nothing was sent: connect again once the credentials are fixed (the entry's `headers` or `oauth`)"
    )]
    NotAuthorized {
        /// The server.
        server: String,
        /// Why, as the last attempt or request said.
        last: String,
    },
    /// The server answered a call with questions for the person (protocol 2026-07-28's
    /// `InputRequiredResult`) that this host cannot answer, or kept asking beyond
    /// [`MAX_INPUT_ROUNDS`](crate::connection::MAX_INPUT_ROUNDS); the call was not finished.
    #[error("MCP server `{server}` did not finish `{method}`: {reason}")]
    Unfinished {
        /// The server.
        server: String,
        /// The request.
        method: String,
        /// Why not, and what it means.
        reason: String,
    },
    /// The request was not sent: the server does not offer it (its capabilities do not say
    /// so), or what it was given cannot be sent (an empty URI, a subscription past the
    /// bound).
    #[error("MCP server `{server}`: `{method}` was not sent: {reason}")]
    NotSent {
        /// The server.
        server: String,
        /// The request.
        method: String,
        /// Why not, and what would do.
        reason: String,
    },
    /// The connection was shut down (its host is stopping or stopped): it never starts the
    /// server again.
    #[error("MCP server `{server}` was shut down with its host; nothing was sent")]
    ShutDown {
        /// The server.
        server: String,
    },
}

impl ClientError {
    /// The error on one line for a model: what happened and how the process ended, without
    /// the server's stderr (that is for people: the host's log and `doctor` keep it).
    pub fn for_model(&self) -> String {
        let brief = |failure: &Failure| match &failure.exit {
            Some(exit) => format!("server `{}`: {} ({exit})", failure.server, failure.reason),
            None => format!("server `{}`: {}", failure.server, failure.reason),
        };
        match self {
            Self::ConnectFailed { attempts, failure } => format!(
                "MCP connection failed after {attempts} attempt{}: {}",
                if *attempts == 1 { "" } else { "s" },
                brief(failure)
            ),
            Self::ServerDied { method, failure } => {
                format!("MCP server died during `{method}`: {}", brief(failure))
            }
            Self::Unreachable { method, failure } => {
                format!(
                    "MCP server unreachable during `{method}`: {}",
                    brief(failure)
                )
            }
            other => other.to_string(),
        }
    }

    /// The last lines of the server's stderr, when the error is about its process.
    pub fn stderr(&self) -> &[String] {
        match self {
            Self::ConnectFailed { failure, .. } | Self::ServerDied { failure, .. } => {
                &failure.stderr
            }
            _ => &[],
        }
    }

    /// Whether the session it happened in is gone: the next request starts a new one.
    pub fn ends_session(&self) -> bool {
        matches!(
            self,
            Self::ServerDied { .. }
                | Self::Unreachable { .. }
                | Self::SessionExpired { .. }
                | Self::NotAuthorized { .. }
        )
    }

    /// Whether the same request may succeed later without anyone changing anything.
    pub fn is_retryable(&self) -> bool {
        matches!(
            self,
            Self::ServerDied { .. }
                | Self::Unreachable { .. }
                | Self::SessionExpired { .. }
                | Self::Timeout { .. }
                | Self::BackingOff { .. }
                | Self::Connecting { .. }
        )
    }
}
