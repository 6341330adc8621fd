//! Command-line and environment configuration of the server (clap derive).
//!
//! Every flag can also be set through a `ZWAVE_MCP_*` environment variable, because MCP hosts
//! start servers with an `env` block rather than a shell.

use std::{path::PathBuf, time::Duration};

use clap::Parser;

use crate::{
    devices::{Exposure, Rule, Rules},
    gateway::zwave_js::client::Target,
    gateway::{MqttSettings, MqttUrl, Secret},
    sim::{PayloadType, TopicType},
};

/// Environment variable holding the MQTT password.
pub const PASSWORD_ENV: &str = "ZWAVE_MCP_MQTT_PASSWORD";

/// Configuration of `zwave-mcp-server`, parsed once in `main`.
#[derive(Debug, Clone, Parser)]
#[command(
    name = "zwave-mcp-server",
    version,
    about = "MCP stdio server that lists, reads and controls Z-Wave devices through Z-Wave JS (Z-Wave JS UI's MQTT gateway, or zwave-js-server)",
    long_about = "MCP stdio server that lists, reads and controls Z-Wave devices through Z-Wave JS: \
                  Z-Wave JS UI's MQTT gateway (--mqtt-url), or zwave-js-server's WebSocket API \
                  (--zwave-js-url; Home Assistant's Z-Wave JS add-on).\n\nstdout carries only newline-delimited JSON-RPC; logs go to stderr \
                  (and optionally to a daily log file). Run with --demo to try it against a built-in \
                  simulated home."
)]
pub struct Config {
    /// What to run (default: the MCP server).
    #[command(subcommand)]
    pub command: Option<Command>,

