//! Proptest versions of the fuzz targets' properties (`checks.rs`), so `cargo test` exercises
//! them on every run; `scripts/fuzz.sh` runs the same properties under libFuzzer.

pub mod checks;

use std::collections::BTreeMap;

use proptest::prelude::*;
use serde_json::{Value, json};
use zwave_mcp_server::{
    network::{NodeId, NodeInfo, parse_nodes},
    sim::home::demo_home,
};

/// Names and locations that collide once made into topics: case, spaces, slashes, symbols
/// MQTT treats specially, accents, and the empty name.
fn label() -> impl Strategy<Value = String> {
    proptest::collection::vec(
        prop_oneof![
            Just("Light"),
            Just("light"),
            Just(" "),
            Just("_"),
            Just("/"),
            Just("+"),
            Just("#"),
            Just("é"),
            Just("Kitchen"),
            Just("2"),
            Just("nodeID_"),
            Just("Node "),
        ],
        0..4,
    )
    .prop_map(|parts| parts.concat())
}

/// The demo home with its devices renamed and moved at random.
fn home() -> impl Strategy<Value = Vec<Value>> {
    let nodes = demo_home(0);
    let count = nodes.len();
    proptest::collection::vec((label(), label()), count).prop_map(move |labels| {
        let mut nodes = nodes.clone();
        for (node, (name, loc)) in nodes.iter_mut().zip(labels) {
            node["name"] = json!(name);
            node["loc"] = json!(loc);
        }
        nodes
    })
}

fn parsed(nodes: Vec<Value>) -> BTreeMap<NodeId, NodeInfo> {
    parse_nodes(Value::Array(nodes)).expect("the demo home parses")
}

/// A query as a model might write one: pieces of names, ids, spacing and case.
fn query() -> impl Strategy<Value = String> {
    prop_oneof![
        label(),
        (label(), label()).prop_map(|(a, b)| format!("{a} {b}")),
        (0_u16..300).prop_map(|id| format!("Node {id}")),
        (0_u16..300).prop_map(|id| id.to_string()),
        ".{0,300}".prop_map(|s: String| s),
    ]
}

proptest! {
    #[test]
    fn every_topic_routes_to_its_own_value_or_nowhere(nodes in home()) {
        let nodes = parsed(nodes);
        checks::topics_route_home(&nodes).map_err(TestCaseError::fail)?;
        checks::index_equals_every_topic_spelled_out(&nodes).map_err(TestCaseError::fail)?;
    }

    #[test]
    fn any_get_nodes_reply_parses_without_panicking(
        nodes in home(),
        cut in 0_usize..4000,
        junk in proptest::collection::vec(any::<u8>(), 0..16),
    ) {
        let mut bytes = serde_json::to_vec(&nodes).unwrap();
        bytes.truncate(cut.min(bytes.len()));
        bytes.extend_from_slice(&junk);
        checks::get_nodes_reply(&bytes).map_err(TestCaseError::fail)?;
        checks::get_nodes_reply(&serde_json::to_vec(&nodes).unwrap()).map_err(TestCaseError::fail)?;
    }

    #[test]
    fn any_payload_decodes_without_panicking(bytes in proptest::collection::vec(any::<u8>(), 0..64)) {
        checks::payloads(&bytes).map_err(TestCaseError::fail)?;
    }

    #[test]
    fn a_name_that_switches_a_device_reads_as_that_device(nodes in home(), query in query()) {
        checks::device_name(&parsed(nodes), &query).map_err(TestCaseError::fail)?;
    }
}
