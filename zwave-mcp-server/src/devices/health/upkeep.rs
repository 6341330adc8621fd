//! Upkeep operations in words: what a re-interview, a lifeline health check or a route
//! rebuild found, how far one under way is, and why one was not started. Pure: the facts
//! come from [`crate::network::health::upkeep`].

use std::time::Duration;

use crate::network::health::upkeep::{
    LateOutcome, LifelineRound, Running, Upkeep, UpkeepError, UpkeepOutcome, UpkeepProgress,
    UpkeepResult,
};

use super::words::{clock, millis};

/// A lifeline rating in words (zwave-js rates 0–10).
pub fn rating_in_words(rating: u8) -> &'static str {
    match rating {
        10 => "perfect",
        8..=9 => "good",
        6..=7 => "acceptable",
        4..=5 => "weak",
        1..=3 => "bad",
        _ => "unusable",
    }
}

/// What `outcome` found, about `device` (described: `"name" (node 3, Room)`).
pub fn outcome_in_words(device: &str, outcome: &UpkeepOutcome) -> String {
    let took = millis(outcome.took);
    match &outcome.result {
        UpkeepResult::Reinterviewed { stages } => {
            let stages = if stages.is_empty() {
                String::new()
            } else {
                format!(" (stages: {})", stages.join(", "))
            };
            format!("{device} was re-interviewed in {took}{stages}: Z-Wave JS knows it afresh.")
        }
        UpkeepResult::Lifeline {
            rounds,
            aborted: true,
            ..
        } if rounds.is_empty() => format!(
            "The lifeline health check of {device} was aborted before its first round ended (after {took}): nothing was measured."
        ),
        UpkeepResult::Lifeline {
            rating,
            rounds,
            aborted,
        } => {
            let over = if *aborted {
                format!(
                    "over the {} round{} done before it was aborted",
                    rounds.len(),
                    plural(rounds.len())
                )
            } else {
                format!(
                    "its worst of {} round{}",
                    rounds.len(),
                    plural(rounds.len())
                )
            };
            let mut text = format!(
                "The lifeline health check of {device} rated its link to the controller {rating} of 10, {} ({over}, in {took}).",
                rating_in_words(*rating)
            );
            if let Some(worst) = rounds.iter().min_by_key(|round| round.rating.unwrap_or(0)) {
                let facts = round_in_words(worst);
                if !facts.is_empty() {
                    text.push_str(&format!(" Its worst round: {facts}."));
                }
            }
            text
        }
        UpkeepResult::Routes { rebuilt: true } => {
            format!("The controller rebuilt the routes of {device} in {took}.")
        }
        UpkeepResult::Routes { rebuilt: false } => format!(
            "The controller could not rebuild the routes of {device} (it answered that the rebuild failed, after {took}): the device may be out of reach; get_zwave_health with ping tells whether it answers."
        ),
    }
}

/// One round's figures: `slowest ping 70 ms, no ping lost, 3 neighbours, signal 24 dB above
/// the noise`.
fn round_in_words(round: &LifelineRound) -> String {
    let mut facts = Vec::new();
    if let Some(latency) = round.latency_ms {
        facts.push(format!("slowest ping {latency} ms"));
    }
    match round.failed_pings_node {
        Some(0) => facts.push("no ping lost".to_owned()),
        Some(lost) => facts.push(format!("{lost} of 10 pings lost")),
        None => {}
    }
    if let Some(lost) = round.failed_pings_controller.filter(|lost| *lost > 0) {
        facts.push(format!("{lost} of 10 of its pings to the controller lost"));
    }
    if let Some(neighbors) = round.neighbors {
        facts.push(format!(
            "{neighbors} neighbour{}",
            plural(usize::from(neighbors))
        ));
    }
    if let Some(margin) = round.snr_margin_db {
        facts.push(format!("signal {margin} dB above the noise"));
    }
    facts.join(", ")
}

/// Progress under way in words, about `device`.
pub fn progress_in_words(device: &str, operation: Upkeep, progress: &UpkeepProgress) -> String {
    match progress {
        UpkeepProgress::Begun => {
            format!("Z-Wave JS began {} of {device}", operation.with_article())
        }
        UpkeepProgress::Interview {
            stage,
            percent: Some(percent),
        } => {
            format!("interview of {device}: {stage} ({percent}%)")
        }
        UpkeepProgress::Interview {
            stage,
            percent: None,
        } => {
            format!("interview of {device}: {stage} done")
        }
        UpkeepProgress::HealthRound {
            round,
            total,
            rating,
        } => format!("health check of {device}: round {round} of {total} rated {rating} of 10"),
    }
}

/// Why `operation` on `device` did not end with an outcome.
pub fn error_in_words(device: &str, operation: Upkeep, error: &UpkeepError, now_ms: i64) -> String {
    match error {
        UpkeepError::Busy {
            running, since_ms, ..
        } => format!(
            "{device} has {} running since {}: one upkeep operation at a time per device; nothing was sent. Ask again when it has ended (this tool then tells how it ended).",
            running.with_article(),
            clock(*since_ms, now_ms)
        ),
        UpkeepError::TooMany { limit } => format!(
            "{limit} upkeep operations are running on other devices already, the most this server runs at once: nothing was sent to {device}; ask again when one has ended."
        ),
        UpkeepError::NotEnded { after, .. } => format!(
            "{} of {device} did not end within {}: {}",
            capitalized(operation.with_article()),
            millis(*after),
            goes_on(operation)
        ),
        other => format!(
            "{} of {device} failed: {other}",
            capitalized(operation.with_article())
        ),
    }
}

