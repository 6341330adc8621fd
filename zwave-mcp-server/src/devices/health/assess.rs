//! Judging a device's link from what zwave-js counts: dead, weak (and why), asleep, not
//! known yet, or fine. The thresholds are ours, chosen to flag what a person would want to
//! hear about, and stated here once.

use std::time::Duration;

use serde::Serialize;

use crate::{
    devices::{battery, is_online},
    network::{
        NodeInfo, NodeStatus,
        health::{NodeStatistics, Route, Rssi},
    },
};

/// Fewer commands than this say nothing about a share of them (one timeout of three is luck).
pub const MIN_COMMANDS: u64 = 10;
/// A share of commands that could not be sent at or above this (percent) is weak.
pub const FAILED_PERCENT: u64 = 5;
/// A share of Gets whose answer did not come in time at or above this (percent) is weak.
pub const TIMEOUT_PERCENT: u64 = 10;
/// A signal at or below this (dBm) at the controller is weak: a few dB above the noise of a
/// typical home.
pub const WEAK_SIGNAL_DBM: i8 = -85;
/// An average round trip at or above this is slow (direct links take tens of ms, routes
/// through repeaters a few hundred).
pub const SLOW_ROUND_TRIP: Duration = Duration::from_millis(500);
/// A route through this many repeaters or more is long.
pub const LONG_ROUTE: usize = 3;
/// A device that is not asleep and not heard from for this long is quiet.
pub const QUIET_FOR: Duration = Duration::from_secs(24 * 3600);
/// A battery device (whose wake-ups may be hours apart) not heard from for this long is quiet.
pub const BATTERY_QUIET_FOR: Duration = Duration::from_secs(7 * 24 * 3600);

/// What a device's link is like, the worst first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Condition {
    /// The controller cannot reach it (Z-Wave JS marked it dead or failed).
    Dead,
    /// Reachable, with trouble: lost or late commands, a weak signal, a slow or long route.
    Weak,
    /// Its interview has not finished, or nothing is known of its link yet.
    Unknown,
    /// A battery device asleep until its next wake-up: not reachable now, as expected.
    Asleep,
    /// Nothing to worry about.
    Fine,
}

/// One thing wrong with a link, with the figures that show it.
#[derive(Debug, Clone, PartialEq)]
pub enum Problem {
    /// Commands that could not be sent: `failed` of `attempts`.
    FailedToSend {
        /// Commands not sent.
        failed: u64,
        /// Commands sent or not.
        attempts: u64,
    },
    /// Gets whose answer did not come in time: `timeouts` of `sent`.
    TimedOut {
        /// Answers too late.
        timeouts: u64,
        /// Commands sent.
        sent: u64,
    },
    /// A weak signal at the controller.
    WeakSignal(i8),
    /// The controller detected no signal of it.
    NoSignal,
    /// Commands take this long on average.
    Slow(Duration),
    /// Its last route needs this many repeaters.
    LongRoute(usize),
    /// Its last route ran at 9.6 kbit/s, the slowest speed.
    SlowestSpeed,
    /// Not heard from for this long.
    Quiet(Duration),
}

impl Problem {
    /// How bad it is, to put the weakest first: a share of lost commands weighs most.
    pub fn weight(&self) -> u64 {
        match self {
            Self::FailedToSend { failed, attempts } => 1_000 + percent(*failed, *attempts) * 10,
            Self::TimedOut { timeouts, sent } => 500 + percent(*timeouts, *sent) * 5,
            Self::NoSignal => 400,
            Self::WeakSignal(dbm) => 300 + u64::from(dbm.unsigned_abs()),
            Self::Quiet(_) => 250,
            Self::Slow(rtt) => 200 + u64::try_from(rtt.as_millis() / 100).unwrap_or(u64::MAX),
            Self::LongRoute(repeaters) => 100 + *repeaters as u64,
            Self::SlowestSpeed => 100,
        }
    }
}

/// `part` of `whole` in whole percent, rounded.
pub fn percent(part: u64, whole: u64) -> u64 {
    part.saturating_mul(100)
        .saturating_add(whole / 2)
        .checked_div(whole)
        .unwrap_or(0)
}

/// What is wrong with `node`'s link, from `statistics` (the latest known) at `now_ms`, worst
/// first.
pub fn problems(node: &NodeInfo, statistics: Option<&NodeStatistics>, now_ms: i64) -> Vec<Problem> {
    let mut found = Vec::new();
    if let Some(statistics) = statistics {
        counted(statistics, &mut found);
        match statistics.rssi {
            Some(Rssi::Dbm(dbm)) if dbm <= WEAK_SIGNAL_DBM => found.push(Problem::WeakSignal(dbm)),
            Some(Rssi::NoSignal) => found.push(Problem::NoSignal),
            _ => {}
        }
        if let Some(rtt) = statistics.round_trip.filter(|rtt| *rtt >= SLOW_ROUND_TRIP) {
            found.push(Problem::Slow(rtt));
        }
        if let Some(route) = &statistics.last_route {
            routed(route, &mut found);
        }
    }
    let quiet_for = if battery(node).is_some() {
        BATTERY_QUIET_FOR
    } else {
        QUIET_FOR
    };
    if let Some(seen) = last_seen(node, statistics) {
        let silent = Duration::from_millis(u64::try_from(now_ms.saturating_sub(seen)).unwrap_or(0));
        if silent >= quiet_for && is_online(node) {
            found.push(Problem::Quiet(silent));
        }
    }
    found.sort_by_key(|problem| std::cmp::Reverse(problem.weight()));
    found
}