    /// MQTT broker that Z-Wave JS UI publishes to: mqtt://host:port (mqtts:// for TLS).
    #[arg(
        long,
        global = true,
        env = "ZWAVE_MCP_MQTT_URL",
        default_value = "mqtt://127.0.0.1:1883"
    )]
    pub mqtt_url: MqttUrl,

    /// zwave-js-server's WebSocket API instead of the MQTT gateway: ws://host:3000 (wss:// for
    /// TLS). Home Assistant's Z-Wave JS add-on serves it on port 3000; in Z-Wave JS UI it is
    /// Settings → Home Assistant → WS Server.
    #[arg(
        long,
        env = "ZWAVE_MCP_ZWAVE_JS_URL",
        value_name = "URL",
        conflicts_with_all = ["mqtt_url", "mqtt_username", "mqtt_password_file", "mqtt_ca_file", "mqtt_client_id", "demo"]
    )]
    pub zwave_js_url: Option<String>,

    /// CA certificate (PEM) that signed zwave-js-server's certificate, for wss:// URLs
    /// (default: the system's trusted roots).
    #[arg(long, env = "ZWAVE_MCP_ZWAVE_JS_CA_FILE", requires = "zwave_js_url")]
    pub zwave_js_ca_file: Option<PathBuf>,

    /// MQTT user name, when the broker requires authentication.
    #[arg(long, global = true, env = "ZWAVE_MCP_MQTT_USERNAME")]
    pub mqtt_username: Option<String>,

    /// File whose first line is the MQTT password (read at start-up). The password can also come
    /// from ZWAVE_MCP_MQTT_PASSWORD; it is never a flag (flags show in `ps`) and never logged.
    #[arg(long, env = "ZWAVE_MCP_MQTT_PASSWORD_FILE")]
    pub mqtt_password_file: Option<PathBuf>,

    /// CA certificate (PEM) that signed the broker's certificate, for mqtts:// URLs
    /// (default: the system's trusted roots).
    #[arg(long, env = "ZWAVE_MCP_MQTT_CA_FILE")]
    pub mqtt_ca_file: Option<PathBuf>,

    /// MQTT client id of this server; must differ from the gateway's `ZWAVE_GATEWAY-<name>`.
    #[arg(long, env = "ZWAVE_MCP_MQTT_CLIENT_ID")]
    pub mqtt_client_id: Option<String>,

    /// Topic prefix set in Z-Wave JS UI (Settings → MQTT → Prefix).
    #[arg(
        long,
        global = true,
        env = "ZWAVE_MCP_TOPIC_PREFIX",
        default_value = "zwave",
        value_parser = topic_prefix
    )]
    pub topic_prefix: String,

    /// Gateway name set in Z-Wave JS UI (Settings → MQTT → Name).
    #[arg(
        long,
        global = true,
        env = "ZWAVE_MCP_GATEWAY_NAME",
        default_value = "zwave-js-ui",
        value_parser = gateway_name
    )]
    pub gateway_name: String,

    /// How long to wait for Z-Wave JS UI to answer one API request (e.g. 5s, 1500ms).
    #[arg(long, env = "ZWAVE_MCP_API_TIMEOUT", default_value = "5s", value_parser = parse_duration)]
    pub api_timeout: Duration,

    /// How long a switching command waits for the device's own report of its new state
    /// (0s: answer once the gateway acknowledged it; reads say later what became of it). Real
    /// devices report about 1 s (switches) or 5 s (dimmers) after the command.
    #[arg(long, env = "ZWAVE_MCP_CONFIRM_TIMEOUT", default_value = "0s", value_parser = parse_duration)]
    pub confirm_timeout: Duration,

    /// Log filter for stderr and the log file (RUST_LOG syntax; RUST_LOG wins when set).
    #[arg(
        long,
        global = true,
        env = "ZWAVE_MCP_LOG_LEVEL",
        default_value = "info"
    )]
    pub log_level: String,

    /// Also write logs to a daily-rotating file in this directory.
    #[arg(long, env = "ZWAVE_MCP_LOG_DIR")]
    pub log_dir: Option<PathBuf>,

    /// Run against a built-in simulated home: an embedded MQTT broker on a free loopback port
    /// plus a simulated Z-Wave JS UI gateway (the MQTT options above are then ignored).
    #[arg(long, env = "ZWAVE_MCP_DEMO")]
    pub demo: bool,

    /// With --demo: which way the server reaches the demo home: Z-Wave JS UI's MQTT gateway
    /// on an embedded broker, or a simulated zwave-js-server on a free loopback port.
    #[arg(
        long,
        env = "ZWAVE_MCP_DEMO_BACKEND",
        requires = "demo",
        value_enum,
        default_value_t
    )]
    pub demo_backend: DemoBackend,

    /// With --demo: a generated home of this many nodes (2–232, the controller included;
    /// plugs, dimmers, multisensors, switches and meters) instead of the small demo home.
    #[arg(long, env = "ZWAVE_MCP_DEMO_NODES", requires = "demo", value_name = "N", value_parser = home_size)]
    pub demo_nodes: Option<u16>,

    /// Let the agent only read: control_zwave_device is not offered at all.
    #[arg(long, env = "ZWAVE_MCP_READ_ONLY")]
    pub read_only: bool,

    /// Devices reads may see (default: all): node:ID, location:LOCATION or
    /// name:NAME; repeat the flag or separate rules with commas.
    #[arg(
        long,
        env = "ZWAVE_MCP_READ_ALLOW",
        value_delimiter = ',',
        value_name = "RULE"
    )]
    pub read_allow: Vec<Rule>,

    /// Devices reads never see (wins over --read-allow); rules as for --read-allow.
    #[arg(
        long,
        env = "ZWAVE_MCP_READ_DENY",
        value_delimiter = ',',
        value_name = "RULE"
    )]
    pub read_deny: Vec<Rule>,

    /// Devices that may be switched (default: every readable one); rules as for --read-allow.
    #[arg(
        long,
        env = "ZWAVE_MCP_CONTROL_ALLOW",
        value_delimiter = ',',
        value_name = "RULE"
    )]
    pub control_allow: Vec<Rule>,

    /// Devices that are never switched (wins over --control-allow); rules as for --read-allow.
    #[arg(
        long,
        env = "ZWAVE_MCP_CONTROL_DENY",
        value_delimiter = ',',
        value_name = "RULE"
    )]
    pub control_deny: Vec<Rule>,

    /// A JSON file with more exposure rules: {"readOnly": bool, "read": {"allow": [..],
    /// "deny": [..]}, "control": {"allow": [..], "deny": [..]}}; added to the flags'.
    #[arg(long, env = "ZWAVE_MCP_EXPOSURE_FILE")]
    pub exposure_file: Option<PathBuf>,

    /// Sensitive actions the owner allows, by class: lock (unlock a lock), garage (open a
    /// garage door or gate), siren (silence a siren); none by default. A person is still
    /// asked to confirm each one through the MCP client (elicitation).
    #[arg(
        long,
        env = "ZWAVE_MCP_ALLOW_SENSITIVE",
        value_delimiter = ',',
        value_name = "CLASS",
        value_parser = crate::mcp::SENSITIVE_CLASSES
    )]
    pub allow_sensitive: Vec<String>,

    /// Carry out the allowed sensitive actions without asking anyone: any agent connected to
    /// this server can then unlock, open or silence on its own. Use only where no client can
    /// ask its user and the agent is trusted as the owner is.
    #[arg(long, env = "ZWAVE_MCP_SENSITIVE_WITHOUT_CONFIRMATION")]
    pub sensitive_without_confirmation: bool,

    /// Devices every action on which needs a person's yes (asked through the client), as a
    /// space heater or an oven might: rules as for --read-allow (repeat, or comma-separated).
    #[arg(
        long,
        env = "ZWAVE_MCP_SENSITIVE_DEVICE",
        value_delimiter = ',',
        value_name = "RULE"
    )]
    pub sensitive_device: Vec<Rule>,

    /// How long a person has to answer the question about a sensitive action; no answer is
    /// a no.
    #[arg(long, env = "ZWAVE_MCP_ASK_TIMEOUT", default_value = "60s", value_parser = parse_duration)]
    pub ask_timeout: Duration,

    /// The band a thermostat setpoint must lie in, in °C, as LOW..HIGH (a °F thermostat's
    /// band is this one converted); a setpoint outside it, or outside the device's own
    /// range, is refused, never clamped.
    #[arg(long, env = "ZWAVE_MCP_THERMOSTAT_BAND", default_value = "5..30", value_parser = parse_band)]
    pub thermostat_band: Band,
}

