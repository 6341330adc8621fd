//! zwave-js-server's address: `ws://host:port` or `wss://host:port`, parsed where the flag is
//! read (as [`crate::network::MqttUrl`] is for the broker) and printed as it was given.

use std::{fmt, str::FromStr};

/// A zwave-js-server address parsed from `ws://host:port` or `wss://host:port` (port 80 or
/// 443 when omitted; a path is kept in the URL and left out of the authority).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ZwaveJsUrl {
    /// The URL as given.
    text: String,
    /// Whether it asked for TLS (`wss://`).
    tls: bool,
    /// Host name or IP address, without an IPv6 literal's brackets.
    host: String,
    /// `host:port`, an IPv6 host in brackets.
    authority: String,
}

impl ZwaveJsUrl {
    /// Whether the URL asked for TLS (`wss://`).
    pub fn is_tls(&self) -> bool {
        self.tls
    }

    /// The host name or IP address (the name a `wss://` certificate must bear).
    pub fn host(&self) -> &str {
        &self.host
    }

    /// `host:port`, the address to connect to.
    pub fn authority(&self) -> &str {
        &self.authority
    }

    /// The URL as given.
    pub fn as_str(&self) -> &str {
        &self.text
    }
}

/// Why a text is not a zwave-js-server address.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum UrlError {
    /// Neither `ws://` nor `wss://`.
    #[error(
        "{url:?} is not a WebSocket URL: expected ws://host:port or wss://host:port (zwave-js-server listens on 3000)"
    )]
    NotWebSocket {
        /// The URL given.
        url: String,
    },
    /// No host, or a port that is no port.
    #[error("{url:?} has no usable host and port: expected e.g. ws://192.168.1.10:3000")]
    NoHostPort {
        /// The URL given.
        url: String,
    },
}

impl FromStr for ZwaveJsUrl {
    type Err = UrlError;

    fn from_str(url: &str) -> Result<Self, Self::Err> {
        let (tls, rest) = if let Some(rest) = url.strip_prefix("ws://") {
            (false, rest)
        } else if let Some(rest) = url.strip_prefix("wss://") {
            (true, rest)
        } else {
            return Err(UrlError::NotWebSocket {
                url: url.to_owned(),
            });
        };
        let authority = rest.split('/').next().unwrap_or_default();
        let (host, port) = match authority.rsplit_once(':') {
            Some((host, port)) if !port.is_empty() => (host, port),
            _ => (authority, if tls { "443" } else { "80" }),
        };
        if host.is_empty() || port.parse::<u16>().is_err() {
            return Err(UrlError::NoHostPort {
                url: url.to_owned(),
            });
        }
        let host = host
            .trim_start_matches('[')
            .trim_end_matches(']')
            .to_owned();
        Ok(Self {
            text: url.to_owned(),
            tls,
            authority: if host.contains(':') {
                format!("[{host}]:{port}")
            } else {
                format!("{host}:{port}")
            },
            host,
        })
    }
}

impl fmt::Display for ZwaveJsUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_zwave_js_url_gives_host_authority_and_tls_and_prints_as_given() {
        let url: ZwaveJsUrl = "wss://[::1]:3000/".parse().unwrap();
        assert!(url.is_tls());
        assert_eq!((url.host(), url.authority()), ("::1", "[::1]:3000"));
        assert_eq!(url.to_string(), "wss://[::1]:3000/");
        let url: ZwaveJsUrl = "ws://hub".parse().unwrap();
        assert!(!url.is_tls());
        assert_eq!((url.host(), url.authority()), ("hub", "hub:80"));
    }

    #[test]
    fn a_url_that_cannot_work_is_refused_with_an_example() {
        assert_eq!(
            "http://hub:3000"
                .parse::<ZwaveJsUrl>()
                .unwrap_err()
                .to_string(),
            "\"http://hub:3000\" is not a WebSocket URL: expected ws://host:port or wss://host:port (zwave-js-server listens on 3000)"
        );
        assert_eq!(
            "ws://:3000".parse::<ZwaveJsUrl>().unwrap_err().to_string(),
            "\"ws://:3000\" has no usable host and port: expected e.g. ws://192.168.1.10:3000"
        );
        assert!("ws://hub:99999".parse::<ZwaveJsUrl>().is_err());
    }
}
