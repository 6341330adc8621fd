//! What the HTTP transport is told by the configuration: where to listen, the token, the
//! names and origins it answers, its bounds; and the token itself, which never prints.

use std::{fmt, net::SocketAddr, time::Duration};

use subtle::ConstantTimeEq as _;

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

/// The shortest token accepted: 16 characters (e.g. 8 random bytes in hex) is the floor; the
/// README suggests 32 random bytes.
pub const MIN_TOKEN_CHARS: usize = 16;

/// A bearer token. Its `Debug` hides it; it is compared in constant time.
#[derive(Clone)]
pub struct Token(String);

impl Token {
    /// The token `text` (its first line, trimmed), if it is long enough; else its length.
    ///
    /// # Errors
    /// The number of characters it has, when fewer than [`MIN_TOKEN_CHARS`].
    pub fn new(text: &str) -> Result<Self, usize> {
        let token = text.lines().next().unwrap_or_default().trim();
        let chars = token.chars().count();
        if chars < MIN_TOKEN_CHARS {
            return Err(chars);
        }
        Ok(Self(token.to_owned()))
    }

    /// Whether an `Authorization` header's value carries this token (scheme `Bearer`, in any
    /// case). The comparison takes as long whatever prefix of the token is right.
    pub fn admits(&self, authorization: &[u8]) -> bool {
        let Some(credentials) = authorization
            .get(..7)
            .filter(|scheme| scheme.eq_ignore_ascii_case(b"bearer "))
            .and_then(|_| authorization.get(7..))
        else {
            return false;
        };
        bool::from(credentials.ct_eq(self.0.as_bytes()))
    }
}

impl fmt::Debug for Token {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Token(***)")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_token_admits_only_its_own_bearer_header() {
        let token = Token::new("0123456789abcdef0123\n").unwrap();
        assert!(token.admits(b"Bearer 0123456789abcdef0123"));
        assert!(token.admits(b"bearer 0123456789abcdef0123"));
        assert!(!token.admits(b"Bearer 0123456789abcdef012"));
        assert!(!token.admits(b"Bearer 0123456789abcdef01234"));
        assert!(!token.admits(b"Basic 0123456789abcdef0123"));
        assert!(!token.admits(b"0123456789abcdef0123"));
        assert!(!token.admits(b"Bearer"));
        assert!(!token.admits(b""));
        assert_eq!(format!("{token:?}"), "Token(***)");
    }

    #[test]
    fn a_short_token_is_refused_with_its_length() {
        assert_eq!(Token::new("secret").err(), Some(6));
        assert_eq!(Token::new("  \n0123456789abcdef").err(), Some(0));
    }

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
