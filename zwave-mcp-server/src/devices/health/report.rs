//! A device's health as the health read gives it ([`DeviceHealth`]: the figures and a
//! sentence), the controller's ([`ControllerHealth`]), and the order of a network's: dead
//! first, then the weakest.

use schemars::JsonSchema;
use serde::Serialize;

use super::{
    assess::{Condition, Problem, condition, last_seen, problems},
    words,
};
use crate::{
    devices::{battery, describe, display_name, status_word},
    network::{
        HealthBook, NodeId, NodeInfo,
        health::{ControllerStatistics, ListedStatistics, NodeStatistics},
    },
};

/// A device's link: how it is, the figures zwave-js counts, and a sentence saying it.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct DeviceHealth {
    /// Device name.
    pub device: String,
    /// Z-Wave node id.
    pub node_id: u16,
    /// Location, empty when not set.
    pub location: String,
    /// dead, weak, unknown (not known yet), asleep or fine.
    #[schemars(with = "ConditionWord")]
    pub condition: Condition,
    /// Node status: Alive, Dead, Asleep, Awake or Unknown.
    pub status: String,
    /// Since when it has had that status (epoch ms), when this server saw it change.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub status_since_ms: Option<i64>,
    /// When it was last heard from (epoch ms).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_seen_ms: Option<i64>,
    /// Average round trip of a command, in ms.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub round_trip_ms: Option<f64>,
    /// Signal strength at the controller, in dBm.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub signal_dbm: Option<i8>,
    /// Commands sent to it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub commands_sent: Option<u64>,
    /// Commands to it that could not be sent.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub failed_to_send: Option<u64>,
    /// Commands whose answer did not come in time.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub timed_out: Option<u64>,
    /// The last route that worked, in words ("through Hall Switch at 40 kbit/s").
    #[serde(skip_serializing_if = "Option::is_none")]
    pub route: Option<String>,
    /// Battery level in percent.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub battery: Option<u8>,
    /// What is wrong with its link, worst first.
    pub problems: Vec<String>,
    /// All of it in a sentence.
    pub summary: String,
    /// How bad its worst problem is, to order a network's devices.
    #[serde(skip)]
    weight: u64,
}

// `condition`'s words in the schema, without a description each (the field's says them:
// one per word doubled the tool's output schema's share of it).
#[derive(JsonSchema)]
#[serde(rename_all = "lowercase")]
#[allow(dead_code, reason = "only its schema is used")]
enum ConditionWord {
    Dead,
    Weak,
    Unknown,
    Asleep,
    Fine,
}

/// The controller's counts, when they say something.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ControllerHealth {
    /// Messages it did not accept (NAK), collided (CAN), timed out or could not be sent, in
    /// words; empty when none.
    pub problems: Vec<String>,
    /// Messages sent to it and received from it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub messages: Option<u64>,
}

/// What a device's health is read from.
#[derive(Debug, Clone, Copy)]
pub struct Facts<'a> {
    /// The node, as cached.
    pub node: &'a NodeInfo,
    /// Its latest statistics.
    pub statistics: Option<&'a NodeStatistics>,
    /// Since when it has had its status, when known.
    pub status_since_ms: Option<i64>,
    /// Now, epoch ms.
    pub now_ms: i64,
}

impl<'a> Facts<'a> {
    /// `node`'s facts from the book (whose statistics are newer than the list's) at `now_ms`.
    pub fn of(node: &'a NodeInfo, book: &'a HealthBook, now_ms: i64) -> Self {
        let listed = match &node.statistics {
            Some(ListedStatistics::Node(statistics)) => Some(statistics),
            _ => None,
        };
        Self {
            node,
            statistics: book.statistics(node.id).or(listed),
            status_since_ms: node
                .status
                .as_ref()
                .and_then(|status| book.status_since(node.id, status)),
            now_ms,
        }
    }
}

