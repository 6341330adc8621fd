//! zwave-js's communication statistics of a node ([`NodeStatistics`]) and of the controller
//! ([`ControllerStatistics`]), as both APIs carry them: a node's `statistics` in `getNodes`
//! and in `start_listening`'s state, and the `statistics updated` events (zwave-js-server's,
//! and Z-Wave JS UI's `_EVENTS/…/statistics_updated` topics).
//!
//! What a gateway sends is data: the text is bounded before it is parsed, and each field is
//! read on its own, so a missing, mistyped or absurd one (a negative count, a round trip of a
//! day, a signal of +90 dBm, a route through twelve repeaters) is left unknown and the others
//! stay.

use std::time::Duration;

use serde::Deserialize as _;
use serde_json::{Map, Value, value::RawValue};

use crate::network::NodeId;

/// Most bytes of one `statistics` object: zwave-js's are under 600 with both routes and
/// every repeater's signal (200–300 recorded); a larger one is refused unparsed.
pub const MAX_STATISTICS_BYTES: usize = 4 * 1024;

/// Most repeaters of a Z-Wave route (the protocol's limit).
const MAX_REPEATERS: usize = 4;

/// The longest round trip taken as one: zwave-js gives up on a command long before.
const MAX_ROUND_TRIP: Duration = Duration::from_secs(60);

/// The largest count taken (JavaScript's largest exact integer).
const MAX_COUNT: u64 = (1 << 53) - 1;

/// A node's communication statistics since the driver started (zwave-js `NodeStatistics`).
/// `None`: not reported, or not believable.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct NodeStatistics {
    /// Commands sent to it successfully (`commandsTX`).
    pub commands_sent: Option<u64>,
    /// Commands received from it, answers included (`commandsRX`).
    pub commands_received: Option<u64>,
    /// Commands from it the driver dropped (`commandsDroppedRX`).
    pub dropped_received: Option<u64>,
    /// Commands to it that could not be sent (`commandsDroppedTX`).
    pub failed_to_send: Option<u64>,
    /// Gets whose answer did not come in time (`timeoutResponse`).
    pub timeouts: Option<u64>,
    /// Average round trip of a command (`rtt`).
    pub round_trip: Option<Duration>,
    /// Average signal strength of its frames at the controller (`rssi`).
    pub rssi: Option<Rssi>,
    /// The last route that worked (`lwr`).
    pub last_route: Option<Route>,
    /// The route that worked before it (`nlwr`).
    pub previous_route: Option<Route>,
    /// When it was last heard from or reached (`lastSeen`), epoch milliseconds.
    pub last_seen_ms: Option<i64>,
}

/// The controller's statistics since the driver started (zwave-js `ControllerStatistics`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ControllerStatistics {
    /// Messages sent to the controller (`messagesTX`).
    pub messages_sent: Option<u64>,
    /// Messages received from it (`messagesRX`).
    pub messages_received: Option<u64>,
    /// Messages from it the driver dropped (`messagesDroppedRX`).
    pub dropped_received: Option<u64>,
    /// Messages to it that could not be sent (`messagesDroppedTX`).
    pub failed_to_send: Option<u64>,
    /// Messages it did not accept (`NAK`).
    pub nak: Option<u64>,
    /// Collisions while sending to it (`CAN`).
    pub can: Option<u64>,
    /// Sends it did not acknowledge in time (`timeoutACK`).
    pub timeout_ack: Option<u64>,
    /// Sends whose response did not come in time (`timeoutResponse`).
    pub timeout_response: Option<u64>,
    /// Sends whose callback did not come in time (`timeoutCallback`).
    pub timeout_callback: Option<u64>,
}

/// A signal strength (zwave-js `RSSI`: dBm, or one of three codes).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rssi {
    /// Measured, in dBm.
    Dbm(i8),
    /// The controller could not measure it (127).
    NotAvailable,
    /// Too strong to measure (126).
    Saturated,
    /// No signal was detected (125).
    NoSignal,
}

/// A route from the controller to a node (zwave-js `RouteStatistics`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Route {
    /// The speed it ran at.
    pub data_rate: Option<DataRate>,
    /// The nodes repeating it, in order: none for a direct route.
    pub repeaters: Vec<NodeId>,
    /// The signal of the node's acknowledgement at the controller.
    pub rssi: Option<Rssi>,
    /// The two nodes between which it last failed, when it recently did.
    pub failed_between: Option<(NodeId, NodeId)>,
}

