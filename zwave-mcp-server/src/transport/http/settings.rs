//! What the HTTP transport is told by the configuration: where to listen, the owner's key
//! ([`Token`], `auth`'s), the names and origins it answers, its bounds.

use std::{net::SocketAddr, time::Duration};

use crate::auth::Token;

/// The HTTP transport's settings.
#[derive(Debug, Clone)]
pub struct HttpSettings {
    /// Where to listen.
    pub addr: SocketAddr,
    /// The bearer token every request must carry; `None` only on loopback.
    pub token: Option<Token>,
    /// Host names (or host:port) accepted in the `Host` header besides the loopback ones and
    /// the bound address.
    pub extra_hosts: Vec<String>,
    /// Browser origins accepted besides the loopback ones.
    pub extra_origins: Vec<String>,
    /// The most sessions (2025-11-25 lifecycle) alive at once.
    pub max_sessions: usize,
    /// How long a session may go without a request before it ends.
    pub session_idle: Duration,
    /// This server as its own OAuth authorization server (`--oauth-issuer`).
    pub auth: Option<crate::auth::AuthSettings>,
}

impl HttpSettings {
    /// The `Host` values a request may carry: loopback names, the bound address (unless it is
    /// a wildcard), and the owner's.
    pub fn allowed_hosts(&self) -> Vec<String> {
        let mut hosts: Vec<String> = ["localhost", "127.0.0.1", "::1"]
            .into_iter()
            .map(str::to_owned)
            .collect();
        if !self.addr.ip().is_unspecified() && !self.addr.ip().is_loopback() {
            hosts.push(self.addr.ip().to_string());
        }
        hosts.extend(self.extra_hosts.iter().cloned());
        hosts
    }

    /// The `Origin` values a request may carry: pages served from loopback on any port, and
    /// the owner's.
    pub fn allowed_origins(&self) -> Vec<String> {
        let mut origins: Vec<String> = ["localhost", "127.0.0.1", "[::1]"]
            .into_iter()
            .flat_map(|host| [format!("http://{host}:*"), format!("https://{host}:*")])
            .collect();
        origins.extend(self.extra_origins.iter().cloned());
        origins
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_bound_address_and_the_owners_names_are_allowed_hosts() {
        let settings = HttpSettings {
            addr: "192.168.1.5:8123".parse().unwrap(),
            token: None,
            extra_hosts: vec!["home.example".to_owned()],
            extra_origins: vec![],
            max_sessions: 1,
            session_idle: Duration::from_secs(1),
            auth: None,
        };
        assert_eq!(
            settings.allowed_hosts(),
            [
                "localhost",
                "127.0.0.1",
                "::1",
                "192.168.1.5",
                "home.example"
            ]
        );
        let wildcard = HttpSettings {
            addr: "0.0.0.0:8123".parse().unwrap(),
            ..settings
        };
        assert!(
            !wildcard
                .allowed_hosts()
                .iter()
                .any(|host| host == "0.0.0.0")
        );
    }
}
