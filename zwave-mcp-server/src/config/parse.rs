//! The value parsers of the production flags, and the values only they give ([`Band`]): each
//! refusal names the value and what would be valid, as clap prints it after "invalid value".
//! The demo's node count is parsed in `demo`, the URLs by their own types in the network.

use std::time::Duration;

/// A band of temperatures in °C, `LOW..HIGH`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Band {
    /// The lowest allowed.
    pub low: f64,
    /// The highest allowed.
    pub high: f64,
}

/// `5..30` → 5 to 30 °C; both finite, low below high, within -40..100.
pub(super) fn parse_band(text: &str) -> Result<Band, String> {
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

/// Z-Wave JS UI's MQTT prefix: topic levels without MQTT's wildcards.
pub(super) fn topic_prefix(text: &str) -> Result<String, String> {
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
pub(super) fn gateway_name(text: &str) -> Result<String, String> {
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

/// A duration flag in the workspace's duration grammar (`common::duration`): a number of
/// seconds (`5`, `0.5`) or `250ms`, `5s`, `2m`, `1h 30m`, `PT5M`; 0 to 24 h.
pub(super) fn parse_duration(text: &str) -> Result<Duration, String> {
    common::parse_duration(text).map_err(|err| match err {
        common::DurationError::NotADuration => format!("`{text}` is not a duration: {err}"),
        common::DurationError::OutOfRange => format!("`{text}` is out of range: {err}"),
    })
}

/// `--oauth-issuer`: an origin, `https://HOST[:PORT]` (or `http://` to 127.0.0.1, [::1] or
/// localhost), without a path, a query, a fragment or a user; written back lowercase and
/// without a trailing `/`, as the metadata and tokens will name it.
pub(super) fn parse_issuer(text: &str) -> Result<String, String> {
    let usage = |why: &str| {
        format!(
            "{text:?} {why}: give the origin hosts reach the server at, e.g. https://home.example.com (http only to 127.0.0.1, [::1] or localhost)"
        )
    };
    let (scheme, rest) = text
        .split_once("://")
        .ok_or_else(|| usage("is not a URL"))?;
    let scheme = scheme.to_ascii_lowercase();
    let authority = rest.strip_suffix('/').unwrap_or(rest).to_ascii_lowercase();
    if authority.is_empty() {
        return Err(usage("names no host"));
    }
    if authority.contains(['/', '?', '#', '@']) || authority.chars().any(char::is_whitespace) {
        return Err(usage(
            "is not an origin (it has a path, a query, a fragment or a user)",
        ));
    }
    let host = if let Some(v6) = authority.strip_prefix('[') {
        v6.split_once(']').map_or("", |(host, _)| host)
    } else {
        authority.split(':').next().unwrap_or_default()
    };
    match scheme.as_str() {
        "https" => {}
        "http" if matches!(host, "127.0.0.1" | "::1" | "localhost") => {}
        "http" => {
            return Err(usage(
                "is plain http to another machine (OAuth 2.1 needs TLS there)",
            ));
        }
        _ => return Err(usage("is neither https nor http")),
    }
    // The port as a browser writes it in `Origin`: a number without leading zeros, none for
    // the scheme's own (found by the hostile review: `http://127.0.0.1:80` or `:080` refused
    // every form).
    let host_part = if authority.starts_with('[') {
        authority.split_inclusive(']').next().unwrap_or_default()
    } else {
        authority.split(':').next().unwrap_or_default()
    };
    let port = match authority[host_part.len()..].strip_prefix(':') {
        None if authority.len() == host_part.len() => None,
        Some(port) => Some(
            port.parse::<u16>()
                .ok()
                .filter(|port| *port != 0)
                .ok_or_else(|| usage("has a port that is not a number from 1 to 65535"))?,
        ),
        None => return Err(usage("is not an origin")),
    };
    let default_port = if scheme == "https" { 443 } else { 80 };
    Ok(match port {
        Some(port) if port != default_port => format!("{scheme}://{host_part}:{port}"),
        _ => format!("{scheme}://{host_part}"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_issuer_is_an_origin_as_a_browser_writes_it() {
        for (given, issuer) in [
            ("https://Home.Example/", "https://home.example"),
            ("https://home.example:443", "https://home.example"),
            ("http://127.0.0.1:80", "http://127.0.0.1"),
            ("https://home.example:8443", "https://home.example:8443"),
            ("http://127.0.0.1:8123", "http://127.0.0.1:8123"),
            ("http://127.0.0.1:080", "http://127.0.0.1"),
            ("http://127.0.0.1:08123", "http://127.0.0.1:8123"),
            ("http://[::1]:80", "http://[::1]"),
            ("https://[2001:db8::1]:8443/", "https://[2001:db8::1]:8443"),
        ] {
            assert_eq!(parse_issuer(given).as_deref(), Ok(issuer), "{given}");
        }
        for bad in [
            "https://home.example:",
            "https://home.example:x",
            "https://home.example:99999",
            "https://home.example:0",
        ] {
            assert_eq!(
                parse_issuer(bad),
                Err(format!(
                    "{bad:?} has a port that is not a number from 1 to 65535: give the origin hosts reach the server at, e.g. https://home.example.com (http only to 127.0.0.1, [::1] or localhost)"
                )),
            );
        }
        assert_eq!(
            parse_issuer("http://home.example"),
            Err("\"http://home.example\" is plain http to another machine (OAuth 2.1 needs TLS there): give the origin hosts reach the server at, e.g. https://home.example.com (http only to 127.0.0.1, [::1] or localhost)".to_owned())
        );
    }

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