/// A band of temperatures in °C, `LOW..HIGH`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Band {
    /// The lowest allowed.
    pub low: f64,
    /// The highest allowed.
    pub high: f64,
}

/// `5..30` → 5 to 30 °C; both finite, low below high, within -40..100.
fn parse_band(text: &str) -> Result<Band, String> {
    let usage = || {
        format!(
            "\"{text}\" is not a band of temperatures: give LOW..HIGH in °C, e.g. 5..30 or 16.5..24"
        )
    };
    let (low, high) = text.split_once("..").ok_or_else(usage)?;
    let (low, high): (f64, f64) = (
        low.trim().parse().map_err(|_| usage())?,
        high.trim().parse().map_err(|_| usage())?,
    );
    if !(low.is_finite() && high.is_finite()) || low >= high || low < -40.0 || high > 100.0 {
        return Err(format!(
            "\"{text}\" is not a usable band: LOW must be below HIGH, both within -40..100 °C (e.g. 5..30)"
        ));
    }
    Ok(Band { low, high })
}

/// The way to the demo home.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum DemoBackend {
    /// Z-Wave JS UI's MQTT gateway, simulated, on an embedded broker.
    #[default]
    Mqtt,
    /// zwave-js-server's WebSocket API, simulated.
    #[value(name = "zwave-js", alias = "ws")]
    ZwaveJs,
}

