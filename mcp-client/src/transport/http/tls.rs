//! [`ready`]: rustls made usable before any reqwest client is built. reqwest is built without
//! a crypto provider of its own (`rustls-no-provider`); ring is the workspace's.

/// Installs ring as the process's rustls provider, unless one is installed already.
pub(super) fn ready() {
    let _ = rustls::crypto::ring::default_provider().install_default();
}
