//! What tool calls derive from the node list, cached: the rows of `list_zwave_devices` by node
//! revision (a device's summary is built once per change of that device), and the directory of
//! device names (hidden ones marked) by list layout (names are normalized once per loaded list). A full
//! network has 231 devices: summarizing or normalizing each one on every call cost more than
//! everything else in the call together.
//!
//! Correctness rests on [`Revision`]: the network stamps a node with a new one whenever its
//! state changes, and the list with a new layout whenever nodes, names or locations may have
//! changed (see [`crate::network::Nodes`]), so a cached entry is used only for the very
//! content it was built from.

use std::{
    collections::{BTreeMap, HashMap},
    fmt::Write as _,
    sync::{Arc, Mutex, PoisonError},
};

use crate::{
    devices::{DeviceSummary, Directory},
    network::{NodeId, NodeInfo, Nodes, Revision},
};

/// One device's row: its structured summary and its line of the text answer.
#[derive(Debug)]
pub(super) struct Row {
    /// The structured form.
    pub summary: Arc<DeviceSummary>,
    /// `"\n- Kitchen Plug (node 2, Kitchen): switch, on, 12 W"`.
    pub line: String,
}

impl Row {
    fn of(node: &NodeInfo) -> Self {
        let summary = DeviceSummary::of(node);
        let mut line = format!("\n- {} (node {}", summary.name, summary.node_id);
        if !summary.location.is_empty() {
            let _ = write!(line, ", {}", summary.location);
        }
        let _ = write!(line, "): {}, {}", summary.kind.as_str(), summary.state);
        Self {
            summary: Arc::new(summary),
            line,
        }
    }
}

/// Rows by node, each with the revision it was built from.
#[derive(Debug, Default)]
pub(super) struct RowCache {
    rows: Mutex<HashMap<NodeId, (Revision, Arc<Row>)>>,
}

impl RowCache {
    /// The rows of `nodes`, in their order, built only for nodes that changed since.
    /// `all` is the whole node list: rows of nodes no longer in it are dropped.
    pub fn rows<'a>(
        &self,
        nodes: impl Iterator<Item = &'a NodeInfo>,
        all: &BTreeMap<NodeId, NodeInfo>,
    ) -> Vec<Arc<Row>> {
        let mut cache = self.rows.lock().unwrap_or_else(PoisonError::into_inner);
        let rows = nodes
            .map(|node| match cache.get(&node.id) {
                Some((revision, row)) if *revision == node.revision => Arc::clone(row),
                _ => {
                    let row = Arc::new(Row::of(node));
                    cache.insert(node.id, (node.revision, Arc::clone(&row)));
                    row
                }
            })
            .collect();
        if cache.len() > all.len() {
            cache.retain(|id, _| all.contains_key(id));
        }
        rows
    }
}

/// The directory of every device, marked visible or hidden, for the current list layout.
#[derive(Debug, Default)]
pub(super) struct DirectoryCache {
    current: Mutex<Option<(Revision, Arc<Directory>)>>,
}

impl DirectoryCache {
    /// The directory of `nodes`, those `visible` refuses marked hidden, built once per layout
    /// of the list.
    pub fn of(&self, nodes: &Nodes, visible: impl Fn(&NodeInfo) -> bool) -> Arc<Directory> {
        let mut current = self.current.lock().unwrap_or_else(PoisonError::into_inner);
        match &*current {
            Some((layout, directory)) if *layout == nodes.layout() => Arc::clone(directory),
            _ => {
                let directory = Arc::new(Directory::with_visibility(
                    nodes
                        .values()
                        .filter(|node| crate::devices::is_device(node)),
                    visible,
                ));
                *current = Some((nodes.layout(), Arc::clone(&directory)));
                directory
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::network::{Nodes, parse_nodes};

    fn home() -> Nodes {
        Nodes::new(
            parse_nodes(json!(crate::sim::home::demo_home(0))).expect("the demo home parses"),
        )
    }

    #[test]
    fn a_row_is_rebuilt_exactly_when_its_node_changed() {
        let cache = RowCache::default();
        let mut nodes = home();
        let first = cache.rows(nodes.values(), &nodes);
        let again = cache.rows(nodes.values(), &nodes);
        assert!(first.iter().zip(&again).all(|(a, b)| Arc::ptr_eq(a, b)));
        assert!(
            first[1]
                .line
                .contains("Switch One (node 2, Kitchen): switch, off")
        );

        nodes
            .get_mut(&NodeId(2))
            .and_then(|switch| switch.value_mut("37-0-currentValue"))
            .expect("node 2's switch value")
            .value = Some(json!(true));
        let after = cache.rows(nodes.values(), &nodes);
        assert!(
            after[1]
                .line
                .contains("Switch One (node 2, Kitchen): switch, on")
        );
        assert!(!Arc::ptr_eq(&first[1], &after[1]));
        assert!(Arc::ptr_eq(&first[2], &after[2]), "other rows are kept");
    }

    #[test]
    fn the_directory_is_rebuilt_for_a_new_list_only() {
        let cache = DirectoryCache::default();
        let mut nodes = home();
        let first = cache.of(&nodes, |_| true);
        let _ = nodes.get_mut(&NodeId(2));
        assert!(Arc::ptr_eq(&first, &cache.of(&nodes, |_| true)));
        let reloaded = home();
        let second = cache.of(&reloaded, |node| node.id != NodeId(2));
        assert!(!Arc::ptr_eq(&first, &second));
        assert!(
            first
                .resolve("Switch One", crate::devices::Purpose::Read)
                .is_ok()
        );
        assert!(
            second
                .resolve("Switch One", crate::devices::Purpose::Read)
                .is_err()
        );
    }

    #[test]
    fn a_reloaded_list_never_reuses_rows_of_the_old_one() {
        let cache = RowCache::default();
        let nodes = home();
        let old = cache.rows(nodes.values(), &nodes);
        let reloaded = home();
        let new = cache.rows(reloaded.values(), &reloaded);
        assert!(old.iter().zip(&new).all(|(a, b)| !Arc::ptr_eq(a, b)));
    }
}