impl DeviceHealth {
    /// The health of the device in `facts`; `name_of` names a repeater this agent may see
    /// (`None`: it is "another device").
    pub fn of(facts: &Facts<'_>, name_of: &dyn Fn(NodeId) -> Option<String>) -> Self {
        let node = facts.node;
        let statistics = facts.statistics;
        let found = problems(node, statistics, facts.now_ms);
        let condition = condition(node, &found);
        let last_route = statistics.and_then(|statistics| statistics.last_route.as_ref());
        let route = last_route.map(|route| {
            let repeaters: Vec<String> = route
                .repeaters
                .iter()
                .map(|id| name_of(*id).unwrap_or_else(|| "another device".to_owned()))
                .collect();
            words::route(route, &repeaters)
        });
        let last_seen_ms = last_seen(node, statistics);
        let mut health = Self {
            device: display_name(node),
            node_id: node.id.0,
            location: node.loc.clone(),
            condition,
            status: status_word(node).to_owned(),
            status_since_ms: facts.status_since_ms,
            last_seen_ms,
            round_trip_ms: statistics
                .and_then(|statistics| statistics.round_trip)
                .map(|rtt| (rtt.as_secs_f64() * 10_000.0).round() / 10.0),
            signal_dbm: statistics
                .and_then(|statistics| statistics.rssi)
                .and_then(|rssi| rssi.dbm()),
            commands_sent: statistics.and_then(|statistics| statistics.commands_sent),
            failed_to_send: statistics.and_then(|statistics| statistics.failed_to_send),
            timed_out: statistics.and_then(|statistics| statistics.timeouts),
            route,
            battery: battery(node),
            problems: found.iter().map(words::problem).collect(),
            summary: String::new(),
            weight: found.first().map_or(0, Problem::weight),
        };
        let quiet = found
            .iter()
            .any(|problem| matches!(problem, Problem::Quiet(_)));
        health.summary = sentence(&health, facts, quiet);
        health
    }

    /// Dead first (the longest dead first), then the weakest, then the rest by name.
    pub fn order(a: &Self, b: &Self) -> std::cmp::Ordering {
        (
            a.condition,
            std::cmp::Reverse(a.weight),
            a.status_since_ms,
            &a.device,
        )
            .cmp(&(
                b.condition,
                std::cmp::Reverse(b.weight),
                b.status_since_ms,
                &b.device,
            ))
    }
}

/// The sentence of `health`: "\"Garage Light\" (node 7, Garage) has been dead since 18:02;
/// last heard from 3 days ago; its last route went through Hall Switch at 40 kbit/s; 31% of
/// commands to it timed out (5 of 16)."; a weak device's problems come first.
fn sentence(health: &DeviceHealth, facts: &Facts<'_>, quiet: bool) -> String {
    let node = facts.node;
    let mut head = match (health.condition, health.status_since_ms) {
        (Condition::Dead, Some(since)) => format!(
            "{} has been dead since {}",
            describe(node),
            words::clock(since, facts.now_ms)
        ),
        (Condition::Dead, None) => format!("{} is dead", describe(node)),
        (Condition::Weak, _) => format!("{} is weak", describe(node)),
        (Condition::Asleep, _) => format!(
            "{} is asleep (a battery device: it answers when it wakes up)",
            describe(node)
        ),
        (Condition::Unknown, _) if !node.ready => format!(
            "{} is still being interviewed: its link is not known yet",
            describe(node)
        ),
        (Condition::Unknown, _) => format!("{}: its link is not known yet", describe(node)),
        (Condition::Fine, _) => format!("{} is fine", describe(node)),
    };
    let problems = health.problems.join("; ");
    if health.condition == Condition::Weak {
        head = format!("{head}: {problems}");
    }
    let mut parts = vec![head];
    // A device not heard from for long says so among its problems.
    if let Some(seen) = health.last_seen_ms.filter(|_| !quiet) {
        let ago = u64::try_from(facts.now_ms.saturating_sub(seen)).unwrap_or(0) / 1000;
        parts.push(format!("last heard from {}", crate::devices::ago(ago)));
    }
    if health.condition != Condition::Weak && !problems.is_empty() {
        parts.push(problems);
    }
    if let Some(rtt) = facts
        .statistics
        .and_then(|statistics| statistics.round_trip)
        .filter(|_| health.condition == Condition::Fine)
    {
        parts.push(format!("commands take {}", words::millis(rtt)));
    }
    if let Some(route) = &health.route {
        parts.push(format!("its last route went {route}"));
    }
    if let Some(battery) = health.battery {
        parts.push(format!("battery {battery}%"));
    }
    format!("{}.", parts.join("; "))
}

