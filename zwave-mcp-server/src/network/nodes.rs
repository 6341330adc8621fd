//! The wire shape of Z-Wave JS UI's `getNodes` result: nodes ([`NodeInfo`], their values in
//! `values`), the node list that stamps every change ([`Nodes`]), and parsing it node by node.
//!
//! Only the fields this server reads are modelled; everything else in the (8–10 KB per node)
//! objects is skipped by serde. Keys whose value is undefined are absent on the wire, hence the
//! many `Option`s and defaults.

use std::{collections::BTreeMap, fmt};

use serde::{Deserialize, Serialize};
use serde_json::Value;
use tracing::warn;

use super::{
    health::statistics::ListedStatistics,
    node_id::NodeId,
    values::{ValueInfo, ValueKey, yes},
};

/// What the driver says of a node: zwave-js's `NodeStatus`, named as Z-Wave JS UI sends it
/// (`"Alive"`); its numeric form (`4`) is read too. A word this server does not know is kept
/// as it came, never dropped.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NodeStatus {
    /// Not known yet (not interviewed, or never heard from).
    Unknown,
    /// A battery device sleeping until its next wake-up.
    Asleep,
    /// A battery device awake now.
    Awake,
    /// Did not answer: the controller considers it unreachable.
    Dead,
    /// Answering.
    Alive,
    /// A status word of a newer Z-Wave JS, as it came.
    Other(String),
}

impl NodeStatus {
    /// The status named by `word` ("Alive", "Dead", …).
    pub fn from_word(word: &str) -> Self {
        match word {
            "Unknown" => Self::Unknown,
            "Asleep" => Self::Asleep,
            "Awake" => Self::Awake,
            "Dead" => Self::Dead,
            "Alive" => Self::Alive,
            other => Self::Other(other.to_owned()),
        }
    }

    /// The word Z-Wave JS UI uses for it.
    pub fn as_str(&self) -> &str {
        match self {
            Self::Unknown => "Unknown",
            Self::Asleep => "Asleep",
            Self::Awake => "Awake",
            Self::Dead => "Dead",
            Self::Alive => "Alive",
            Self::Other(word) => word,
        }
    }
}

impl fmt::Display for NodeStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Serialize for NodeStatus {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for NodeStatus {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Wire {
            Word(String),
            Number(u64),
        }
        Ok(match Wire::deserialize(deserializer)? {
            Wire::Word(word) => Self::from_word(&word),
            // zwave-js's enum order.
            Wire::Number(0) => Self::Unknown,
            Wire::Number(1) => Self::Asleep,
            Wire::Number(2) => Self::Awake,
            Wire::Number(3) => Self::Dead,
            Wire::Number(4) => Self::Alive,
            Wire::Number(other) => Self::Other(other.to_string()),
        })
    }
}

/// A node as returned by `getNodes`.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct NodeInfo {
    /// Node id.
    pub id: NodeId,
    /// User-given name; often empty. Escaped and capped ([`super::text`]).
    #[serde(default, deserialize_with = "super::text::name")]
    pub name: String,
    /// User-given location; often empty. Escaped and capped.
    #[serde(default, deserialize_with = "super::text::name")]
    pub loc: String,
    /// Whether the interview finished.
    #[serde(default)]
    pub ready: bool,
    /// The interview's stage as Z-Wave JS UI lists it (`None`, `NodeInfo`, `CommandClasses`,
    /// `Complete`, …): text, escaped and capped.
    #[serde(default, deserialize_with = "stage", skip_serializing)]
    pub interview_stage: Option<String>,
    /// How far the interview is, 0–100, as Z-Wave JS UI lists it; anything else is unknown.
    #[serde(default, deserialize_with = "percent", skip_serializing)]
    pub interview_progress: Option<u8>,
    /// Whether the driver considers the node reachable.
    #[serde(default = "yes")]
    pub available: bool,
    /// Whether the node failed (dead and marked failed by the controller).
    #[serde(default)]
    pub failed: bool,
    /// What the driver last said of the node.
    #[serde(default)]
    pub status: Option<NodeStatus>,
    /// The controller itself.
    #[serde(default)]
    pub is_controller_node: bool,
    /// Virtual nodes (the broadcast node 255) are not devices.
    #[serde(default, rename = "virtual")]
    pub is_virtual: bool,
    /// Last time the node was heard from, epoch milliseconds.
    #[serde(default)]
    pub last_active: Option<i64>,
    /// Product name from the device database.
    #[serde(default, deserialize_with = "super::text::optional_text")]
    pub product_label: Option<String>,
    /// Manufacturer name from the device database.
    #[serde(default, deserialize_with = "super::text::optional_text")]
    pub manufacturer: Option<String>,
    /// Values keyed `"<cc>-<endpoint>-<property>[-<propertyKey>]"`.
    #[serde(default)]
    pub values: BTreeMap<ValueKey, ValueInfo>,
    /// The communication statistics the list was loaded with (bounded, read field by field;
    /// newer ones, from events, are in the [`super::HealthBook`]).
    #[serde(
        default,
        deserialize_with = "super::health::statistics::listed",
        skip_serializing
    )]
    pub statistics: Option<ListedStatistics>,
    /// Which version of the node this is: [`Nodes`] gives every node a new one when it is
    /// loaded and on every change, so what is derived from a node can be cached by it.
    #[serde(skip)]
    pub revision: Revision,
}

