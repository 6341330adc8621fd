//! What is derived from the flags: the settings the rest of the crate takes (the MQTT
//! connection, zwave-js-server's target, the exposure rules, the sensitive policy, the write
//! limits), with the files the flags name read and checked at start-up.

use crate::{
    devices::{Exposure, Limits, Rules},
    mcp::{MaintenancePolicy, SensitivePolicy},
    network::{MqttSettings, Secret, zwave_js_server::client::Target},
    transport::http::{HttpSettings, MIN_TOKEN_CHARS, Token},
};

use super::{
    Config, ConfigError,
    backend::PASSWORD_ENV,
    http::{DEFAULT_MAX_SESSIONS, DEFAULT_SESSION_IDLE, TOKEN_ENV},
};

impl Config {
    /// What the owner allows of sensitive actions.
    pub fn sensitive(&self) -> SensitivePolicy {
        SensitivePolicy {
            allowed: self.safety.allow_sensitive.iter().copied().collect(),
            without_confirmation: self.safety.sensitive_without_confirmation,
            ask_timeout: self.safety.ask_timeout,
            devices: self.safety.sensitive_device.clone(),
            // A fact of the transport, which the session sets (HTTP without a token).
            unauthenticated_clients: false,
        }
    }

    /// Whether the owner allows upkeep operations, and how long a call waits for one.
    pub fn maintenance(&self) -> MaintenancePolicy {
        MaintenancePolicy {
            allowed: self.safety.allow_maintenance,
            limit: self.timeouts.upkeep_timeout,
        }
    }

    /// The HTTP transport's settings, when `--http` was given, with the token read.
    ///
    /// # Errors
    /// The token file cannot be read, the token is given twice or is too short, an HTTP
    /// flag is given without `--http`, or a non-loopback address has no token.
    pub fn http(&self) -> Result<Option<HttpSettings>, ConfigError> {
        let flags = &self.http;
        let Some(addr) = flags.http else {
            let stray = [
                ("--http-token-file", flags.http_token_file.is_some()),
                ("--http-allowed-host", !flags.http_allowed_host.is_empty()),
                (
                    "--http-allowed-origin",
                    !flags.http_allowed_origin.is_empty(),
                ),
                ("--http-max-sessions", flags.http_max_sessions.is_some()),
                ("--http-session-idle", flags.http_session_idle.is_some()),
                ("--oauth-issuer", flags.oauth_issuer.is_some()),
            ];
            return match stray.into_iter().find(|(_, given)| *given) {
                Some((flag, _)) => Err(ConfigError::HttpFlagWithoutHttp { flag }),
                None => Ok(None),
            };
        };
        let from_env = std::env::var(TOKEN_ENV)
            .ok()
            .filter(|token| !token.is_empty());
        let (text, from) = match (from_env, &flags.http_token_file) {
            (Some(_), Some(_)) => return Err(ConfigError::TwoHttpTokens),
            (Some(text), None) => (Some(text), TOKEN_ENV.to_owned()),
            (None, Some(path)) => {
                let text =
                    std::fs::read_to_string(path).map_err(|source| ConfigError::HttpTokenFile {
                        path: path.clone(),
                        source,
                    })?;
                (Some(text), format!("--http-token-file {}", path.display()))
            }
            (None, None) => (None, String::new()),
        };
        let token = text
            .map(|text| {
                Token::new(&text).map_err(|chars| ConfigError::WeakHttpToken {
                    from: from.clone(),
                    chars,
                    min: MIN_TOKEN_CHARS,
                })
            })
            .transpose()?;
        // Found by the hostile review: such a key was compared uncounted, as a token of the
        // server's own that failed.
        if flags.oauth_issuer.is_some() && token.as_ref().is_some_and(Token::looks_issued) {
            return Err(ConfigError::HttpTokenLooksIssued { from });
        }
        if token.is_none() && !addr.ip().is_loopback() {
            return Err(ConfigError::HttpWithoutToken { addr });
        }
        let auth = self.auth(token.is_some())?;
        let mut extra_hosts = flags.http_allowed_host.clone();
        if let Some(auth) = &auth {
            // The issuer's host is the name hosts reach the server by.
            let authority = auth.issuer.split_once("://").map_or("", |(_, rest)| rest);
            let host = match authority.strip_prefix('[') {
                Some(v6) => v6.split_once(']').map_or(authority, |(host, _)| host),
                None => authority.split(':').next().unwrap_or(authority),
            };
            if !extra_hosts.iter().any(|known| known == host) {
                extra_hosts.push(host.to_owned());
            }
        }
        Ok(Some(HttpSettings {
            addr,
            token,
            auth,
            extra_hosts,
            extra_origins: flags.http_allowed_origin.clone(),
            max_sessions: flags.http_max_sessions.unwrap_or(DEFAULT_MAX_SESSIONS) as usize,
            session_idle: flags.http_session_idle.unwrap_or(DEFAULT_SESSION_IDLE),
        }))
    }

