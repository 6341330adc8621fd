//! [`UpkeepSignal`]: what a backend hears of an upkeep operation under way. zwave-js-server
//! sends the interview's events to every listening client and a health check's progress to
//! its caller (`check lifeline health progress`, schema 31+ with `lastResult`); Z-Wave JS UI
//! shows the interview in its node list only (`captures/upkeep/FACTS.md`).

use std::collections::HashMap;

use serde_json::value::RawValue;

use crate::network::text::{MAX_TEXT_CHARS, clean};

/// Most bytes of an interview stage's name read (`OverwriteConfig` is the longest).
const MAX_STAGE_BYTES: usize = 64;

/// What was heard of an operation on a node.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum UpkeepSignal {
    /// The interview began (again).
    InterviewStarted,
    /// An interview stage completed (`ProtocolInfo`, `NodeInfo`, `CommandClasses`,
    /// `OverwriteConfig`, `Complete`).
    StageCompleted(String),
    /// The interview completed.
    InterviewCompleted,
    /// The interview failed; `last`: the driver gives up (no attempt follows).
    InterviewFailed {
        /// The driver's words.
        message: String,
        /// Whether it was the last attempt.
        last: bool,
    },
    /// A health check's round ended.
    HealthRound {
        /// Which round, from 1.
        round: u8,
        /// Of how many.
        total: u8,
        /// Its rating, 0–10.
        rating: u8,
    },
}

impl UpkeepSignal {
    /// The signal a zwave-js-server node event named `name` carries, if any (`None` also for
    /// one whose fields do not read: it is only progress, and the operation's own end is
    /// waited for apart).
    pub fn of_event(name: &str, event: &HashMap<String, &RawValue>) -> Option<Self> {
        let member = |key: &str| event.get(key).map(|raw| raw.get());
        let small = |key: &str, most: u64| {
            member(key)
                .and_then(|raw| serde_json::from_str::<u64>(raw).ok())
                .filter(|n| *n <= most)
                .and_then(|n| u8::try_from(n).ok())
        };
        match name {
            "interview started" => Some(Self::InterviewStarted),
            "interview completed" => Some(Self::InterviewCompleted),
            "interview stage completed" => member("stageName")
                .filter(|raw| raw.len() <= MAX_STAGE_BYTES)
                .and_then(|raw| serde_json::from_str::<String>(raw).ok())
                .map(|stage| Self::StageCompleted(clean(&stage, MAX_STAGE_BYTES).into_owned())),
            "interview failed" => {
                #[derive(serde::Deserialize)]
                #[serde(rename_all = "camelCase")]
                struct Failed {
                    #[serde(default)]
                    error_message: String,
                    #[serde(default)]
                    is_final: Option<bool>,
                }
                let failed: Failed = member("args")
                    .and_then(|raw| serde_json::from_str(raw).ok())
                    .unwrap_or(Failed {
                        error_message: String::new(),
                        is_final: None,
                    });
                Some(Self::InterviewFailed {
                    message: clean(&failed.error_message, MAX_TEXT_CHARS).into_owned(),
                    last: failed.is_final.unwrap_or(true),
                })
            }
            "check lifeline health progress" => {
                let total = small("totalRounds", 10).filter(|total| *total >= 1)?;
                let round = small("round", u64::from(total)).filter(|round| *round >= 1)?;
                Some(Self::HealthRound {
                    round,
                    total,
                    rating: small("lastRating", 10)?,
                })
            }
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn signal(text: &str) -> Option<UpkeepSignal> {
        let event: HashMap<String, &RawValue> = serde_json::from_str(text).unwrap();
        let name: String = serde_json::from_str(event["event"].get()).unwrap();
        UpkeepSignal::of_event(&name, &event)
    }

    #[test]
    fn recorded_events_read_and_absurd_ones_are_no_progress() {
        assert_eq!(
            signal(
                r#"{"source":"node","event":"interview stage completed","nodeId":3,"stageName":"ProtocolInfo"}"#
            ),
            Some(UpkeepSignal::StageCompleted("ProtocolInfo".into()))
        );
        assert_eq!(
            signal(
                r#"{"source":"node","event":"check lifeline health progress","nodeId":2,"round":2,"totalRounds":5,"lastRating":9,"lastResult":{}}"#
            ),
            Some(UpkeepSignal::HealthRound {
                round: 2,
                total: 5,
                rating: 9
            })
        );
        assert_eq!(
            signal(
                r#"{"source":"node","event":"interview failed","nodeId":2,"args":{"errorMessage":"Node did not respond","isFinal":true,"attempt":5,"maxAttempts":5}}"#
            ),
            Some(UpkeepSignal::InterviewFailed {
                message: "Node did not respond".into(),
                last: true
            })
        );
        for absurd in [
            r#"{"event":"check lifeline health progress","round":7,"totalRounds":5,"lastRating":9}"#,
            r#"{"event":"check lifeline health progress","round":1,"totalRounds":5,"lastRating":77}"#,
            r#"{"event":"check lifeline health progress","round":1,"totalRounds":500,"lastRating":7}"#,
            r#"{"event":"interview stage completed","stageName":7}"#,
            r#"{"event":"value updated"}"#,
        ] {
            assert_eq!(signal(absurd), None, "{absurd}");
        }
    }
}