/// An interview stage's name: text of at most 64 characters, escaped; anything else is
/// unknown, never an error.
fn stage<'de, D: serde::Deserializer<'de>>(deserializer: D) -> Result<Option<String>, D::Error> {
    let value = Value::deserialize(deserializer)?;
    Ok(value
        .as_str()
        .map(|stage| super::text::clean(stage, 64).into_owned()))
}

/// A percentage, 0–100; anything else (a number past it, a text) is unknown, never an error:
/// one odd field must not make the whole node unreadable.
fn percent<'de, D: serde::Deserializer<'de>>(deserializer: D) -> Result<Option<u8>, D::Error> {
    let value = Value::deserialize(deserializer)?;
    Ok(value
        .as_u64()
        .filter(|percent| *percent <= 100)
        .and_then(|percent| u8::try_from(percent).ok()))
}

/// A node's version, unique in the process: equal revisions mean the same node content.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Revision(u64);

impl Revision {
    fn next() -> Self {
        static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
        Self(NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed))
    }
}

/// The node list by id. Reading goes through `Deref`. A node's state changes only through
/// [`Nodes::get_mut`], which stamps it with a new [`Revision`]; its name, location and kind,
/// and the set of nodes, change only with a newly loaded list, which gets a new
/// [`Nodes::layout`]. So caches keyed by either can never serve an old state.
#[derive(Debug, Clone, Default)]
pub struct Nodes {
    nodes: BTreeMap<NodeId, NodeInfo>,
    layout: Revision,
}

impl Nodes {
    /// Takes a freshly loaded list, giving it and each node a new revision.
    pub fn new(mut nodes: BTreeMap<NodeId, NodeInfo>) -> Self {
        for node in nodes.values_mut() {
            node.revision = Revision::next();
        }
        Self {
            nodes,
            layout: Revision::next(),
        }
    }

    /// The version of the list's layout: which nodes there are, their names, locations and
    /// kinds.
    pub fn layout(&self) -> Revision {
        self.layout
    }

    /// Stores what a value topic reported for value `key` of node `id`, received at `at_ms`
    /// (epoch ms). Returns whether the node has that value; only then is anything stored (and
    /// the node given a new revision). `live`: the device's report as it came (not a copy
    /// replayed by the broker): a value in it means the node was heard from at `at_ms`, so
    /// its last activity moves there (never back).
    pub fn record_report(
        &mut self,
        id: NodeId,
        key: &str,
        value: Option<Value>,
        at_ms: i64,
        live: bool,
    ) -> bool {
        let Some(node) = self.nodes.get_mut(&id) else {
            return false;
        };
        let Some(slot) = node.values.get_mut(key) else {
            return false;
        };
        let heard = live && value.is_some();
        slot.value = value;
        slot.last_update = Some(at_ms);
        slot.seen_at = Some(std::time::Instant::now());
        if heard && node.last_active.is_none_or(|was| was < at_ms) {
            node.last_active = Some(at_ms);
        }
        node.revision = Revision::next();
        true
    }

    /// Puts `node` in the list, in place of the node with its id if there is one (a node the
    /// driver re-interviewed or added): the node and the layout get new revisions.
    pub fn put(&mut self, mut node: NodeInfo) {
        node.revision = Revision::next();
        self.nodes.insert(node.id, node);
        self.layout = Revision::next();
    }

    /// Takes node `id` out of the list (it left the network); whether it was there.
    pub fn remove(&mut self, id: NodeId) -> bool {
        let removed = self.nodes.remove(&id).is_some();
        if removed {
            self.layout = Revision::next();
        }
        removed
    }

    /// The node `id`, to change its state: it gets a new revision.
    pub fn get_mut(&mut self, id: &NodeId) -> Option<NodeMut<'_>> {
        let node = self.nodes.get_mut(id)?;
        node.revision = Revision::next();
        Some(NodeMut(node))
    }
}

