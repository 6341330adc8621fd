//! The broker's address: `mqtt://host:port` or `mqtts://host:port`, parsed and printed.

use std::{fmt, str::FromStr};

/// A broker address parsed from `mqtt://host:port` or `mqtts://host:port`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MqttUrl {
    /// Host name or IP address.
    pub host: String,
    /// TCP port (1883 for mqtt://, 8883 for mqtts:// when omitted).
    pub port: u16,
    /// Whether the URL asked for TLS (`mqtts://`).
    pub tls: bool,
}

impl FromStr for MqttUrl {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let (tls, rest) = if let Some(rest) = text.strip_prefix("mqtt://") {
            (false, rest)
        } else if let Some(rest) = text.strip_prefix("mqtts://") {
            (true, rest)
        } else if let Some(rest) = text.strip_prefix("tcp://") {
            (false, rest)
        } else {
            return Err(format!(
                "`{text}` is not an MQTT URL: use mqtt://host:port or mqtts://host:port"
            ));
        };
        let rest = rest.trim_end_matches('/');
        let default_port = if tls { 8883 } else { 1883 };
        let (host, port) = match rest.rsplit_once(':') {
            Some((host, port)) if !host.ends_with(']') || host.starts_with('[') => {
                let port = port.parse::<u16>().map_err(|_| {
                    format!("`{port}` in `{text}` is not a port number (1 to 65535)")
                })?;
                (host, port)
            }
            _ => (rest, default_port),
        };
        let host = host.trim_start_matches('[').trim_end_matches(']');
        if host.is_empty() || host.contains('/') || host.contains('@') {
            return Err(format!(
                "`{text}` has no usable host: use mqtt://host:port (credentials go in --mqtt-username and ZWAVE_MCP_MQTT_PASSWORD)"
            ));
        }
        if port == 0 {
            return Err(format!(
                "port 0 in `{text}` is not a port number (1 to 65535)"
            ));
        }
        Ok(Self {
            host: host.to_owned(),
            port,
            tls,
        })
    }
}

impl fmt::Display for MqttUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let scheme = if self.tls { "mqtts" } else { "mqtt" };
        if self.host.contains(':') {
            write!(f, "{scheme}://[{}]:{}", self.host, self.port)
        } else {
            write!(f, "{scheme}://{}:{}", self.host, self.port)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mqtt_url_parses_host_port_and_scheme() {
        let url: MqttUrl = "mqtt://broker.local:1884".parse().unwrap();
        assert_eq!(
            url,
            MqttUrl {
                host: "broker.local".into(),
                port: 1884,
                tls: false
            }
        );
        let url: MqttUrl = "mqtts://10.0.0.2".parse().unwrap();
        assert_eq!(
            url,
            MqttUrl {
                host: "10.0.0.2".into(),
                port: 8883,
                tls: true
            }
        );
        let url: MqttUrl = "mqtt://[::1]:1883".parse().unwrap();
        assert_eq!(url.host, "::1");
        assert_eq!(url.to_string(), "mqtt://[::1]:1883");
    }

    #[test]
    fn mqtt_url_rejects_other_schemes_and_bad_ports() {
        let err = "http://x:1".parse::<MqttUrl>().unwrap_err();
        assert_eq!(
            err,
            "`http://x:1` is not an MQTT URL: use mqtt://host:port or mqtts://host:port"
        );
        let err = "mqtt://x:99999".parse::<MqttUrl>().unwrap_err();
        assert_eq!(
            err,
            "`99999` in `mqtt://x:99999` is not a port number (1 to 65535)"
        );
        let err = "mqtt://user:pw@x:1883".parse::<MqttUrl>().unwrap_err();
        assert!(
            err.starts_with("`mqtt://user:pw@x:1883` has no usable host"),
            "{err}"
        );
    }
}