/// A route's protocol and speed (zwave-js `ProtocolDataRate`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DataRate {
    /// Z-Wave at 9.6 kbit/s (the oldest devices, or a struggling link).
    Kbit9_6,
    /// Z-Wave at 40 kbit/s.
    Kbit40,
    /// Z-Wave at 100 kbit/s.
    Kbit100,
    /// Z-Wave Long Range at 100 kbit/s.
    LongRange100,
}

impl DataRate {
    /// How people read it: `40 kbit/s`, `100 kbit/s (Long Range)`.
    pub fn words(self) -> &'static str {
        match self {
            Self::Kbit9_6 => "9.6 kbit/s",
            Self::Kbit40 => "40 kbit/s",
            Self::Kbit100 => "100 kbit/s",
            Self::LongRange100 => "100 kbit/s (Long Range)",
        }
    }

    /// The speed in kbit/s.
    pub fn kbit_per_s(self) -> f64 {
        match self {
            Self::Kbit9_6 => 9.6,
            Self::Kbit40 => 40.0,
            Self::Kbit100 | Self::LongRange100 => 100.0,
        }
    }
}

/// Why a `statistics` object was not read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum StatisticsRefused {
    /// Its text is longer than [`MAX_STATISTICS_BYTES`]; it was not parsed.
    #[error("{bytes} bytes of statistics, over the {MAX_STATISTICS_BYTES}-byte limit: not parsed")]
    TooLarge {
        /// Its length.
        bytes: usize,
    },
    /// It is no JSON object.
    #[error("statistics that are no JSON object")]
    NotAnObject,
}

/// The members of a `statistics` object's text, within [`MAX_STATISTICS_BYTES`].
fn members(text: &str) -> Result<Map<String, Value>, StatisticsRefused> {
    if text.len() > MAX_STATISTICS_BYTES {
        return Err(StatisticsRefused::TooLarge { bytes: text.len() });
    }
    match serde_json::from_str(text) {
        Ok(Value::Object(members)) => Ok(members),
        _ => Err(StatisticsRefused::NotAnObject),
    }
}

impl NodeStatistics {
    /// Reads a node's `statistics` object from its text.
    ///
    /// # Errors
    /// Its text is too long, or no JSON object.
    pub fn parse(text: &str) -> Result<Self, StatisticsRefused> {
        members(text).map(|members| Self::of(&members))
    }

    /// Reads the fields of a node's `statistics` object, each on its own.
    pub fn of(members: &Map<String, Value>) -> Self {
        Self {
            commands_sent: count(members.get("commandsTX")),
            commands_received: count(members.get("commandsRX")),
            dropped_received: count(members.get("commandsDroppedRX")),
            failed_to_send: count(members.get("commandsDroppedTX")),
            timeouts: count(members.get("timeoutResponse")),
            round_trip: members
                .get("rtt")
                .and_then(Value::as_f64)
                .filter(|ms| ms.is_finite() && *ms >= 0.0)
                .map(|ms| Duration::from_secs_f64(ms / 1000.0))
                .filter(|rtt| *rtt <= MAX_ROUND_TRIP),
            rssi: members.get("rssi").and_then(Rssi::of),
            last_route: members.get("lwr").and_then(Route::of),
            previous_route: members.get("nlwr").and_then(Route::of),
            last_seen_ms: members
                .get("lastSeen")
                .and_then(Value::as_str)
                .and_then(|date| date.parse::<jiff::Timestamp>().ok())
                .map(jiff::Timestamp::as_millisecond),
        }
    }

    /// Commands that went wrong: not sent, or their answer not in time.
    pub fn troubles(&self) -> u64 {
        self.failed_to_send
            .unwrap_or(0)
            .saturating_add(self.timeouts.unwrap_or(0))
    }
}

impl ControllerStatistics {
    /// Reads the controller's `statistics` object from its text.
    ///
    /// # Errors
    /// Its text is too long, or no JSON object.
    pub fn parse(text: &str) -> Result<Self, StatisticsRefused> {
        members(text).map(|members| Self::of(&members))
    }

