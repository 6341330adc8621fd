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
    /// The HTTP token file could not be read.
    #[error("cannot read --http-token-file {path:?}")]
    HttpTokenFile {
        /// The file named by the flag.
        path: PathBuf,
        /// Why it could not be read.
        #[source]
        source: std::io::Error,
    },
    /// `--oauth-issuer` without the owner's key that approves clients.
    #[error(
        "--oauth-issuer needs the owner's key: give --http-token-file FILE (or ZWAVE_MCP_HTTP_TOKEN); the owner approves each client with it"
    )]
    OAuthWithoutOwnerKey,
    /// The CA for client metadata documents cannot be used.
    #[error("--oauth-client-metadata-ca {path}: {why}")]
    ClientMetadataCa {
        /// The file given.
        path: String,
        /// Why it cannot be used.
        why: String,
    },
    /// No state directory given, and no home to put the default in.
    #[error(
        "--oauth-issuer needs a state directory for its grants: give --state-dir DIR (neither XDG_STATE_HOME nor HOME is set)"
    )]
    NoStateDir,
    /// Both ways of giving the HTTP token were used.
    #[error("give the HTTP token either in ZWAVE_MCP_HTTP_TOKEN or in --http-token-file, not both")]
    TwoHttpTokens,
    /// The HTTP token is empty or too short to be a secret.
    #[error(
        "the HTTP token from {from} is {chars} characters long; a token needs at least {min} (e.g. `openssl rand -hex 32`)"
    )]
    WeakHttpToken {
        /// Where it came from.
        from: String,
        /// Its length.
        chars: usize,
        /// The shortest allowed.
        min: usize,
    },
    /// The owner's key has the shape of the access tokens the server issues.
    #[error(
        "the HTTP token from {from} starts with `zat1.`, the shape of the access tokens --oauth-issuer issues: choose another (e.g. `openssl rand -hex 32`)"
    )]
    HttpTokenLooksIssued {
        /// Where it came from.
        from: String,
    },
    /// A non-loopback address without a token: anyone on the network could switch the home.
    #[error(
        "--http {addr} is reachable from other machines, and no token is set: give --http-token-file FILE (or ZWAVE_MCP_HTTP_TOKEN), or bind to 127.0.0.1"
    )]
    HttpWithoutToken {
        /// The address.
        addr: std::net::SocketAddr,
    },
    /// An HTTP flag without `--http`.
    #[error("{flag} applies to the HTTP transport only: add --http ADDR:PORT")]
    HttpFlagWithoutHttp {
        /// The flag given.
        flag: &'static str,
    },
    /// The exposure file is not usable (the message names it and the rule at fault).
    #[error("{0}")]
    Exposure(String),
}