/// Other things the binary can run.
#[derive(Debug, Clone, clap::Subcommand)]
pub enum Command {
    /// Run only the simulated Z-Wave JS UI gateway (the demo home) against the broker given by
    /// --mqtt-url, or with --ws a simulated zwave-js-server, until interrupted; for trying MCP
    /// hosts or other tools against a real broker or WebSocket client.
    Simulate {
        /// Value topic names, as Z-Wave JS UI's gateway "type" (0 or 1 are accepted too).
        #[arg(long, value_enum, default_value_t)]
        topic_type: TopicType,
        /// Value payloads, as Z-Wave JS UI's "payloadType" (0, 1 or 2 are accepted too).
        #[arg(long, value_enum, default_value_t)]
        payload_type: PayloadType,
        /// Serve a generated home of this many nodes (2–232, the controller included) instead
        /// of the small demo home.
        #[arg(long, value_name = "N", value_parser = home_size)]
        nodes: Option<u16>,
        /// Once the home is published, report this many new sensor and meter readings per
        /// second (round robin over every such value), to measure what a busy network costs.
        #[arg(long, value_name = "PER_SECOND",
              value_parser = clap::value_parser!(u32).range(1..=i64::from(crate::sim::MAX_STORM_RATE)))]
        storm: Option<u32>,
        /// Nodes that acknowledge every Set and ignore it, as a stuck relay or a dead bulb
        /// behind a live module does (repeat, or comma-separated).
        #[arg(long, value_name = "NODE", value_delimiter = ',')]
        stuck: Vec<u16>,
        /// Nodes with Supervision: a Set is answered 255 once the device did it (repeat, or
        /// comma-separated).
        #[arg(long, value_name = "NODE", value_delimiter = ',')]
        supervised: Vec<u16>,
        /// Serve the home as zwave-js-server does, over WebSocket on this address (e.g.
        /// 127.0.0.1:3000), instead of as Z-Wave JS UI's gateway on the MQTT broker.
        #[arg(long, value_name = "ADDRESS", conflicts_with_all = ["topic_type", "payload_type", "storm"])]
        ws: Option<String>,
    },
}

impl Config {
    /// What the owner allows of sensitive actions.
    pub fn sensitive(&self) -> crate::mcp::SensitivePolicy {
        crate::mcp::SensitivePolicy {
            allowed: self.allow_sensitive.iter().cloned().collect(),
            without_confirmation: self.sensitive_without_confirmation,
            ask_timeout: self.ask_timeout,
            devices: self.sensitive_device.clone(),
        }
    }

    /// The owner's limits on writes.
    pub fn limits(&self) -> crate::devices::Limits {
        crate::devices::Limits {
            setpoint_celsius: (self.thermostat_band.low, self.thermostat_band.high),
        }
    }

    /// Which devices the agent may see and switch: the flags' rules plus the exposure file's.
    ///
    /// # Errors
    /// The exposure file cannot be read or holds a rule that is not valid.
    pub fn exposure(&self) -> Result<Exposure, ConfigError> {
        let mut exposure = Exposure {
            read_only: self.read_only,
            read: Rules {
                allow: self.read_allow.clone(),
                deny: self.read_deny.clone(),
            },
            control: Rules {
                allow: self.control_allow.clone(),
                deny: self.control_deny.clone(),
            },
        };
        if let Some(path) = &self.exposure_file {
            exposure.add_file(path).map_err(ConfigError::Exposure)?;
        }
        Ok(exposure)
    }

    /// The MQTT connection settings, with the password resolved from its file when given.
    ///
    /// # Errors
    /// When the password file cannot be read, or both a password and a password file are set.
    pub fn mqtt(&self) -> Result<MqttSettings, ConfigError> {
        let from_env = std::env::var(PASSWORD_ENV)
            .ok()
            .filter(|p| !p.is_empty())
            .map(Secret);
        let password = match (&from_env, &self.mqtt_password_file) {
            (Some(_), Some(_)) => return Err(ConfigError::TwoPasswords),
            (Some(secret), None) => Some(secret.clone()),
            (None, Some(path)) => Some(read_password_file(path)?),
            (None, None) => None,
        };
        let ca_pem = match (&self.mqtt_ca_file, self.mqtt_url.tls) {
            (Some(path), true) => Some(read_ca_file(path, "--mqtt-ca-file", "broker")?),
            (Some(path), false) => {
                return Err(ConfigError::CaWithoutTls {
                    flag: "--mqtt-ca-file",
                    path: path.clone(),
                    needs: "an mqtts:// broker URL, but --mqtt-url",
                    url: self.mqtt_url.to_string(),
                });
            }
            (None, _) => None,
        };
        Ok(MqttSettings {
            url: self.mqtt_url.clone(),
            username: self.mqtt_username.clone(),
            password,
            client_id: self
                .mqtt_client_id
                .clone()
                .unwrap_or_else(|| format!("zwave-mcp-server-{}", std::process::id())),
            topic_prefix: self.topic_prefix.trim_end_matches('/').to_owned(),
            gateway_name: self.gateway_name.clone(),
            api_timeout: self.api_timeout,
            ca_pem,
        })
    }
}