    /// Reads the fields of the controller's `statistics` object, each on its own.
    pub fn of(members: &Map<String, Value>) -> Self {
        let field = |name: &str| count(members.get(name));
        Self {
            messages_sent: field("messagesTX"),
            messages_received: field("messagesRX"),
            dropped_received: field("messagesDroppedRX"),
            failed_to_send: field("messagesDroppedTX"),
            nak: field("NAK"),
            can: field("CAN"),
            timeout_ack: field("timeoutACK"),
            timeout_response: field("timeoutResponse"),
            timeout_callback: field("timeoutCallback"),
        }
    }
}

/// A count: a whole number from 0 up to JavaScript's largest exact integer.
fn count(value: Option<&Value>) -> Option<u64> {
    value?.as_u64().filter(|count| *count <= MAX_COUNT)
}

impl Rssi {
    /// A signal as zwave-js gives it: dBm (an average may have decimals), or 125–127.
    fn of(value: &Value) -> Option<Self> {
        let dbm = value.as_f64().filter(|dbm| dbm.is_finite())?.round();
        match dbm {
            127.0 => Some(Self::NotAvailable),
            126.0 => Some(Self::Saturated),
            125.0 => Some(Self::NoSignal),
            // A received signal is far below 0 dBm; zwave-js reserves 11–124.
            dbm if (-128.0..=10.0).contains(&dbm) => Some(Self::Dbm(dbm as i8)),
            _ => None,
        }
    }

    /// The measured strength in dBm, when there is one.
    pub fn dbm(self) -> Option<i8> {
        match self {
            Self::Dbm(dbm) => Some(dbm),
            _ => None,
        }
    }
}

impl Route {
    /// A route object: its repeaters must be node ids, at most four.
    fn of(value: &Value) -> Option<Self> {
        let route = value.as_object()?;
        let repeaters = route
            .get("repeaters")
            .and_then(Value::as_array)
            .map(|ids| ids.iter().map(node_id).collect::<Option<Vec<_>>>())
            .unwrap_or(Some(Vec::new()))?;
        if repeaters.len() > MAX_REPEATERS {
            return None;
        }
        let failed_between = route
            .get("routeFailedBetween")
            .and_then(Value::as_array)
            .and_then(|pair| match pair.as_slice() {
                [from, to] => Some((node_id(from)?, node_id(to)?)),
                _ => None,
            });
        Some(Self {
            data_rate: match route.get("protocolDataRate").and_then(Value::as_u64) {
                Some(1) => Some(DataRate::Kbit9_6),
                Some(2) => Some(DataRate::Kbit40),
                Some(3) => Some(DataRate::Kbit100),
                Some(4) => Some(DataRate::LongRange100),
                _ => None,
            },
            repeaters,
            rssi: route.get("rssi").and_then(Rssi::of),
            failed_between,
        })
    }

    /// Whether the controller reaches the node without repeaters.
    pub fn is_direct(&self) -> bool {
        self.repeaters.is_empty()
    }
}

/// A node id of a route: 1–4000 (Z-Wave and Long Range).
fn node_id(value: &Value) -> Option<NodeId> {
    value
        .as_u64()
        .filter(|id| (1..=4000).contains(id))
        .and_then(|id| u16::try_from(id).ok())
        .map(NodeId)
}

/// A node list's `statistics` member, as the node list carries it: the controller node's
/// in Z-Wave JS UI's `getNodes` are the controller's own (`messagesTX`, …), every other
/// node's its own.
#[derive(Debug, Clone, PartialEq)]
pub enum ListedStatistics {
    /// A node's.
    Node(NodeStatistics),
    /// The controller's, as Z-Wave JS UI lists them on the controller node.
    Controller(ControllerStatistics),
}