/// When `node` was last heard from (epoch ms): the later of its statistics' `lastSeen` and
/// its last activity (Z-Wave JS UI's `lastActive` topic moves between two node lists).
pub fn last_seen(node: &NodeInfo, statistics: Option<&NodeStatistics>) -> Option<i64> {
    statistics
        .and_then(|statistics| statistics.last_seen_ms)
        .max(node.last_active)
}

/// Lost and late commands, once there are enough to judge.
fn counted(statistics: &NodeStatistics, found: &mut Vec<Problem>) {
    let sent = statistics.commands_sent.unwrap_or(0);
    let failed = statistics.failed_to_send.unwrap_or(0);
    let attempts = sent.saturating_add(failed);
    if attempts >= MIN_COMMANDS && failed > 0 && percent(failed, attempts) >= FAILED_PERCENT {
        found.push(Problem::FailedToSend { failed, attempts });
    }
    let timeouts = statistics.timeouts.unwrap_or(0);
    if sent >= MIN_COMMANDS && timeouts > 0 && percent(timeouts, sent) >= TIMEOUT_PERCENT {
        found.push(Problem::TimedOut { timeouts, sent });
    }
}

/// A long or slowest route.
fn routed(route: &Route, found: &mut Vec<Problem>) {
    if route.repeaters.len() >= LONG_ROUTE {
        found.push(Problem::LongRoute(route.repeaters.len()));
    }
    if route.data_rate == Some(crate::network::health::DataRate::Kbit9_6) {
        found.push(Problem::SlowestSpeed);
    }
}

/// The condition of `node`'s link, given its `problems`.
pub fn condition(node: &NodeInfo, problems: &[Problem]) -> Condition {
    match &node.status {
        Some(NodeStatus::Asleep) => Condition::Asleep,
        _ if !is_online(node) => Condition::Dead,
        _ if !problems.is_empty() => Condition::Weak,
        Some(NodeStatus::Alive | NodeStatus::Awake) if node.ready => Condition::Fine,
        _ => Condition::Unknown,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{network::NodeId, sim::home::demo_node};

    fn statistics(sent: u64, failed: u64, timeouts: u64) -> NodeStatistics {
        NodeStatistics {
            commands_sent: Some(sent),
            failed_to_send: Some(failed),
            timeouts: Some(timeouts),
            ..NodeStatistics::default()
        }
    }

    #[test]
    fn lost_and_late_commands_weigh_once_there_are_enough_of_them() {
        let node = demo_node(2);
        let now = node.last_active.unwrap();
        // Three of four: too few commands to judge.
        assert_eq!(problems(&node, Some(&statistics(1, 3, 0)), now), []);
        // 5 of 16 timed out: 31%.
        let found = problems(&node, Some(&statistics(16, 0, 5)), now);
        assert_eq!(
            found,
            [Problem::TimedOut {
                timeouts: 5,
                sent: 16
            }]
        );
        assert_eq!(condition(&node, &found), Condition::Weak);
        // Under the thresholds: fine.
        let found = problems(&node, Some(&statistics(100, 4, 9)), now);
        assert_eq!(found, []);
        assert_eq!(condition(&node, &found), Condition::Fine);
        // Both: the lost ones first.
        let found = problems(&node, Some(&statistics(18, 2, 4)), now);
        assert!(
            matches!(
                found.as_slice(),
                [
                    Problem::FailedToSend {
                        failed: 2,
                        attempts: 20
                    },
                    Problem::TimedOut { .. }
                ]
            ),
            "{found:?}"
        );
    }

    #[test]
    fn a_weak_signal_a_slow_or_long_route_and_silence_are_problems() {
        let node = demo_node(3);
        let now = node.last_active.unwrap();
        let route = Route {
            data_rate: Some(crate::network::health::DataRate::Kbit9_6),
            repeaters: vec![NodeId(4), NodeId(5), NodeId(6)],
            rssi: None,
            failed_between: None,
        };
        let weak = NodeStatistics {
            rssi: Some(Rssi::Dbm(-91)),
            round_trip: Some(Duration::from_millis(740)),
            last_route: Some(route),
            ..NodeStatistics::default()
        };
        assert_eq!(
            problems(&node, Some(&weak), now),
            [
                Problem::WeakSignal(-91),
                Problem::Slow(Duration::from_millis(740)),
                Problem::LongRoute(3),
                Problem::SlowestSpeed
            ]
        );
        let two_days = now + 2 * 24 * 3600 * 1000;
        assert!(matches!(
            problems(&node, None, two_days).as_slice(),
            [Problem::Quiet(_)]
        ));
        // A battery sensor sleeps for days: two is not quiet for it.
        let sensor = demo_node(4);
        assert_eq!(
            problems(
                &sensor,
                None,
                sensor.last_active.unwrap() + 2 * 24 * 3600 * 1000
            ),
            []
        );
    }

    #[test]
    fn dead_asleep_and_unknown_come_from_the_status() {
        assert_eq!(condition(&demo_node(7), &[]), Condition::Dead);
        let mut asleep = demo_node(4);
        asleep.status = Some(NodeStatus::Asleep);
        assert_eq!(condition(&asleep, &[]), Condition::Asleep);
        let mut interviewing = demo_node(2);
        interviewing.ready = false;
        assert_eq!(condition(&interviewing, &[]), Condition::Unknown);
        assert_eq!(percent(5, 16), 31);
        assert_eq!(percent(1, 0), 0);
    }
}