impl Config {
    /// Where zwave-js-server is, when `--zwave-js-url` was given, with its CA read.
    ///
    /// # Errors
    /// The URL is not a usable ws:// or wss:// URL, or the CA file is not usable (or given
    /// for a ws:// URL).
    pub fn zwave_js(&self) -> Result<Option<Target>, ConfigError> {
        let Some(url) = &self.zwave_js_url else {
            return Ok(None);
        };
        let tls = url.starts_with("wss://");
        let ca_pem = match &self.zwave_js_ca_file {
            Some(path) if tls => Some(read_ca_file(path, "--zwave-js-ca-file", "server")?),
            Some(path) => {
                return Err(ConfigError::CaWithoutTls {
                    flag: "--zwave-js-ca-file",
                    path: path.clone(),
                    needs: "a wss:// URL, but --zwave-js-url",
                    url: url.clone(),
                });
            }
            None => None,
        };
        Target::new(url, ca_pem.as_deref())
            .map(Some)
            .map_err(|reason| ConfigError::ZwaveJsUrl {
                reason: reason.to_string(),
            })
    }
}

/// Reads the PEM file of a CA given by `flag`, which signed the `whose` certificate.
fn read_ca_file(
    path: &std::path::Path,
    flag: &'static str,
    whose: &'static str,
) -> Result<Vec<u8>, ConfigError> {
    let pem = std::fs::read(path).map_err(|source| ConfigError::CaFile {
        flag,
        path: path.to_owned(),
        source,
    })?;
    if !String::from_utf8_lossy(&pem).contains("-----BEGIN CERTIFICATE-----") {
        return Err(ConfigError::CaNotPem {
            flag,
            path: path.to_owned(),
        });
    }
    // Parsed now as the TLS connection will parse it, so a broken file stops the start
    // instead of failing every connection attempt later.
    use rustls::pki_types::{CertificateDer, pem::PemObject as _};
    let invalid = |reason: String| ConfigError::CaInvalid {
        flag,
        path: path.to_owned(),
        whose,
        reason,
    };
    let certificates = CertificateDer::pem_slice_iter(&pem)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|err| invalid(format!("its PEM does not parse: {err}")))?;
    let (usable, _) = rustls::RootCertStore::empty().add_parsable_certificates(certificates);
    if usable == 0 {
        return Err(invalid(
            "none of its certificates is a valid X.509 certificate".to_owned(),
        ));
    }
    Ok(pem)
}

fn read_password_file(path: &std::path::Path) -> Result<Secret, ConfigError> {
    let text = std::fs::read_to_string(path).map_err(|source| ConfigError::PasswordFile {
        path: path.to_owned(),
        source,
    })?;
    Ok(Secret(text.lines().next().unwrap_or_default().to_owned()))
}

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
    /// `--zwave-js-url` is not a usable WebSocket URL.
    #[error("--zwave-js-url: {reason}")]
    ZwaveJsUrl {
        /// What is wrong with it, and an example.
        reason: String,
    },
    /// The exposure file is not usable (the message names it and the rule at fault).
    #[error("{0}")]
    Exposure(String),
}

