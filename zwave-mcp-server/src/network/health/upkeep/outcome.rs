//! What an upkeep operation is ([`Upkeep`]), what it found ([`UpkeepOutcome`]), why it did
//! not end ([`UpkeepError`]), and a lifeline health check's summary read field by field: a
//! gateway's numbers are data, and an absurd one is left unknown, never trusted.

use std::time::Duration;

use serde_json::Value;

use crate::network::{NetworkError, NodeId};

/// An upkeep operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Upkeep {
    /// Z-Wave JS interviews the device again (what it is, its command classes, its values).
    Reinterview,
    /// Z-Wave JS checks the link between the controller and the device over several rounds
    /// and rates it 0–10.
    CheckLifeline,
    /// The controller finds the device's neighbours again and gives it new routes.
    RebuildRoutes,
}

impl Upkeep {
    /// Its name in words ("a re-interview").
    pub fn with_article(self) -> &'static str {
        match self {
            Self::Reinterview => "a re-interview",
            Self::CheckLifeline => "a lifeline health check",
            Self::RebuildRoutes => "a route rebuild",
        }
    }

    /// Its name without an article ("re-interview").
    pub fn name(self) -> &'static str {
        &self.with_article()[2..]
    }

    /// Whether Z-Wave JS can stop it once begun (only a health check).
    pub fn is_abortable(self) -> bool {
        self == Self::CheckLifeline
    }
}

/// What an operation found.
#[derive(Debug, Clone, PartialEq)]
pub struct UpkeepOutcome {
    /// Which operation.
    pub operation: Upkeep,
    /// From its start to its end.
    pub took: Duration,
    /// What it found.
    pub result: UpkeepResult,
}

/// What each operation found.
#[derive(Debug, Clone, PartialEq)]
pub enum UpkeepResult {
    /// The interview completed; `stages`: the stages seen completed, in order.
    Reinterviewed {
        /// Interview stages completed (`ProtocolInfo`, `NodeInfo`, …), as far as seen.
        stages: Vec<String>,
    },
    /// The lifeline health check ended (or was aborted: the rounds done by then).
    Lifeline {
        /// The worst round's rating, 0 (unusable) to 10 (perfect).
        rating: u8,
        /// Each round.
        rounds: Vec<LifelineRound>,
        /// Whether it was aborted before its last round.
        aborted: bool,
    },
    /// The route rebuild ended: whether the controller says it succeeded.
    Routes {
        /// The controller's word.
        rebuilt: bool,
    },
}

/// One round of a lifeline health check, as zwave-js reports it; a field it left out, or
/// sent out of any plausible range, is `None`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LifelineRound {
    /// This round's rating, 0–10.
    pub rating: Option<u8>,
    /// The slowest of its ten pings, in milliseconds.
    pub latency_ms: Option<u32>,
    /// Pings the device did not acknowledge, of ten.
    pub failed_pings_node: Option<u8>,
    /// Pings the controller missed from the device (devices with Powerlevel only), of ten.
    pub failed_pings_controller: Option<u8>,
    /// The device's neighbours.
    pub neighbors: Option<u8>,
    /// Pings that needed another route.
    pub route_changes: Option<u8>,
    /// Signal above the noise, in dB.
    pub snr_margin_db: Option<i16>,
}

/// The rounds a health check runs (zwave-js's default; it takes 1–10).
pub const HEALTH_CHECK_ROUNDS: u8 = 5;

/// Most bytes of a health check's summary read: ten rounds of seven numbers are far less.
pub const MAX_SUMMARY_BYTES: usize = 16 * 1024;

/// Why an operation did not end with an outcome.
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum UpkeepError {
    /// The node has an operation running already.
    #[error("{} is already running on node {node}: one upkeep operation at a time per device", running.with_article())]
    Busy {
        /// The node.
        node: NodeId,
        /// What runs on it.
        running: Upkeep,
        /// Since when, epoch milliseconds.
        since_ms: i64,
    },
    /// Too many operations run at once.
    #[error(
        "{limit} upkeep operations are running already; at most {limit} run at once: try again when one has ended"
    )]
    TooMany {
        /// The bound.
        limit: usize,
    },
    /// The backend refused or failed the call.
    #[error(transparent)]
    Network(#[from] NetworkError),
    /// The driver said the operation failed (an interview failed for good).
    #[error("Z-Wave JS said the {} failed: {message}", operation.name())]
    Failed {
        /// Which operation.
        operation: Upkeep,
        /// What it said.
        message: String,
    },
    /// No end within the bound.
    #[error("the {} did not end within {after:?}", operation.name())]
    NotEnded {
        /// Which operation.
        operation: Upkeep,
        /// The bound.
        after: Duration,
    },
    /// The answer does not read.
    #[error("the answer to `{api}` does not read: {reason}")]
    BadAnswer {
        /// The call answered.
        api: &'static str,
        /// What is wrong with it, naming the value.
        reason: String,
    },
}

