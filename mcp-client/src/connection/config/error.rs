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
    /// The top level is wrong.
    #[error("{path:?}: {problem}")]
    Shape {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        problem: String,
    },
}
