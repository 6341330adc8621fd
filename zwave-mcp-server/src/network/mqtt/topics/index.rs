//! [`TopicIndex`]: every topic a value of the node list may be published on, mapped back to
//! that value; a topic two values share is left out and reported.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use super::naming::{TopicStyle, node_path, value_tails};
use crate::network::{NodeId, NodeInfo};

/// Where a value lives: its node and its key in `NodeInfo::values`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ValueRef {
    /// The node.
    pub node: NodeId,
    /// The key in `NodeInfo::values` (shared by the value's topics in every style).
    pub key: std::sync::Arc<str>,
}

/// What a topic under the prefix means to us.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Route {
    /// A value topic.
    Value(ValueRef),
    /// `<node>/status`: availability and node status.
    NodeStatus(NodeId),
    /// `<node>/lastActive`: epoch milliseconds.
    NodeLastActive(NodeId),
}

impl Route {
    /// The node the topic belongs to.
    pub fn node(&self) -> NodeId {
        match self {
            Self::Value(value) => value.node,
            Self::NodeStatus(node) | Self::NodeLastActive(node) => *node,
        }
    }
}

/// Topic → meaning, rebuilt whenever the node list is reloaded.
///
/// A topic is `<node path>/<tail>`: the node path names the node (every style: with or
/// without location, by name or id), the tail the value (`37/0/currentValue`, its named
/// form, `status`, `lastActive`). The index keeps the two levels apart: about 4 paths per
/// node and one short tail per value and style, shared by every node that has it, instead of
/// every pairing of the two as a string of its own (a 232-node home has some 57,000
/// pairings). A lookup tries each `/` of the topic as the split point.
///
/// Invariant: [`TopicIndex::route`] answers only when every node and value that may publish
/// on the topic is the same one; topics two of them would share are ambiguous instead.
#[derive(Debug, Default, Clone)]
pub struct TopicIndex {
    /// Node path → the nodes publishing under it (more than one: they share the path).
    paths: HashMap<Box<str>, Vec<NodeId>>,
    /// Tail → what it means for each node that has it, sorted by node (a node listed twice
    /// has two values on that tail).
    tails: HashMap<Box<str>, Vec<(NodeId, Route)>>,
    /// The ambiguous topics, found when building, with the nodes that share each.
    ambiguous: BTreeMap<String, BTreeSet<NodeId>>,
}

/// What a lookup found.
enum Found<'a> {
    Nothing,
    One(&'a Route),
    Several,
}