impl ControllerHealth {
    /// The controller's health from its statistics.
    pub fn of(statistics: &ControllerStatistics) -> Self {
        let counted = [
            (statistics.nak, "not accepted by the controller (NAK)"),
            (statistics.can, "collided on the way to it (CAN)"),
            (statistics.timeout_ack, "not acknowledged by it in time"),
            (statistics.timeout_response, "without its response in time"),
            (statistics.timeout_callback, "without its callback in time"),
            (statistics.failed_to_send, "that could not be sent to it"),
            (statistics.dropped_received, "from it that were dropped"),
        ];
        Self {
            problems: counted
                .into_iter()
                .filter_map(|(count, what)| {
                    let count = count.filter(|count| *count > 0)?;
                    Some(format!(
                        "{count} message{} {what}",
                        if count == 1 { "" } else { "s" }
                    ))
                })
                .collect(),
            messages: statistics
                .messages_sent
                .zip(statistics.messages_received)
                .map(|(sent, received)| sent.saturating_add(received)),
        }
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::{
        network::health::{DataRate, Route},
        sim::home::demo_node,
    };

    fn named(id: NodeId) -> Option<String> {
        (id == NodeId(2)).then(|| "Switch One".to_owned())
    }

    #[test]
    fn a_dead_device_says_since_when_why_and_through_which_repeaters() {
        let node = demo_node(7);
        let now = node.last_active.unwrap() + 3 * 86_400_000;
        let statistics = NodeStatistics {
            commands_sent: Some(16),
            timeouts: Some(5),
            last_route: Some(Route {
                data_rate: Some(DataRate::Kbit40),
                repeaters: vec![NodeId(2), NodeId(9)],
                rssi: None,
                failed_between: None,
            }),
            ..NodeStatistics::default()
        };
        let since = now - 600_000;
        let facts = Facts {
            node: &node,
            statistics: Some(&statistics),
            status_since_ms: Some(since),
            now_ms: now,
        };
        let health = DeviceHealth::of(&facts, &named);
        assert_eq!(health.condition, Condition::Dead);
        assert_eq!(
            health.summary,
            format!(
                "\"Garage Light\" (node 7, Garage) has been dead since {}; last heard from 3 days ago; 31% of commands to it timed out (5 of 16); its last route went through Switch One and another device at 40 kbit/s.",
                words::clock(since, now)
            )
        );
        assert_eq!(
            health.route.as_deref(),
            Some("through Switch One and another device at 40 kbit/s")
        );
    }

    #[test]
    fn a_weak_device_says_its_problems_first_and_a_fine_one_its_round_trip() {
        let node = demo_node(3);
        let now = node.last_active.unwrap() + 12_000;
        let weak = NodeStatistics {
            rssi: Some(crate::network::health::Rssi::Dbm(-91)),
            round_trip: Some(Duration::from_millis(740)),
            ..NodeStatistics::default()
        };
        let facts = Facts {
            node: &node,
            statistics: Some(&weak),
            status_since_ms: None,
            now_ms: now,
        };
        assert_eq!(
            DeviceHealth::of(&facts, &named).summary,
            "\"Living Room Light\" (node 3, Living Room) is weak: its signal is weak (-91 dBm); commands take 740 ms on average; last heard from 12 s ago."
        );
        let fine = NodeStatistics {
            round_trip: Some(Duration::from_micros(67_500)),
            ..NodeStatistics::default()
        };
        let health = DeviceHealth::of(
            &Facts {
                statistics: Some(&fine),
                ..facts
            },
            &named,
        );
        assert_eq!(
            health.summary,
            "\"Living Room Light\" (node 3, Living Room) is fine; last heard from 12 s ago; commands take 68 ms."
        );
        assert_eq!(health.round_trip_ms, Some(67.5));
    }

    #[test]
    fn dead_devices_come_first_the_longest_dead_first_then_the_weakest() {
        let of = |id: u16, since: Option<i64>, statistics: Option<&NodeStatistics>| {
            let node = demo_node(id);
            let now = node.last_active.unwrap();
            DeviceHealth::of(
                &Facts {
                    node: &node,
                    statistics,
                    status_since_ms: since,
                    now_ms: now,
                },
                &named,
            )
        };
        let lossy = NodeStatistics {
            commands_sent: Some(10),
            failed_to_send: Some(5),
            ..NodeStatistics::default()
        };
        let late = NodeStatistics {
            commands_sent: Some(10),
            timeouts: Some(5),
            ..NodeStatistics::default()
        };
        let mut devices = vec![
            of(2, None, None),
            of(3, None, Some(&late)),
            of(7, Some(2_000), None),
            of(6, None, Some(&lossy)),
        ];
        let mut dead_earlier = of(7, Some(1_000), None);
        dead_earlier.device = "Other Light".to_owned();
        devices.push(dead_earlier);
        devices.sort_by(DeviceHealth::order);
        let order: Vec<&str> = devices
            .iter()
            .map(|device| device.device.as_str())
            .collect();
        assert_eq!(
            order,
            [
                "Other Light",
                "Garage Light",
                "Node 6",
                "Living Room Light",
                "Switch One"
            ]
        );
    }

    #[test]
    fn the_controller_says_only_what_went_wrong() {
        let quiet = ControllerHealth::of(&ControllerStatistics {
            messages_sent: Some(22),
            messages_received: Some(546),
            nak: Some(0),
            ..ControllerStatistics::default()
        });
        assert_eq!((quiet.problems.len(), quiet.messages), (0, Some(568)));
        let noisy = ControllerHealth::of(&ControllerStatistics {
            nak: Some(3),
            can: Some(1),
            failed_to_send: Some(2),
            ..ControllerStatistics::default()
        });
        assert_eq!(
            noisy.problems,
            [
                "3 messages not accepted by the controller (NAK)",
                "1 message collided on the way to it (CAN)",
                "2 messages that could not be sent to it"
            ]
        );
    }
}