/// Z-Wave JS UI's MQTT prefix: topic levels without MQTT's wildcards.
fn topic_prefix(text: &str) -> Result<String, String> {
    topic_part(
        text,
        "the prefix set in Z-Wave JS UI (Settings → MQTT → Prefix), e.g. zwave or home/zwave",
    )?;
    if text.trim_matches('/').is_empty() {
        return Err(format!(
            "`{text}` names no topic level: use the prefix set in Z-Wave JS UI (Settings → MQTT → Prefix), e.g. zwave"
        ));
    }
    Ok(text.to_owned())
}

/// Z-Wave JS UI's MQTT name: one topic level without MQTT's wildcards.
fn gateway_name(text: &str) -> Result<String, String> {
    let valid = "the name set in Z-Wave JS UI (Settings → MQTT → Name), e.g. zwave-js-ui";
    topic_part(text, valid)?;
    if text.is_empty() || text.contains('/') {
        return Err(format!("`{text}` is not one topic level: use {valid}"));
    }
    Ok(text.to_owned())
}

/// Refuses what no MQTT topic may hold: the wildcards `+` and `#`, and NUL.
fn topic_part(text: &str, valid: &str) -> Result<(), String> {
    if text.contains(['+', '#', '\0']) {
        return Err(format!(
            "`{}` cannot be part of an MQTT topic (it holds + or #, MQTT's wildcards, or NUL): use {valid}",
            text.escape_debug()
        ));
    }
    Ok(())
}

/// A node count for a generated home: the Z-Wave range, controller included.
fn home_size(text: &str) -> Result<u16, String> {
    use crate::sim::home::{MAX_NODES, MIN_NODES};
    let valid = || {
        format!(
            "use {MIN_NODES} to {MAX_NODES} (a Z-Wave network holds at most {MAX_NODES} nodes, the controller included)"
        )
    };
    let nodes: u16 = text
        .trim()
        .parse()
        .map_err(|_| format!("`{text}` is not a node count: {}", valid()))?;
    if (MIN_NODES..=MAX_NODES).contains(&nodes) {
        Ok(nodes)
    } else {
        Err(format!("{nodes} nodes is out of range: {}", valid()))
    }
}