    /// The state directory: `--state-dir`, or the default when `--oauth-issuer` needs one;
    /// `None` when neither asks for one (then no audit trail is kept).
    ///
    /// # Errors
    /// OAuth needs one and there is no home to put the default in.
    pub fn state_dir(&self) -> Result<Option<std::path::PathBuf>, ConfigError> {
        match (&self.http.state_dir, &self.http.oauth_issuer) {
            (Some(dir), _) => Ok(Some(dir.clone())),
            (None, Some(_)) => default_state_dir(
                std::env::var("XDG_STATE_HOME").ok().as_deref(),
                std::env::var("HOME").ok().as_deref(),
            )
            .map(Some)
            .ok_or(ConfigError::NoStateDir),
            (None, None) => Ok(None),
        }
    }

    /// The authorization server's settings, when `--oauth-issuer` was given (which needs the
    /// owner's key, `has_owner_key`).
    ///
    /// # Errors
    /// No owner's key, or no state directory.
    fn auth(&self, has_owner_key: bool) -> Result<Option<crate::auth::AuthSettings>, ConfigError> {
        let Some(issuer) = &self.http.oauth_issuer else {
            return Ok(None);
        };
        if !has_owner_key {
            return Err(ConfigError::OAuthWithoutOwnerKey);
        }
        let state_dir = self.state_dir()?.ok_or(ConfigError::NoStateDir)?;
        let ca_pem = match &self.http.oauth_client_metadata_ca {
            Some(path) => {
                let refused = |why: String| ConfigError::ClientMetadataCa {
                    path: path.display().to_string(),
                    why,
                };
                let pem = std::fs::read(path).map_err(|err| refused(err.to_string()))?;
                crate::network::zwave_js_server::tls_config(Some(&pem))
                    .map_err(|err| refused(err.to_string()))?;
                Some(pem)
            }
            None => None,
        };
        Ok(Some(crate::auth::AuthSettings {
            issuer: issuer.clone(),
            state_dir,
            documents: crate::auth::DocumentPolicy {
                ca_pem,
                private_addresses: self.http.oauth_client_metadata_private,
            },
            access_lifetime: crate::auth::ACCESS_LIFETIME,
        }))
    }

    /// The owner's limits on writes.
    pub fn limits(&self) -> Limits {
        Limits {
            setpoint_celsius: (
                self.safety.thermostat_band.low,
                self.safety.thermostat_band.high,
            ),
        }
    }