/// Deserializes a node list's `statistics` member as its text first, then reads it within
/// [`MAX_STATISTICS_BYTES`]; one past them, or no object, is left out and logged.
pub(crate) fn listed<'de, D: serde::Deserializer<'de>>(
    deserializer: D,
) -> Result<Option<ListedStatistics>, D::Error> {
    let Some(raw) = Option::<Box<RawValue>>::deserialize(deserializer)? else {
        return Ok(None);
    };
    Ok(match members(raw.get()) {
        Ok(members) if members.contains_key("messagesTX") => Some(ListedStatistics::Controller(
            ControllerStatistics::of(&members),
        )),
        Ok(members) => Some(ListedStatistics::Node(NodeStatistics::of(&members))),
        Err(why) => {
            tracing::warn!(%why, "a node's statistics in the node list were refused: left out");
            None
        }
    })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn recorded_statistics_read_as_zwave_js_gives_them() {
        let node = NodeStatistics::parse(
            r#"{"commandsTX":21,"commandsRX":19,"commandsDroppedRX":0,"commandsDroppedTX":0,"timeoutResponse":1,"rtt":68.7,"lastSeen":"2026-11-22T00:15:54.673Z"}"#,
        )
        .unwrap();
        assert_eq!(node.commands_sent, Some(21));
        assert_eq!(node.timeouts, Some(1));
        assert_eq!(node.round_trip, Some(Duration::from_micros(68_700)));
        assert_eq!(node.last_seen_ms, Some(1_795_306_554_673));
        assert_eq!((node.rssi, node.last_route), (None, None));
        let controller = ControllerStatistics::parse(
            r#"{"messagesTX":22,"messagesRX":546,"messagesDroppedRX":0,"NAK":0,"CAN":2,"timeoutACK":0,"timeoutResponse":0,"timeoutCallback":0,"messagesDroppedTX":0}"#,
        )
        .unwrap();
        assert_eq!(
            (controller.messages_received, controller.can),
            (Some(546), Some(2))
        );
    }

    #[test]
    fn routes_signals_and_speeds_read_as_zwave_js_numbers_them() {
        let node = NodeStatistics::of(
            json!({"rssi": -71.4, "lwr": {"protocolDataRate": 2, "repeaters": [4, 9], "rssi": 126,
                   "routeFailedBetween": [4, 9]},
                   "nlwr": {"protocolDataRate": 3, "repeaters": []}})
            .as_object()
            .unwrap(),
        );
        assert_eq!(node.rssi, Some(Rssi::Dbm(-71)));
        let route = node.last_route.unwrap();
        assert_eq!(route.data_rate, Some(DataRate::Kbit40));
        assert_eq!(route.repeaters, [NodeId(4), NodeId(9)]);
        assert_eq!(route.rssi, Some(Rssi::Saturated));
        assert_eq!(route.failed_between, Some((NodeId(4), NodeId(9))));
        assert!(node.previous_route.unwrap().is_direct());
    }

    /// A gateway's numbers are data: each absurd or mistyped field is left unknown, and the
    /// others stay; a huge object is refused before it is parsed.
    #[test]
    fn absurd_missing_or_huge_statistics_are_left_unknown_never_trusted() {
        let node = NodeStatistics::of(
            json!({"commandsTX": -3, "commandsRX": "12", "commandsDroppedTX": 1e300,
                   "timeoutResponse": 2, "rtt": 86_400_000, "rssi": 90,
                   "lwr": {"repeaters": [2, 3, 4, 5, 6]}, "nlwr": {"repeaters": [0]},
                   "lastSeen": "yesterday"})
            .as_object()
            .unwrap(),
        );
        assert_eq!(
            node,
            NodeStatistics {
                timeouts: Some(2),
                ..NodeStatistics::default()
            }
        );
        assert_eq!(NodeStatistics::of(&Map::new()), NodeStatistics::default());
        let huge = format!(r#"{{"commandsTX":1,"pad":"{}"}}"#, "x".repeat(5_000));
        assert_eq!(
            NodeStatistics::parse(&huge).unwrap_err().to_string(),
            format!(
                "{} bytes of statistics, over the 4096-byte limit: not parsed",
                huge.len()
            )
        );
        assert_eq!(
            NodeStatistics::parse("[1,2]").unwrap_err(),
            StatisticsRefused::NotAnObject
        );
    }

    #[test]
    fn a_listed_statistics_member_is_the_controllers_when_it_counts_messages() {
        #[derive(serde::Deserialize)]
        struct Node {
            #[serde(default, deserialize_with = "listed")]
            statistics: Option<ListedStatistics>,
        }
        let read = |node: Value| serde_json::from_value::<Node>(node).unwrap().statistics;
        assert!(matches!(
            read(json!({"statistics": {"messagesTX": 1}})),
            Some(ListedStatistics::Controller(_))
        ));
        assert!(matches!(
            read(json!({"statistics": {"commandsTX": 1}})),
            Some(ListedStatistics::Node(_))
        ));
        assert_eq!(read(json!({"statistics": 7})), None);
        assert_eq!(read(json!({})), None);
    }
}
