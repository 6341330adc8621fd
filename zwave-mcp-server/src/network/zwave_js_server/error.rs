//! Why a command sent to zwave-js-server got no result ([`ZwaveJsServerError`]), and whether it may have
//! been carried out all the same.

use std::time::Duration;

use super::protocol::{RELOAD, ServerFailure};

/// Why a command got no result.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ZwaveJsServerError {
    /// Not connected: nothing was sent.
    #[error(
        "cannot reach zwave-js-server at {url}: {why}; nothing was sent (is it running, with its WebSocket server on? check --zwave-js-url; reconnecting in the background)"
    )]
    Down {
        /// The server's URL.
        url: String,
        /// Why.
        why: String,
    },
    /// Too many commands wait to be written: this one was not sent.
    #[error(
        "`{command}` was not sent: {queued} commands are already waiting for zwave-js-server; try again in a moment"
    )]
    Busy {
        /// The command.
        command: String,
        /// The queue's size.
        queued: usize,
    },
    /// The connection dropped after the command was written.
    #[error(
        "the connection to zwave-js-server was lost before `{0}` was answered{after}",
        after = unanswered(.0)
    )]
    Lost(String),
    /// No result in time.
    #[error(
        "zwave-js-server did not answer `{command}` within {after:?}{}",
        unanswered(command)
    )]
    Timeout {
        /// The command.
        command: String,
        /// The limit.
        after: Duration,
    },
    /// The request it was for was cancelled before it was sent: nothing was sent.
    #[error("`{0}` was not sent: the request it was for was cancelled")]
    Cancelled(String),
    /// The server refused it.
    #[error("zwave-js-server refused `{command}`: {failure}")]
    Failed {
        /// The command.
        command: String,
        /// Its error code and message.
        failure: ServerFailure,
    },
}

/// Commands that change nothing (they read the driver's state, or ask a device to answer):
/// unanswered, they changed nothing.
const READS: [&str; 4] = ["node.get_state", "node.poll_value", "node.ping", RELOAD];

/// What the caller of an unanswered `command` must know: one that only reads changed
/// nothing; any other may have been carried out.
fn unanswered(command: &str) -> &'static str {
    if READS.contains(&command) {
        ""
    } else {
        "; it may have been carried out"
    }
}

impl ZwaveJsServerError {
    /// Whether the command was written and its result never came, so it may have been
    /// carried out (a read never changes anything).
    pub fn may_have_run(&self) -> bool {
        match self {
            Self::Lost(command) | Self::Timeout { command, .. } => {
                !READS.contains(&command.as_str())
            }
            Self::Down { .. } | Self::Busy { .. } | Self::Cancelled(_) | Self::Failed { .. } => {
                false
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_error_says_whether_the_command_may_have_run() {
        let said = |err: ZwaveJsServerError| err.to_string();
        assert_eq!(
            said(ZwaveJsServerError::Down {
                url: "ws://hub.local:3000".into(),
                why: "still connecting".into()
            }),
            "cannot reach zwave-js-server at ws://hub.local:3000: still connecting; nothing was sent (is it running, with its WebSocket server on? check --zwave-js-url; reconnecting in the background)"
        );
        assert_eq!(
            said(ZwaveJsServerError::Busy {
                command: "node.set_value".into(),
                queued: 64
            }),
            "`node.set_value` was not sent: 64 commands are already waiting for zwave-js-server; try again in a moment"
        );
        assert_eq!(
            said(ZwaveJsServerError::Lost("node.set_value".into())),
            "the connection to zwave-js-server was lost before `node.set_value` was answered; it may have been carried out"
        );
        assert_eq!(
            said(ZwaveJsServerError::Timeout {
                command: "node.set_value".into(),
                after: Duration::from_secs(5)
            }),
            "zwave-js-server did not answer `node.set_value` within 5s; it may have been carried out"
        );
        // A read that was not answered changed nothing, and does not say otherwise.
        assert_eq!(
            said(ZwaveJsServerError::Timeout {
                command: "node.get_state".into(),
                after: Duration::from_secs(5)
            }),
            "zwave-js-server did not answer `node.get_state` within 5s"
        );
        assert!(
            !ZwaveJsServerError::Lost("node.get_state".into()).may_have_run()
                && ZwaveJsServerError::Lost("node.set_value".into()).may_have_run()
        );
        assert_eq!(
            said(ZwaveJsServerError::Cancelled("node.set_value".into())),
            "`node.set_value` was not sent: the request it was for was cancelled"
        );
        assert_eq!(
            said(ZwaveJsServerError::Failed {
                command: "node.set_value".into(),
                failure: ServerFailure {
                    code: "zwave_error".into(),
                    message: "The node did not acknowledge the command (ZW0204)".into()
                }
            }),
            "zwave-js-server refused `node.set_value`: zwave_error: The node did not acknowledge the command (ZW0204)"
        );
    }
}