impl TopicIndex {
    /// Builds the index of every topic the nodes' values and statuses may be published on,
    /// and finds the topics two nodes (or two values) would share.
    pub fn build<'a>(prefix: &str, nodes: impl IntoIterator<Item = &'a NodeInfo>) -> Self {
        let mut index = Self::default();
        // Each node's paths, kept while building to look for shared topics.
        let mut node_paths: Vec<(NodeId, Vec<String>)> = Vec::new();
        for node in nodes {
            let mut paths: Vec<String> = Vec::with_capacity(4);
            for style in TopicStyle::ALL {
                let path = node_path(prefix, node, style);
                if !paths.contains(&path) {
                    paths.push(path);
                }
            }
            for path in &paths {
                let sharing = index.paths.entry(path.as_str().into()).or_default();
                if !sharing.contains(&node.id) {
                    sharing.push(node.id);
                }
            }
            index.add_tail("status".to_owned(), Route::NodeStatus(node.id));
            index.add_tail("lastActive".to_owned(), Route::NodeLastActive(node.id));
            for value in node.values.values() {
                let target = Route::Value(ValueRef {
                    node: node.id,
                    key: value.key().as_str().into(),
                });
                for tail in value_tails(value) {
                    index.add_tail(tail, target.clone());
                }
            }
            node_paths.push((node.id, paths));
        }
        for entries in index.tails.values_mut() {
            entries.sort_by_key(|(node, _)| *node);
        }
        index.find_ambiguous(&node_paths);
        index
    }

    fn add_tail(&mut self, tail: String, route: Route) {
        let node = route.node();
        match self.tails.get_mut(tail.as_str()) {
            // A node's entries are added together, so they are the last ones.
            Some(entries) => {
                let mut own = entries.iter().rev().take_while(|(n, _)| *n == node);
                if !own.any(|(_, r)| *r == route) {
                    entries.push((node, route));
                }
            }
            None => {
                self.tails
                    .insert(tail.into_boxed_str(), vec![(node, route)]);
            }
        }
    }

    /// Collects the topics with more than one meaning. Two pairings of (path, tail) spell the
    /// same topic only when both paths are equal, so the tails are too: then either two nodes
    /// share the path or one node has two values on the tail. Or one path is the other plus
    /// `/<more>` and its tail is `<more>/` plus the other's: then a shorter path ends at a
    /// `/` of the longer one. Only pairings in one of these cases are looked up.
    fn find_ambiguous(&mut self, node_paths: &[(NodeId, Vec<String>)]) {
        let suspect = |path: &str| {
            self.paths.get(path).is_some_and(|nodes| nodes.len() > 1)
                || path
                    .match_indices('/')
                    .any(|(at, _)| self.paths.contains_key(&path[..at]))
        };
        let suspects: HashMap<NodeId, Vec<&str>> = node_paths
            .iter()
            .map(|(node, paths)| {
                let paths = paths.iter().map(String::as_str).filter(|p| suspect(p));
                (*node, paths.collect())
            })
            .collect();
        let mut candidates = BTreeSet::new();
        for (tail, entries) in &self.tails {
            for (at, (node, route)) in entries.iter().enumerate() {
                let same_node = |(n, _): &&(NodeId, Route)| n == node;
                let doubled = entries[..at]
                    .iter()
                    .rev()
                    .take_while(same_node)
                    .chain(entries[at + 1..].iter().take_while(same_node))
                    .any(|(_, r)| r != route);
                let all = || node_paths.iter().filter(|(n, _)| n == node);
                let paths: Vec<&str> = if doubled {
                    all()
                        .flat_map(|(_, paths)| paths.iter().map(String::as_str))
                        .collect()
                } else {
                    suspects.get(node).cloned().unwrap_or_default()
                };
                for path in paths {
                    let topic = format!("{path}/{tail}");
                    if matches!(self.lookup(&topic), Found::Several) {
                        candidates.insert(topic);
                    }
                }
            }
        }
        for topic in candidates {
            let nodes = self.meanings(&topic).map(|(node, _)| node).collect();
            self.ambiguous.insert(topic, nodes);
        }
    }

    /// Every (node, meaning) `topic` can have, over every split point and every node of the
    /// path.
    fn meanings<'s, 't>(
        &'s self,
        topic: &'t str,
    ) -> impl Iterator<Item = (NodeId, &'s Route)> + use<'s, 't> {
        topic.match_indices('/').flat_map(move |(at, _)| {
            let nodes = self.paths.get(&topic[..at]).map_or(&[][..], Vec::as_slice);
            let entries = if nodes.is_empty() {
                &[][..]
            } else {
                self.tails
                    .get(&topic[at + 1..])
                    .map_or(&[][..], Vec::as_slice)
            };
            nodes.iter().flat_map(move |node| {
                let first = entries.partition_point(|(n, _)| n < node);
                entries[first..]
                    .iter()
                    .take_while(move |(n, _)| n == node)
                    .map(|(n, route)| (*n, route))
            })
        })
    }

    fn lookup(&self, topic: &str) -> Found<'_> {
        let mut found = Found::Nothing;
        for (_, route) in self.meanings(topic) {
            match found {
                Found::Nothing => found = Found::One(route),
                Found::One(seen) if seen == route => {}
                _ => return Found::Several,
            }
        }
        found
    }

    /// Whether `topic` is one several nodes (or values) may publish on.
    pub fn is_ambiguous(&self, topic: &str) -> bool {
        matches!(self.lookup(topic), Found::Several)
    }

    /// Topics left out because several nodes (or values) may publish on them, with the nodes.
    pub fn ambiguous(&self) -> &BTreeMap<String, BTreeSet<NodeId>> {
        &self.ambiguous
    }

    /// What `topic` carries, if it is a topic of exactly one known node and value.
    pub fn route(&self, topic: &str) -> Option<&Route> {
        match self.lookup(topic) {
            Found::One(route) => Some(route),
            Found::Nothing | Found::Several => None,
        }
    }

    /// How many node paths and tails are indexed.
    pub fn size(&self) -> (usize, usize) {
        (self.paths.len(), self.tails.len())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::network::Property;

    fn switch(id: u16, name: &str, loc: &str) -> NodeInfo {
        serde_json::from_value(serde_json::json!({
            "id": id, "name": name, "loc": loc,
            "values": {"37-0-currentValue": {"id": "37-0-currentValue", "commandClass": 37,
                "commandClassName": "Binary Switch", "endpoint": 0, "property": "currentValue",
                "propertyName": "currentValue", "type": "boolean", "readable": true, "writeable": false}}
        }))
        .unwrap()
    }

    #[test]
    fn a_topic_two_nodes_share_is_left_out_and_reported() {
        // Node 9 "Light" in the Kitchen and node 3 "Light" with no location: without the
        // location level, both publish on zwave/Light/...
        let nodes = [switch(9, "Light", "Kitchen"), switch(3, "Light", "")];
        let index = TopicIndex::build("zwave", nodes.iter());
        assert_eq!(index.route("zwave/Light/37/0/currentValue"), None);
        assert_eq!(index.route("zwave/Light/status"), None);
        assert_eq!(
            index.ambiguous().get("zwave/Light/37/0/currentValue"),
            Some(&BTreeSet::from([NodeId(3), NodeId(9)]))
        );
        let kitchen = |topic: &str| index.route(topic).map(Route::node);
        assert_eq!(
            kitchen("zwave/Kitchen/Light/37/0/currentValue"),
            Some(NodeId(9))
        );
        assert_eq!(
            kitchen("zwave/Kitchen/9/37/0/currentValue"),
            Some(NodeId(9))
        );
        assert_eq!(kitchen("zwave/3/37/0/currentValue"), Some(NodeId(3)));
        assert_eq!(kitchen("zwave/9/37/0/currentValue"), Some(NodeId(9)));
        // The same node reaching a topic by two styles is no collision.
        let alone = TopicIndex::build("zwave", [switch(3, "Light", "")].iter());
        assert!(alone.ambiguous().is_empty());
        assert_eq!(
            alone
                .route("zwave/Light/37/0/currentValue")
                .map(Route::node),
            Some(NodeId(3))
        );
    }

    #[test]
    fn a_topic_spelled_by_a_longer_node_path_and_a_shorter_tail_is_ambiguous_too() {
        // Node 5 "Hall" has a value with the property `status`: zwave/Hall/37/0/status. Node
        // 6, named "Hall/37/0", publishes its own status on the very same topic.
        let mut hall = switch(5, "Hall", "");
        let mut value = hall.values["37-0-currentValue"].clone();
        value.property = Property::Name("status".into());
        value.property_name = Some("status".into());
        hall.values.insert(value.key(), value);
        let nodes = [hall, switch(6, "Hall/37/0", "")];
        let index = TopicIndex::build("zwave", nodes.iter());
        assert_eq!(index.route("zwave/Hall/37/0/status"), None);
        assert!(index.is_ambiguous("zwave/Hall/37/0/status"));
        assert_eq!(
            index.ambiguous().get("zwave/Hall/37/0/status"),
            Some(&BTreeSet::from([NodeId(5), NodeId(6)]))
        );
        // Their other topics still route.
        assert_eq!(
            index.route("zwave/Hall/37/0/currentValue").map(Route::node),
            Some(NodeId(5))
        );
        assert_eq!(
            index
                .route("zwave/Hall/37/0/37/0/currentValue")
                .map(Route::node),
            Some(NodeId(6))
        );
        assert_eq!(
            index.route("zwave/Hall/status"),
            Some(&Route::NodeStatus(NodeId(5)))
        );
        assert_eq!(
            index.route("zwave/Hall/37/0/lastActive"),
            Some(&Route::NodeLastActive(NodeId(6)))
        );
        assert_eq!(index.route("zwave/Hall"), None);
        assert_eq!(index.route("zwave/Elsewhere/status"), None);
        assert_eq!(index.ambiguous().len(), 1, "{:?}", index.ambiguous());
    }

    #[test]
    fn a_topic_two_values_of_one_node_share_is_left_out_and_reported() {
        // Value `x` is named `y`; value `y` is named `y`: both publish on .../endpoint_0/y in
        // named topics.
        let mut node = switch(4, "Hall", "");
        for (property, name) in [("x", "y"), ("y", "y")] {
            let mut value = node.values["37-0-currentValue"].clone();
            value.property = Property::Name(property.into());
            value.property_name = Some(name.into());
            node.values.insert(value.key(), value);
        }
        let index = TopicIndex::build("zwave", [node].iter());
        let topic = "zwave/Hall/switch_binary/endpoint_0/y";
        assert_eq!(index.route(topic), None);
        assert_eq!(
            index.ambiguous().get(topic),
            Some(&BTreeSet::from([NodeId(4)]))
        );
        let own = |topic: &str| match index.route(topic) {
            Some(Route::Value(value)) => Some(value.key.to_string()),
            _ => None,
        };
        assert_eq!(
            own("zwave/Hall/switch_binary/endpoint_0/x").as_deref(),
            Some("37-0-x")
        );
        assert_eq!(own("zwave/Hall/37/0/y").as_deref(), Some("37-0-y"));
    }

    #[test]
    fn a_shared_topic_is_found_even_when_each_node_has_its_tail_alone() {
        // Node 7 "Hall" has a value keyed `99/0/zz` (sanitizing keeps `/`): its topic is
        // zwave/Hall/37/0/a/99/0/zz. Node 8 "Hall/37/0/a" has a value at 99/0/zz: the same
        // topic. Neither tail is held by another node.
        let with_value = |mut node: NodeInfo, cc: u16, property: &str, key: Option<&str>| {
            let mut value = node.values["37-0-currentValue"].clone();
            value.command_class = cc;
            value.property = Property::Name(property.into());
            value.property_name = Some(property.into());
            value.property_key = key.map(|k| Property::Name(k.into()));
            node.values.insert(value.key(), value);
            node
        };
        let nodes = [
            with_value(switch(7, "Hall", ""), 37, "a", Some("99/0/zz")),
            with_value(switch(8, "Hall/37/0/a", ""), 99, "zz", None),
        ];
        let index = TopicIndex::build("zwave", nodes.iter());
        let topic = "zwave/Hall/37/0/a/99/0/zz";
        assert_eq!(index.route(topic), None);
        assert_eq!(
            index.ambiguous().get(topic),
            Some(&BTreeSet::from([NodeId(7), NodeId(8)]))
        );
    }
}