/// What becomes of an operation its caller stopped waiting for.
pub fn goes_on(operation: Upkeep) -> &'static str {
    match operation {
        Upkeep::CheckLifeline => {
            "Z-Wave JS was asked to abort it; the next call on this device tells what it found by then."
        }
        Upkeep::Reinterview => {
            "a re-interview cannot be aborted: Z-Wave JS goes on with it, and the next call on this device tells how it ended (get_device_status tells whether the device is ready)."
        }
        Upkeep::RebuildRoutes => {
            "a route rebuild cannot be aborted: the controller goes on with it, and the next call on this device tells how it ended."
        }
    }
}

/// The caller's wait ran out after `waited`: what it says.
pub fn still_running(
    device: &str,
    operation: Upkeep,
    waited: Duration,
    watched: Duration,
) -> String {
    format!(
        "{} of {device} did not end within {} (--upkeep-timeout): {} This server watches it up to {} in all.",
        capitalized(operation.with_article()),
        millis(waited),
        goes_on(operation),
        millis(watched)
    )
}

/// An outcome that came after its caller stopped waiting, told to the next call.
pub fn late_in_words(device: &str, late: &LateOutcome, now_ms: i64) -> String {
    let when = format!(
        "{} asked at {} ended at {}, after its caller stopped waiting",
        capitalized(late.operation.with_article()),
        clock(late.asked_ms, now_ms),
        clock(late.ended_ms, now_ms)
    );
    match &late.outcome {
        Ok(outcome) => format!("Earlier: {when}: {}", outcome_in_words(device, outcome)),
        Err(UpkeepError::NotEnded { after, .. }) => format!(
            "Earlier: {} asked at {} of {device} was not seen to end within {}.",
            late.operation.with_article(),
            clock(late.asked_ms, now_ms),
            millis(*after)
        ),
        Err(error) => format!("Earlier: {when}: it failed: {error}."),
    }
}

/// What runs on a device, for a read: `a re-interview since 18:02`.
pub fn running_in_words(running: &Running, now_ms: i64) -> String {
    format!(
        "{} since {}",
        running.operation.with_article(),
        clock(running.since_ms, now_ms)
    )
}

fn capitalized(text: &str) -> String {
    let mut chars = text.chars();
    chars.next().map_or_else(String::new, |first| {
        first.to_uppercase().chain(chars).collect()
    })
}

fn plural(count: usize) -> &'static str {
    if count == 1 { "" } else { "s" }
}

#[cfg(test)]
mod tests {
    use super::*;

    const DEVICE: &str = "\"Switch One\" (node 2, Kitchen)";

    #[test]
    fn outcomes_read_as_a_person_says_them() {
        let round = LifelineRound {
            rating: Some(9),
            latency_ms: Some(70),
            failed_pings_node: Some(0),
            neighbors: Some(3),
            snr_margin_db: Some(24),
            ..LifelineRound::default()
        };
        let checked = UpkeepOutcome {
            operation: Upkeep::CheckLifeline,
            took: Duration::from_millis(1200),
            result: UpkeepResult::Lifeline {
                rating: 9,
                rounds: vec![round.clone(); 5],
                aborted: false,
            },
        };
        assert_eq!(
            outcome_in_words(DEVICE, &checked),
            "The lifeline health check of \"Switch One\" (node 2, Kitchen) rated its link to the controller 9 of 10, good (its worst of 5 rounds, in 1.2 s). Its worst round: slowest ping 70 ms, no ping lost, 3 neighbours, signal 24 dB above the noise."
        );
        let aborted = UpkeepOutcome {
            result: UpkeepResult::Lifeline {
                rating: 9,
                rounds: vec![round],
                aborted: true,
            },
            ..checked
        };
        assert!(
            outcome_in_words(DEVICE, &aborted)
                .contains("(over the 1 round done before it was aborted, in 1.2 s)")
        );
        let routes = UpkeepOutcome {
            operation: Upkeep::RebuildRoutes,
            took: Duration::from_millis(40),
            result: UpkeepResult::Routes { rebuilt: false },
        };
        assert!(outcome_in_words(DEVICE, &routes).starts_with("The controller could not rebuild the routes of \"Switch One\" (node 2, Kitchen) (it answered that the rebuild failed, after 40 ms)"));
        assert_eq!(rating_in_words(0), "unusable");
        assert_eq!(
            still_running(
                DEVICE,
                Upkeep::Reinterview,
                Duration::from_secs(2),
                Duration::from_secs(8)
            ),
            "A re-interview of \"Switch One\" (node 2, Kitchen) did not end within 2.0 s (--upkeep-timeout): a re-interview cannot be aborted: Z-Wave JS goes on with it, and the next call on this device tells how it ended (get_device_status tells whether the device is ready). This server watches it up to 8.0 s in all."
        );
    }
}