impl std::ops::Deref for Nodes {
    type Target = BTreeMap<NodeId, NodeInfo>;

    fn deref(&self) -> &Self::Target {
        &self.nodes
    }
}

/// A node whose state is being changed: its values, presence and last activity, never its
/// name, location or kind (those come only with a new list).
#[derive(Debug)]
pub struct NodeMut<'a>(&'a mut NodeInfo);

impl<'a> NodeMut<'a> {
    /// The value `key`, to update.
    pub fn value_mut(self, key: &str) -> Option<&'a mut ValueInfo> {
        self.0.values.get_mut(key)
    }

    /// Whether the driver can reach the node.
    pub fn set_available(&mut self, available: bool) {
        self.0.available = available;
    }

    /// What the driver says of the node now.
    pub fn set_status(&mut self, status: NodeStatus) {
        self.0.status = Some(status);
    }

    /// Whether its interview is complete.
    pub fn set_ready(&mut self, ready: bool) {
        self.0.ready = ready;
    }

    /// When the node was last heard from, epoch milliseconds.
    pub fn set_last_active(&mut self, at: i64) {
        self.0.last_active = Some(at);
    }
}

impl std::ops::Deref for NodeMut<'_> {
    type Target = NodeInfo;

    fn deref(&self) -> &NodeInfo {
        self.0
    }
}

/// Parses a `getNodes` result node by node, so one odd node does not hide the others.
pub fn parse_nodes(result: Value) -> Result<BTreeMap<NodeId, NodeInfo>, String> {
    let Value::Array(items) = result else {
        return Err(format!(
            "expected an array of nodes, got {}",
            common::kind(&result)
        ));
    };
    let mut nodes = BTreeMap::new();
    for item in items {
        let id = item.get("id").cloned();
        match serde_json::from_value::<NodeInfo>(item) {
            Ok(node) => {
                nodes.insert(node.id, node);
            }
            Err(err) => warn!(node = ?id, error = %err, "skipping a node that does not parse"),
        }
    }
    Ok(nodes)
}

/// [`parse_nodes`] straight from the reply's text, node by node, without building a `Value`
/// of the whole list first (for a full network that tree is several times the text's size).
/// `None`: the reply had no result.
pub fn parse_nodes_raw(
    result: Option<&serde_json::value::RawValue>,
) -> Result<BTreeMap<NodeId, NodeInfo>, String> {
    let Some(result) = result else {
        return Err("expected an array of nodes, got nothing".to_owned());
    };
    let items: Vec<&serde_json::value::RawValue> = match serde_json::from_str(result.get()) {
        Ok(items) => items,
        Err(_) => {
            return Err(match serde_json::from_str::<Value>(result.get()) {
                Ok(other) => format!("expected an array of nodes, got {}", common::kind(&other)),
                Err(err) => format!("the node list is not JSON: {err}"),
            });
        }
    };
    let mut nodes = BTreeMap::new();
    for item in items {
        match serde_json::from_str::<NodeInfo>(item.get()) {
            Ok(node) => {
                nodes.insert(node.id, node);
            }
            Err(err) => {
                let id = serde_json::from_str::<Value>(item.get())
                    .ok()
                    .and_then(|node| node.get("id").cloned());
                warn!(node = ?id, error = %err, "skipping a node that does not parse");
            }
        }
    }
    Ok(nodes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_get_nodes_result_that_is_not_an_array_is_refused() {
        assert_eq!(
            parse_nodes(serde_json::json!({"nodes": []})).unwrap_err(),
            "expected an array of nodes, got an object"
        );
        // One node that does not parse is skipped; the others stay.
        let nodes =
            parse_nodes(serde_json::json!([{"id": "two"}, {"id": 3, "name": "ok"}])).unwrap();
        assert_eq!(nodes.len(), 1);
    }

    #[test]
    fn node_statuses_read_as_words_or_zwave_js_numbers_and_keep_unknown_words() {
        let read = |json: &str| serde_json::from_str::<NodeStatus>(json).unwrap();
        assert_eq!(read(r#""Alive""#), NodeStatus::Alive);
        assert_eq!(read(r#""Dead""#), NodeStatus::Dead);
        assert_eq!(read("4"), NodeStatus::Alive);
        assert_eq!(read("1"), NodeStatus::Asleep);
        assert_eq!(read(r#""Resting""#), NodeStatus::Other("Resting".into()));
        assert_eq!(read("9"), NodeStatus::Other("9".into()));
        assert_eq!(
            serde_json::to_string(&NodeStatus::Awake).unwrap(),
            r#""Awake""#
        );
        assert!(serde_json::from_str::<NodeStatus>("true").is_err());
    }
}
