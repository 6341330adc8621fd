//! Saying when what a read returns may be out of date: while the broker, Z-Wave JS UI or its
//! driver is down, reads answer from the cache, and say so first, with since when, in text and
//! in `structuredContent.stale`. A state reported as current when it is not would be the worst
//! kind of wrong answer.

use schemars::JsonSchema;
use serde::Serialize;

use crate::{
    devices,
    network::{Stale, StaleCause},
};

/// Why and since when the states in a result may be out of date.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Staleness {
    /// What is down: "broker unreachable", "gateway offline", "driver down" or
    /// "zwave-js-server unreachable".
    pub reason: String,
    /// Since when (RFC 3339, UTC): the states are at least this old.
    pub since: String,
    /// How long ago that was, in seconds.
    pub age_seconds: u64,
}

impl Staleness {
    /// The staleness of `stale` at `now_ms`.
    pub fn of(stale: Stale, now_ms: i64) -> Self {
        let reason = match stale.cause {
            StaleCause::BrokerUnreachable => "broker unreachable",
            StaleCause::GatewayOffline => "gateway offline",
            StaleCause::DriverDown => "driver down",
            StaleCause::ServerUnreachable => "zwave-js-server unreachable",
        };
        Self {
            reason: reason.into(),
            since: jiff::Timestamp::from_millisecond(stale.since_ms)
                .map(|t| t.to_string())
                .unwrap_or_default(),
            age_seconds: u64::try_from(now_ms.saturating_sub(stale.since_ms)).unwrap_or(0) / 1000,
        }
    }

    /// The line a result starts with: `Z-Wave JS UI is offline since 18:31 (4 min ago); last
    /// known states:` (local time).
    pub fn headline(&self, stale: Stale) -> String {
        let clock = jiff::Timestamp::from_millisecond(stale.since_ms)
            .map(|t| {
                t.to_zoned(jiff::tz::TimeZone::system())
                    .strftime("%H:%M")
                    .to_string()
            })
            .unwrap_or_default();
        let what = match stale.cause {
            StaleCause::BrokerUnreachable => "The MQTT broker is unreachable",
            StaleCause::GatewayOffline => "Z-Wave JS UI is offline",
            StaleCause::DriverDown => "Z-Wave JS UI's Z-Wave driver is down",
            StaleCause::ServerUnreachable => "zwave-js-server is unreachable",
        };
        format!(
            "{what} since {clock} ({}); last known states:",
            devices::ago(self.age_seconds)
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_link_down_is_named_with_its_age() {
        let stale = Stale {
            cause: StaleCause::GatewayOffline,
            since_ms: 1_795_000_000_000,
        };
        let staleness = Staleness::of(stale, 1_795_000_000_000 + 240_500);
        assert_eq!(staleness.reason, "gateway offline");
        assert_eq!(staleness.since, "2026-11-18T11:06:40Z");
        assert_eq!(staleness.age_seconds, 240);
        let headline = staleness.headline(stale);
        assert!(
            headline.starts_with("Z-Wave JS UI is offline since "),
            "{headline}"
        );
        assert!(
            headline.ends_with(" (4 min ago); last known states:"),
            "{headline}"
        );
    }
}
