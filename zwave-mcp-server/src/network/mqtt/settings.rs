//! How to reach the broker and the gateway ([`MqttSettings`], with the password kept out of
//! logs as a [`Secret`]) and how patiently to reconnect ([`RECONNECT_BACKOFF`]).

use std::{fmt, str::FromStr, time::Duration};

use common::Backoff;
use rumqttc::{MqttOptions, Transport};

use super::url::MqttUrl;

/// How to reach the broker and the gateway.
#[derive(Debug, Clone)]
pub struct MqttSettings {
    /// Broker address.
    pub url: MqttUrl,
    /// User name, when the broker needs one.
    pub username: Option<String>,
    /// Password, when the broker needs one.
    pub password: Option<Secret>,
    /// Our client id (must not be `ZWAVE_GATEWAY-<name>`).
    pub client_id: String,
    /// Z-Wave JS UI's topic prefix.
    pub topic_prefix: String,
    /// Z-Wave JS UI's gateway name.
    pub gateway_name: String,
    /// How long one API request may take.
    pub api_timeout: Duration,
    /// CA certificates (PEM) trusted for `mqtts://`; `None` trusts the system's roots.
    pub ca_pem: Option<Vec<u8>>,
}

impl MqttSettings {
    /// Settings for a broker at `url` with Z-Wave JS UI's defaults (prefix `zwave`, gateway
    /// `zwave-js-ui`, 5 s API timeout).
    pub fn new(url: MqttUrl) -> Self {
        Self {
            url,
            username: None,
            password: None,
            client_id: format!("zwave-mcp-server-{}", std::process::id()),
            topic_prefix: "zwave".into(),
            gateway_name: "zwave-js-ui".into(),
            api_timeout: Duration::from_secs(5),
            ca_pem: None,
        }
    }

    /// rumqttc options for a client `client_id` of this broker: address, credentials, TLS.
    pub fn mqtt_options(&self, client_id: &str) -> MqttOptions {
        let mut options = MqttOptions::new(client_id, self.url.host.clone(), self.url.port);
        options.set_keep_alive(Duration::from_secs(30));
        // Incoming: MQTT's own maximum, so no message under the prefix can make rumqttc drop
        // the connection (it cannot skip a packet over its limit: it would reconnect, get the
        // same retained message, and drop again, for good). What is too big to be one of Z-Wave
        // JS UI's messages is dropped when it arrives (`MAX_PAYLOAD`).
        options.set_max_packet_size(MQTT_MAX_PACKET, 1024 * 1024);
        if let Some(username) = &self.username {
            let password = self
                .password
                .as_ref()
                .map(|s| s.0.clone())
                .unwrap_or_default();
            options.set_credentials(username.clone(), password);
        }
        if self.url.tls {
            // One rustls provider for the process (ring: a small build, no cmake).
            let _ = rustls::crypto::ring::default_provider().install_default();
            options.set_transport(match &self.ca_pem {
                Some(ca) => Transport::tls(ca.clone(), None, None),
                None => Transport::tls_with_default_config(),
            });
        }
        options
    }

    /// `<prefix>/_EVENTS/ZWAVE_GATEWAY-<name>`: where the gateway publishes the driver's
    /// events when its "send events" setting is on.
    pub fn events_topic(&self) -> String {
        format!(
            "{}/_EVENTS/ZWAVE_GATEWAY-{}",
            self.topic_prefix, self.gateway_name
        )
    }

    /// `<prefix>/_CLIENTS/ZWAVE_GATEWAY-<name>`: where the gateway's own topics live.
    pub fn gateway_topic(&self) -> String {
        format!(
            "{}/_CLIENTS/ZWAVE_GATEWAY-{}",
            self.topic_prefix, self.gateway_name
        )
    }
}

/// The largest packet MQTT can carry (its remaining length's maximum, plus the fixed header).
pub const MQTT_MAX_PACKET: usize = 268_435_455 + 5;

/// The largest incoming payload taken; larger ones are dropped and logged. A full network's
/// `getNodes` reply is some 5 MB.
pub const MAX_PAYLOAD: usize = 16 * 1024 * 1024;

/// How the MQTT connection is retried: 250 ms after the first failure, doubling to 10 s, each
/// wait cut by up to a quarter at random so that servers that lost the broker together (it
/// restarted) do not all reconnect in the same instant.
pub const RECONNECT_BACKOFF: Backoff =
    Backoff::exponential(Duration::from_millis(250), Duration::from_secs(10)).with_jitter(0.25);

/// A secret string whose `Debug` output never shows the value.
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(pub String);

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Secret(***)")
    }
}

impl FromStr for Secret {
    type Err = std::convert::Infallible;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        Ok(Self(text.to_owned()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reconnection_waits_double_from_250_ms_to_10_s() {
        let exact = Backoff {
            jitter: 0.0,
            ..RECONNECT_BACKOFF
        };
        let waits: Vec<u128> = (0..=8).map(|n| exact.after(n).as_millis()).collect();
        assert_eq!(waits, [0, 250, 500, 1000, 2000, 4000, 8000, 10_000, 10_000]);
        assert_eq!(RECONNECT_BACKOFF.jitter, 0.25);
    }

    #[test]
    fn secret_debug_hides_the_value() {
        assert_eq!(format!("{:?}", Secret("hunter2".into())), "Secret(***)");
    }
}
