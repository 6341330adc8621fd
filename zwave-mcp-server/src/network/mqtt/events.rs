//! Z-Wave JS UI's event topics, `<prefix>/_EVENTS/ZWAVE_GATEWAY-<name>/<source>/<event>`,
//! published when its gateway's "send events" setting is on (off by default): the statistics
//! they carry (`node/statistics_updated`: `{"data": [<the node>, <its statistics>]}`,
//! `controller/statistics_updated`: `{"data": [<the statistics>]}`; run 2 of the captures).
//! Every other event says again what the value and status topics say, and is not read.

use serde::Deserialize;
use serde_json::value::RawValue;
use tracing::debug;

use super::{NodeId, shared::Shared};
use crate::network::health::statistics::{ControllerStatistics, NodeStatistics, StatisticsRefused};

/// What an event topic carries, for this server.
#[derive(Debug, PartialEq)]
pub(in crate::network) enum EventMessage {
    /// A node's statistics.
    Node(NodeId, NodeStatistics),
    /// The controller's.
    Controller(ControllerStatistics),
    /// Statistics past their bounds, or not where they belong: not kept.
    Refused(String),
    /// An event this server does not read.
    Other,
}

/// An event payload's `data`, each argument as text.
#[derive(Deserialize)]
struct Payload<'a> {
    #[serde(borrow)]
    data: Vec<&'a RawValue>,
}

/// The node an event is about: its `id`.
#[derive(Deserialize)]
struct NodeRef {
    id: u16,
}

/// What the event `rest` (`<source>/<event>`, after the gateway's events topic) says with
/// `payload`.
pub(in crate::network) fn read(rest: &str, payload: &[u8]) -> EventMessage {
    let (node, controller) = match rest {
        "node/statistics_updated" => (true, false),
        "controller/statistics_updated" => (false, true),
        _ => (false, false),
    };
    if !node && !controller {
        return EventMessage::Other;
    }
    let Ok(Payload { data }) = serde_json::from_slice::<Payload<'_>>(payload) else {
        return EventMessage::Refused(format!("`{rest}` whose payload is no {{\"data\": [...]}}"));
    };
    let refused = |why: StatisticsRefused| EventMessage::Refused(why.to_string());
    match (node, data.as_slice()) {
        (true, [about, statistics, ..]) => match serde_json::from_str::<NodeRef>(about.get()) {
            Ok(NodeRef { id }) => match NodeStatistics::parse(statistics.get()) {
                Ok(statistics) => EventMessage::Node(NodeId(id), statistics),
                Err(why) => refused(why),
            },
            Err(_) => EventMessage::Refused(format!("`{rest}` without the node's id")),
        },
        (false, [statistics, ..]) => match ControllerStatistics::parse(statistics.get()) {
            Ok(statistics) => EventMessage::Controller(statistics),
            Err(why) => refused(why),
        },
        _ => EventMessage::Refused(format!("`{rest}` without its statistics")),
    }
}

/// Keeps what an event topic says: statistics go to the health book, waking nobody.
pub(in crate::network) fn on_event(shared: &Shared, rest: &str, payload: &[u8]) {
    match read(rest, payload) {
        EventMessage::Node(node, statistics) => {
            shared.core.record_statistics(node, statistics);
        }
        EventMessage::Controller(statistics) => {
            shared.core.record_controller_statistics(statistics);
        }
        EventMessage::Refused(why) => {
            debug!(event = %rest, %why, "refused an event of Z-Wave JS UI: not kept");
        }
        EventMessage::Other => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every event of the capture with events on (run 2) reads; its statistics as sent.
    #[test]
    fn every_recorded_statistics_event_reads() {
        let capture = test_support::fixture_text("zwave-js-ui/captures/run2-sub-all.txt");
        let prefix = "zwave/_EVENTS/ZWAVE_GATEWAY-zwave-js-ui/";
        let (mut nodes, mut controllers) = (0, 0);
        for line in capture.lines() {
            let mut fields = line.splitn(5, ' ');
            let (Some(topic), Some(payload)) = (fields.nth(3), fields.next()) else {
                continue;
            };
            let Some(rest) = topic.strip_prefix(prefix) else {
                continue;
            };
            match read(rest, payload.as_bytes()) {
                EventMessage::Node(node, statistics) => {
                    nodes += 1;
                    assert!((2..=4).contains(&node.0), "{line}");
                    assert!(statistics.commands_sent.is_some(), "{line}");
                }
                EventMessage::Controller(statistics) => {
                    controllers += 1;
                    assert!(statistics.messages_received.is_some(), "{line}");
                }
                EventMessage::Refused(why) => panic!("{why}: {line}"),
                EventMessage::Other => {}
            }
        }
        assert_eq!((nodes, controllers), (27, 24));
    }

    #[test]
    fn an_event_without_its_statistics_or_node_says_why() {
        let node = "node/statistics_updated";
        for (payload, why) in [
            (
                r#"{"data":[]}"#,
                "`node/statistics_updated` without its statistics",
            ),
            (
                r#"{"data":[{"name":"x"},{"commandsTX":1}]}"#,
                "`node/statistics_updated` without the node's id",
            ),
            (
                "[1]",
                "`node/statistics_updated` whose payload is no {\"data\": [...]}",
            ),
            (
                r#"{"data":[{"id":2},[1]]}"#,
                "statistics that are no JSON object",
            ),
        ] {
            assert_eq!(
                read(node, payload.as_bytes()),
                EventMessage::Refused(why.to_owned()),
                "{payload}"
            );
        }
        assert_eq!(read("node/node_value_updated", b"{}"), EventMessage::Other);
    }
}
