//! How to reach the broker and the gateway ([`MqttSettings`], with the password kept out of
//! logs as a [`Secret`]) and how patiently to reconnect ([`Backoff`]).

use std::{fmt, str::FromStr, time::Duration};

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
        options.set_max_packet_size(16 * 1024 * 1024, 1024 * 1024);
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

    /// `<prefix>/_CLIENTS/ZWAVE_GATEWAY-<name>`: where the gateway's own topics live.
    pub fn gateway_topic(&self) -> String {
        format!(
            "{}/_CLIENTS/ZWAVE_GATEWAY-{}",
            self.topic_prefix, self.gateway_name
        )
    }
}

/// Reconnection backoff: `first` after one failure, doubled after each further one, never more
/// than `max`, each wait cut by a random share of up to `jitter` (0 to 1) so that servers that
/// lost the broker together (it restarted) do not all reconnect in the same instant. The
/// client crate has the same type for its own waits; the two binaries share no library.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Backoff {
    /// The wait after the first failure.
    pub first: Duration,
    /// The longest wait.
    pub max: Duration,
    /// The largest share of a wait that may be cut at random (0: exact waits).
    pub jitter: f64,
}

impl Default for Backoff {
    /// 250 ms, doubling to 10 s, each cut by up to a quarter.
    fn default() -> Self {
        Self {
            first: Duration::from_millis(250),
            max: Duration::from_secs(10),
            jitter: 0.25,
        }
    }
}

impl Backoff {
    /// The wait after `failures` failures in a row: none after none.
    pub fn after(&self, failures: u32) -> Duration {
        if failures == 0 {
            return Duration::ZERO;
        }
        let full = self
            .first
            .saturating_mul(1 << (failures - 1).min(20))
            .min(self.max);
        let jitter = self.jitter.clamp(0.0, 1.0);
        if jitter > 0.0 {
            full.mul_f64(1.0 - jitter * random_share())
        } else {
            full
        }
    }
}

/// A random number in [0, 1): std's per-instance random hash keys, no generator to carry.
fn random_share() -> f64 {
    use std::hash::{BuildHasher as _, Hasher as _};
    let bits = std::hash::RandomState::new().build_hasher().finish() >> 11;
    bits as f64 / (1u64 << 53) as f64
}

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
    fn reconnection_waits_double_to_the_cap_and_jitter_only_shortens() {
        let exact = Backoff {
            jitter: 0.0,
            ..Backoff::default()
        };
        let waits: Vec<u128> = (0..=8).map(|n| exact.after(n).as_millis()).collect();
        assert_eq!(waits, [0, 250, 500, 1000, 2000, 4000, 8000, 10_000, 10_000]);
        let jittered = Backoff::default();
        let waits: Vec<Duration> = (0..200).map(|_| jittered.after(4)).collect();
        assert!(
            waits
                .iter()
                .all(|w| (Duration::from_millis(1500)..=Duration::from_secs(2)).contains(w)),
            "{waits:?}"
        );
        assert!(waits.iter().any(|w| *w != waits[0]), "no jitter: {waits:?}");
    }

    #[test]
    fn secret_debug_hides_the_value() {
        assert_eq!(format!("{:?}", Secret("hunter2".into())), "Secret(***)");
    }
}
