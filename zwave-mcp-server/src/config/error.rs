//! [`ConfigError`]: a configuration that parsed but cannot work (a file that cannot be read or
//! used, two passwords, a CA file for a plain-text URL). `main` exits 2 on it, as clap does on
//! a bad flag; every message names the flag at fault.

use std::path::PathBuf;

/// A configuration problem found after parsing.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ConfigError {
    /// The password file could not be read.
    #[error("cannot read --mqtt-password-file {path:?}")]
    PasswordFile {
        /// The file named by the flag.
        path: PathBuf,
        /// Why it could not be read.
        #[source]
        source: std::io::Error,
    },
    /// The CA file could not be read.
    #[error("cannot read {flag} {path:?}")]
    CaFile {
        /// The flag.
        flag: &'static str,
        /// The file named by the flag.
        path: PathBuf,
        /// Why it could not be read.
        #[source]
        source: std::io::Error,
    },
    /// The CA file holds no PEM certificate.
    #[error("{flag} {path:?} holds no PEM certificate (expected -----BEGIN CERTIFICATE-----)")]
    CaNotPem {
        /// The flag.
        flag: &'static str,
        /// The file named by the flag.
        path: PathBuf,
    },
    /// The CA file's certificates cannot be used.
    #[error(
        "{flag} {path:?} cannot be used: {reason} (give the PEM file of the CA that signed the {whose}'s certificate)"
    )]
    CaInvalid {
        /// The flag.
        flag: &'static str,
        /// The file named by the flag.
        path: PathBuf,
        /// Whose certificate the CA signed: the broker's or the server's.
        whose: &'static str,
        /// What is wrong with it.
        reason: String,
    },
    /// A CA file was given for a plain-text URL.
    #[error("{flag} {path:?} needs {needs} is {url}")]
    CaWithoutTls {
        /// The flag.
        flag: &'static str,
        /// The file named by the flag.
        path: PathBuf,
        /// What it needs, up to the URL flag.
        needs: &'static str,
        /// The plain-text URL.
        url: String,
    },
    /// Both ways of giving a password were used.
    #[error(
        "give the mqtt password either in ZWAVE_MCP_MQTT_PASSWORD or in --mqtt-password-file, not both"
    )]
    TwoPasswords,
    /// `--zwave-js-url` cannot be used: its TLS configuration cannot be built (the URL itself
    /// is refused where the flag is read).
    #[error("--zwave-js-url: {reason}")]
    ZwaveJsUrl {
        /// What is wrong.
        reason: String,
    },
    /// The exposure file is not usable (the message names it and the rule at fault).
    #[error("{0}")]
    Exposure(String),
}
