//! A TLS acceptor for a test's own server, with a certificate for 127.0.0.1 and localhost
//! signed by a test CA (`test_support::mosquitto::TlsFiles`).

use std::sync::Arc;

use rustls::pki_types::{CertificateDer, PrivateKeyDer, pem::PemObject as _};
use test_support::mosquitto::{ScratchDir, TlsFiles};

/// The acceptor, the files (their CA is what a client must trust) and their folder (kept as
/// long as they are used).
pub fn tls_acceptor(name: &str) -> (tokio_rustls::TlsAcceptor, TlsFiles, ScratchDir) {
    let dir = ScratchDir::new();
    let files = TlsFiles::generate(dir.path(), name);
    let _ = rustls::crypto::ring::default_provider().install_default();
    let certs: Vec<CertificateDer<'static>> = CertificateDer::pem_file_iter(&files.cert)
        .unwrap()
        .map(Result::unwrap)
        .collect();
    let key = PrivateKeyDer::from_pem_file(&files.key).unwrap();
    let config = rustls::ServerConfig::builder()
        .with_no_client_auth()
        .with_single_cert(certs, key)
        .unwrap();
    (
        tokio_rustls::TlsAcceptor::from(Arc::new(config)),
        files,
        dir,
    )
}