/// Reads a health check's summary (`{rating, results: [...]}`; Z-Wave JS UI adds
/// `targetNodeId`), answered to `api`. The rating must be a whole number 0–10; each round's
/// fields are read on their own.
///
/// # Errors
/// No summary, one too large, or no rating 0–10.
pub fn lifeline_summary(
    api: &'static str,
    summary: &Value,
) -> Result<(u8, Vec<LifelineRound>), UpkeepError> {
    let bad = |reason: String| UpkeepError::BadAnswer { api, reason };
    let text = summary.to_string();
    if text.len() > MAX_SUMMARY_BYTES {
        return Err(bad(format!(
            "a summary of {} bytes, over the {MAX_SUMMARY_BYTES}-byte limit",
            text.len()
        )));
    }
    let rating = summary.get("rating").ok_or_else(|| {
        bad(format!(
            "no rating in {}",
            crate::network::text::clean(&text, 200)
        ))
    })?;
    let rating = rating
        .as_u64()
        .and_then(|rating| u8::try_from(rating).ok())
        .filter(|rating| *rating <= 10)
        .ok_or_else(|| {
            bad(format!(
                "a rating of {}, where zwave-js rates 0 to 10",
                crate::network::text::clean(&rating.to_string(), 40)
            ))
        })?;
    let rounds = summary
        .get("results")
        .and_then(Value::as_array)
        .map(|rounds| rounds.iter().take(10).map(lifeline_round).collect())
        .unwrap_or_default();
    Ok((rating, rounds))
}

/// One round, each field within what zwave-js can report.
pub fn lifeline_round(round: &Value) -> LifelineRound {
    let whole = |key: &str, most: u64| {
        round
            .get(key)
            .and_then(Value::as_u64)
            .filter(|n| *n <= most)
    };
    LifelineRound {
        rating: whole("rating", 10).and_then(|n| u8::try_from(n).ok()),
        // zwave-js counts ten pings' ticks; more than a minute is no latency.
        latency_ms: whole("latency", 60_000).and_then(|n| u32::try_from(n).ok()),
        failed_pings_node: whole("failedPingsNode", 10).and_then(|n| u8::try_from(n).ok()),
        failed_pings_controller: whole("failedPingsController", 10)
            .and_then(|n| u8::try_from(n).ok()),
        neighbors: whole("numNeighbors", 232).and_then(|n| u8::try_from(n).ok()),
        route_changes: whole("routeChanges", 10).and_then(|n| u8::try_from(n).ok()),
        snr_margin_db: round
            .get("snrMargin")
            .and_then(Value::as_i64)
            .filter(|n| (-128..=128).contains(n))
            .and_then(|n| i16::try_from(n).ok()),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn a_summary_reads_its_rating_and_rounds_and_leaves_absurd_fields_unknown() {
        let summary = json!({"rating": 7, "targetNodeId": 1, "results": [
            {"latency": 20, "failedPingsNode": 0, "numNeighbors": 3, "routeChanges": 0, "snrMargin": 15, "rating": 7},
            {"latency": -5, "failedPingsNode": 99, "numNeighbors": "many", "snrMargin": 9999, "rating": 11}
        ]});
        let (rating, rounds) = lifeline_summary("checkLifelineHealth", &summary).unwrap();
        assert_eq!(rating, 7);
        assert_eq!(rounds[0].latency_ms, Some(20));
        assert_eq!(rounds[0].snr_margin_db, Some(15));
        assert_eq!(rounds[1], LifelineRound::default());
    }

    #[test]
    fn a_summary_without_a_plausible_rating_is_refused_naming_it() {
        for (summary, says) in [
            (json!({"results": []}), "no rating in {\"results\":[]}"),
            (
                json!({"rating": 11}),
                "a rating of 11, where zwave-js rates 0 to 10",
            ),
            (
                json!({"rating": -1}),
                "a rating of -1, where zwave-js rates 0 to 10",
            ),
            (
                json!({"rating": "ten"}),
                "a rating of \"ten\", where zwave-js rates 0 to 10",
            ),
            (json!(null), "no rating in null"),
        ] {
            let err = lifeline_summary("node.check_lifeline_health", &summary).unwrap_err();
            assert_eq!(
                err.to_string(),
                format!("the answer to `node.check_lifeline_health` does not read: {says}")
            );
        }
        let huge = json!({"rating": 1, "results": vec![json!({"latency": 1}); 2000]});
        let err = lifeline_summary("checkLifelineHealth", &huge).unwrap_err();
        assert!(
            err.to_string().contains("over the 16384-byte limit"),
            "{err}"
        );
    }

    #[test]
    fn names_read_with_and_without_their_article() {
        assert_eq!(Upkeep::Reinterview.name(), "re-interview");
        assert_eq!(Upkeep::CheckLifeline.name(), "lifeline health check");
        assert_eq!(Upkeep::RebuildRoutes.with_article(), "a route rebuild");
    }
}
