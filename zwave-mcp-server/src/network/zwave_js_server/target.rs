//! Where zwave-js-server is ([`Target`]): a `ws://` or `wss://` URL, the TLS configuration
//! that checks a `wss://` server (the CA given, or the system's roots), and how patiently the
//! connection waits for a word from it. Not the connection itself (`connection`).

use std::{sync::Arc, time::Duration};

use super::url::{UrlError, ZwaveJsUrl};

/// How often a ping goes to zwave-js-server (its `ws` library answers each with a pong).
const PING_EVERY: Duration = Duration::from_secs(5);
/// How long zwave-js-server may send nothing at all, not a byte, not even a pong, before the
/// connection is taken for dead and made again: three pings unanswered. A stopped process
/// (SIGSTOP, a hung event loop) or a host gone without a word keeps TCP open for hours; the
/// MQTT backend has rumqttc's keep-alive (30 s) for this. Bytes count, not whole messages: a
/// large network's whole state may take longer than this to arrive. A frame the socket does
/// not take within it is as dead.
const SILENT_FOR: Duration = Duration::from_secs(15);

/// Where zwave-js-server is: `ws://host:port` or `wss://host:port` (then checked against the
/// CA given, or the system's roots).
#[derive(Clone)]
pub struct Target {
    pub(super) url: String,
    /// `host:port`, what TCP connects to.
    pub(super) authority: String,
    /// The host, without brackets: what a `wss://` server's certificate is checked against.
    pub(super) host: String,
    pub(super) tls: Option<Arc<rustls::ClientConfig>>,
    /// A ping every this long…
    pub(super) ping_every: Duration,
    /// …and the connection given up after this long without a word from the server.
    pub(super) silent_for: Duration,
}

/// Why a `--zwave-js-url` (and its CA) cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum TargetError {
    /// The URL is not a zwave-js-server address.
    #[error(transparent)]
    Url(#[from] UrlError),
    /// The CA file given for `wss://` holds no certificate rustls can use.
    #[error("the CA file holds no usable PEM certificate")]
    NoCertificate,
}

impl std::fmt::Debug for Target {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.url)
    }
}

impl Target {
    /// Reads `url`; for `wss://`, `ca_pem` (PEM certificates) replaces the system's roots.
    ///
    /// # Errors
    /// Not a `ws://` or `wss://` URL with a host, or a CA without a certificate.
    pub fn new(url: &str, ca_pem: Option<&[u8]>) -> Result<Self, TargetError> {
        Self::at(&url.parse()?, ca_pem)
    }

    /// zwave-js-server at `url`; for `wss://`, `ca_pem` (PEM certificates) replaces the
    /// system's roots.
    ///
    /// # Errors
    /// A CA without a certificate.
    pub fn at(url: &ZwaveJsUrl, ca_pem: Option<&[u8]>) -> Result<Self, TargetError> {
        Ok(Self {
            url: url.as_str().to_owned(),
            authority: url.authority().to_owned(),
            host: url.host().to_owned(),
            tls: if url.is_tls() {
                Some(Arc::new(tls_config(ca_pem)?))
            } else {
                None
            },
            ping_every: PING_EVERY,
            silent_for: SILENT_FOR,
        })
    }

    /// Pings every `ping_every` (not zero), and gives the connection up after `silent_for`
    /// without a word from the server; 5 s and 15 s unless told (tests tell shorter).
    #[must_use]
    pub fn with_liveness(mut self, ping_every: Duration, silent_for: Duration) -> Self {
        self.ping_every = ping_every;
        self.silent_for = silent_for;
        self
    }
}

/// A TLS client configuration trusting `ca_pem`, or the system's roots.
pub fn tls_config(ca_pem: Option<&[u8]>) -> Result<rustls::ClientConfig, TargetError> {
    use rustls::pki_types::{CertificateDer, pem::PemObject as _};
    let _ = rustls::crypto::ring::default_provider().install_default();
    let mut roots = rustls::RootCertStore::empty();
    match ca_pem {
        Some(pem) => {
            let certificates = CertificateDer::pem_slice_iter(pem).filter_map(Result::ok);
            let (usable, _) = roots.add_parsable_certificates(certificates);
            if usable == 0 {
                return Err(TargetError::NoCertificate);
            }
        }
        None => {
            let found = rustls_native_certs::load_native_certs();
            roots.add_parsable_certificates(found.certs);
        }
    }
    Ok(rustls::ClientConfig::builder()
        .with_root_certificates(roots)
        .with_no_client_auth())
}
