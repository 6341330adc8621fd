//! [`ConfigError`]: what is wrong with a configuration file, naming the file, the server and
//! the key.

use std::path::PathBuf;

/// A configuration problem, naming where it is.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ConfigError {
    /// The file could not be read.
    #[error("cannot read {path:?}: {reason}")]
    Read {
        /// The file.
        path: PathBuf,
        /// Why (part of the message, so not also chained as a source).
        reason: std::io::Error,
    },
    /// The file is larger than a configuration file may be
    /// ([`MAX_CONFIG_BYTES`](super::MAX_CONFIG_BYTES)).
    #[error(
        "{path:?} is {}the {} a configuration file may be: is it the right file?",
        over(*.size),
        bytes(*.cap)
    )]
    TooLarge {
        /// The file.
        path: PathBuf,
        /// Its size, when the system knows it (not for a pipe).
        size: Option<u64>,
        /// The most a configuration file may be.
        cap: u64,
    },
    /// The file is not JSON.
    #[error("{path:?} is not valid JSON: {reason}")]
    Json {
        /// The file.
        path: PathBuf,
        /// The parser's message.
        reason: String,
    },
    /// A key has a wrong value.
    #[error("{path:?}: server `{server}`: `{key}` {problem}")]
    Key {
        /// The file.
        path: PathBuf,
        /// The server.
        server: String,
        /// The key, dotted for nested keys.
        key: String,
        /// What is wrong and what would be valid.
        problem: String,
    },
    /// A server's entry as a whole is wrong.
    #[error("{path:?}: server `{server}`: {problem}")]
    Entry {
        /// The file.
        path: PathBuf,
        /// The server.
        server: String,
        /// What is wrong and what would be valid.
        problem: String,
    },
    /// `llm.provider` names no API this client speaks.
    #[error("the config's llm.provider is `{name}`: use ollama, openai or anthropic")]
    UnknownProvider {
        /// The file.
        path: PathBuf,
        /// The name it gives.
        name: String,
    },
    /// The top level is wrong.
    #[error("{path:?}: {problem}")]
    Shape {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        problem: String,
    },
}

/// A problem with one key of a server's entry: (dotted key path, what is wrong and what would
/// be valid); the file and the server are added where it is reported.
pub(super) type KeyError = (String, String);

/// "1048576 bytes (1.0 MiB)".
fn bytes(size: u64) -> String {
    format!("{size} bytes ({:.1} MiB)", size as f64 / (1024.0 * 1024.0))
}

/// "231735296 bytes (221.0 MiB), more than ", or "more than " when the size is unknown.
fn over(size: Option<u64>) -> String {
    match size {
        Some(size) => format!("{}, more than ", bytes(size)),
        None => "more than ".to_owned(),
    }
}