/// A duration flag in the workspace's duration grammar (`common::duration`): a number of
/// seconds (`5`, `0.5`) or `250ms`, `5s`, `2m`, `1h 30m`, `PT5M`; 0 to 24 h.
fn parse_duration(text: &str) -> Result<Duration, String> {
    common::parse_duration(text).map_err(|err| match err {
        common::DurationError::NotADuration => format!("`{text}` is not a duration: {err}"),
        common::DurationError::OutOfRange => format!("`{text}` is out of range: {err}"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_accept_units_and_reject_nonsense() {
        assert_eq!(
            parse_duration("1500ms").unwrap(),
            Duration::from_millis(1500)
        );
        assert_eq!(parse_duration("5s").unwrap(), Duration::from_secs(5));
        assert_eq!(parse_duration("2").unwrap(), Duration::from_secs(2));
        assert_eq!(parse_duration("1m").unwrap(), Duration::from_secs(60));
        assert_eq!(parse_duration("1h 30m").unwrap(), Duration::from_secs(5400));
        assert_eq!(parse_duration("PT5M").unwrap(), Duration::from_secs(300));
        assert_eq!(
            parse_duration("25h").unwrap_err(),
            "`25h` is out of range: use 0s to 24h"
        );
        assert_eq!(
            parse_duration("-1s").unwrap_err(),
            "`-1s` is out of range: use 0s to 24h"
        );
        assert_eq!(
            parse_duration("5 parsecs").unwrap_err(),
            "`5 parsecs` is not a duration: use a number of seconds (30) or a duration such as 500ms, 30s, 2m or 1h 30m"
        );
        assert_eq!(
            parse_duration("soon").unwrap_err(),
            "`soon` is not a duration: use a number of seconds (30) or a duration such as 500ms, 30s, 2m or 1h 30m"
        );
    }

    #[test]
    fn a_thermostat_band_is_low_dot_dot_high_in_celsius_and_nonsense_is_refused() {
        assert_eq!(
            parse_band("16.5..24").unwrap(),
            Band {
                low: 16.5,
                high: 24.0
            }
        );
        assert_eq!(
            parse_band("warm").unwrap_err(),
            "\"warm\" is not a band of temperatures: give LOW..HIGH in °C, e.g. 5..30 or 16.5..24"
        );
        for unusable in ["30..5", "-50..20", "5..200", "5..NaN", "inf..30"] {
            let refused = parse_band(unusable).unwrap_err();
            assert!(
                refused.ends_with(
                    "is not a usable band: LOW must be below HIGH, both within -40..100 °C (e.g. 5..30)"
                ) || refused.ends_with("is not a band of temperatures: give LOW..HIGH in °C, e.g. 5..30 or 16.5..24"),
                "{unusable}: {refused}"
            );
        }
        assert_eq!(
            parse_band("30..5").unwrap_err(),
            "\"30..5\" is not a usable band: LOW must be below HIGH, both within -40..100 °C (e.g. 5..30)"
        );
    }
}

#[cfg(test)]
mod settings_tests {
    use clap::Parser as _;

    use super::*;

    fn config(args: &[&str]) -> Config {
        Config::try_parse_from(std::iter::once("zwave-mcp-server").chain(args.iter().copied()))
            .unwrap()
    }

    #[test]
    fn settings_problems_name_the_flag_and_the_fix() {
        let dir = std::env::temp_dir().join(format!("zwave-config-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let not_pem = dir.join("ca.txt");
        std::fs::write(&not_pem, "hello").unwrap();
        let path = not_pem.to_str().unwrap();

        let err = config(&["--mqtt-url", "mqtt://h:1883", "--mqtt-ca-file", path])
            .mqtt()
            .unwrap_err();
        assert_eq!(
            err.to_string(),
            format!(
                "--mqtt-ca-file {not_pem:?} needs an mqtts:// broker URL, but --mqtt-url is mqtt://h:1883"
            )
        );
        let err = config(&["--mqtt-url", "mqtts://h", "--mqtt-ca-file", path])
            .mqtt()
            .unwrap_err();
        assert_eq!(
            err.to_string(),
            format!(
                "--mqtt-ca-file {not_pem:?} holds no PEM certificate (expected -----BEGIN CERTIFICATE-----)"
            )
        );
        let missing = dir.join("missing.pem");
        let err = config(&[
            "--mqtt-url",
            "mqtts://h",
            "--mqtt-ca-file",
            missing.to_str().unwrap(),
        ])
        .mqtt()
        .unwrap_err();
        assert_eq!(
            err.to_string(),
            format!("cannot read --mqtt-ca-file {missing:?}")
        );

        let password = dir.join("password");
        std::fs::write(&password, "s3cret\nignored second line\n").unwrap();
        let settings = config(&["--mqtt-password-file", password.to_str().unwrap()])
            .mqtt()
            .unwrap();
        assert_eq!(settings.password, Some(Secret("s3cret".into())));
        let _ = std::fs::remove_dir_all(dir);
    }
}

#[cfg(test)]
mod simulate_tests {
    use clap::Parser as _;

    use super::*;

    #[test]
    fn simulate_takes_z_wave_js_ui_numbers_or_names_for_topic_and_payload_types() {
        for (topic, payload, expected) in [
            ("1", "2", (TopicType::Named, PayloadType::Raw)),
            (
                "value-id",
                "entire-value-id",
                (TopicType::ValueId, PayloadType::EntireValueId),
            ),
        ] {
            let config = Config::try_parse_from([
                "zwave-mcp-server",
                "simulate",
                "--topic-type",
                topic,
                "--payload-type",
                payload,
            ])
            .unwrap();
            let Some(Command::Simulate {
                topic_type,
                payload_type,
                ..
            }) = config.command
            else {
                panic!("not simulate: {:?}", config.command);
            };
            assert_eq!((topic_type, payload_type), expected);
        }
    }
}