    /// Which devices the agent may see and switch: the flags' rules plus the exposure file's.
    ///
    /// # Errors
    /// The exposure file cannot be read or holds a rule that is not valid.
    pub fn exposure(&self) -> Result<Exposure, ConfigError> {
        let mut exposure = Exposure {
            read_only: self.exposure.read_only,
            read: Rules {
                allow: self.exposure.read_allow.clone(),
                deny: self.exposure.read_deny.clone(),
            },
            control: Rules {
                allow: self.exposure.control_allow.clone(),
                deny: self.exposure.control_deny.clone(),
            },
        };
        if let Some(path) = &self.exposure.exposure_file {
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
        let password = match (&from_env, &self.backend.mqtt_password_file) {
            (Some(_), Some(_)) => return Err(ConfigError::TwoPasswords),
            (Some(secret), None) => Some(secret.clone()),
            (None, Some(path)) => Some(read_password_file(path)?),
            (None, None) => None,
        };
        let ca_pem = match (&self.backend.mqtt_ca_file, self.backend.mqtt_url.tls) {
            (Some(path), true) => Some(read_ca_file(path, "--mqtt-ca-file", "broker")?),
            (Some(path), false) => {
                return Err(ConfigError::CaWithoutTls {
                    flag: "--mqtt-ca-file",
                    path: path.clone(),
                    needs: "an mqtts:// broker URL, but --mqtt-url",
                    url: self.backend.mqtt_url.to_string(),
                });
            }
            (None, _) => None,
        };
        Ok(MqttSettings {
            url: self.backend.mqtt_url.clone(),
            username: self.backend.mqtt_username.clone(),
            password,
            client_id: self
                .backend
                .mqtt_client_id
                .clone()
                .unwrap_or_else(|| format!("zwave-mcp-server-{}", std::process::id())),
            topic_prefix: self.backend.topic_prefix.trim_end_matches('/').to_owned(),
            gateway_name: self.backend.gateway_name.clone(),
            api_timeout: self.timeouts.api_timeout,
            ca_pem,
        })
    }

    /// Where zwave-js-server is, when `--zwave-js-url` was given, with its CA read.
    ///
    /// # Errors
    /// The CA file is not usable, or given for a ws:// URL. (The URL itself was checked
    /// where the flag was read.)
    pub fn zwave_js_server(&self) -> Result<Option<Target>, ConfigError> {
        let Some(url) = &self.backend.zwave_js_url else {
            return Ok(None);
        };
        let ca_pem = match &self.backend.zwave_js_ca_file {
            Some(path) if url.is_tls() => Some(read_ca_file(path, "--zwave-js-ca-file", "server")?),
            Some(path) => {
                return Err(ConfigError::CaWithoutTls {
                    flag: "--zwave-js-ca-file",
                    path: path.clone(),
                    needs: "a wss:// URL, but --zwave-js-url",
                    url: url.to_string(),
                });
            }
            None => None,
        };
        Target::at(url, ca_pem.as_deref())
            .map(Some)
            .map_err(|err| ConfigError::ZwaveJsUrl {
                reason: err.to_string(),
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

/// `$XDG_STATE_HOME/zwave-mcp-server`, else `~/.local/state/zwave-mcp-server`: grants are state
/// the server keeps between runs (XDG base directories).
fn default_state_dir(
    xdg_state_home: Option<&str>,
    home: Option<&str>,
) -> Option<std::path::PathBuf> {
    let base = match (xdg_state_home.filter(|dir| !dir.is_empty()), home) {
        (Some(state), _) => std::path::PathBuf::from(state),
        (None, Some(home)) if !home.is_empty() => std::path::Path::new(home).join(".local/state"),
        _ => return None,
    };
    Some(base.join("zwave-mcp-server"))
}

#[cfg(test)]
mod tests {
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

    #[test]
    fn http_problems_name_the_flag_and_the_fix() {
        let dir = std::env::temp_dir().join(format!("zwave-http-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = |name: &str, text: &str| {
            let path = dir.join(name);
            std::fs::write(&path, text).unwrap();
            path.to_str().unwrap().to_owned()
        };
        let good = file("good", "0123456789abcdef0123456789abcdef\n");
        let short = file("short", "hunter2\n");
        let missing = dir.join("missing").to_str().unwrap().to_owned();

        assert!(config(&[]).http().unwrap().is_none());
        let settings = config(&["--http", "0.0.0.0:8123", "--http-token-file", &good])
            .http()
            .unwrap()
            .unwrap();
        assert!(settings.token.is_some());
        assert_eq!(settings.max_sessions, 100);
        assert_eq!(settings.session_idle, std::time::Duration::from_secs(600));
        let loopback = config(&["--http", "127.0.0.1:8123"])
            .http()
            .unwrap()
            .unwrap();
        assert!(loopback.token.is_none());

        let message = |args: &[&str]| config(args).http().unwrap_err().to_string();
        assert_eq!(
            message(&["--http", "0.0.0.0:8123"]),
            "--http 0.0.0.0:8123 is reachable from other machines, and no token is set: give --http-token-file FILE (or ZWAVE_MCP_HTTP_TOKEN), or bind to 127.0.0.1"
        );
        assert_eq!(
            message(&["--http", "127.0.0.1:1", "--http-token-file", &short]),
            format!(
                "the HTTP token from --http-token-file {short} is 7 characters long; a token needs at least 16 (e.g. `openssl rand -hex 32`)"
            )
        );
        let issued = file("issued", "zat1.0123456789abcdef0123\n");
        assert_eq!(
            message(&[
                "--http",
                "127.0.0.1:1",
                "--http-token-file",
                &issued,
                "--oauth-issuer",
                "http://127.0.0.1:1"
            ]),
            format!(
                "the HTTP token from --http-token-file {issued} starts with `zat1.`, the shape of the access tokens --oauth-issuer issues: choose another (e.g. `openssl rand -hex 32`)"
            )
        );
        assert_eq!(
            message(&["--http", "127.0.0.1:1", "--http-token-file", &missing]),
            format!("cannot read --http-token-file {missing:?}")
        );
        assert_eq!(
            message(&["--http-token-file", &good]),
            "--http-token-file applies to the HTTP transport only: add --http ADDR:PORT"
        );
        assert_eq!(
            message(&["--http-allowed-origin", "https://a.example"]),
            "--http-allowed-origin applies to the HTTP transport only: add --http ADDR:PORT"
        );
        assert_eq!(
            message(&["--http-max-sessions", "5"]),
            "--http-max-sessions applies to the HTTP transport only: add --http ADDR:PORT"
        );
        assert_eq!(
            message(&["--http-session-idle", "1m"]),
            "--http-session-idle applies to the HTTP transport only: add --http ADDR:PORT"
        );
        let _ = std::fs::remove_dir_all(dir);
    }
}
