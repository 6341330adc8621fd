//! Micro benchmarks (divan) of the gateway cache in a full 232-node home: one value report
//! taken in (topic lookup, payload decoding, storing it in its node), one `statistics
//! updated` event taken in (they come every ~250 ms per node under traffic), the topic index
//! built from a fresh node list, and the list parsed from a `getNodes` reply.
//! Run: `cargo bench -p zwave-mcp-server --bench cache`.
//!
//! The report benchmark is the cache's share of what the event loop does per value topic;
//! the rest (MQTT decoding, the state lock, the change notification) is in the end-to-end
//! figure of `scripts/storm.py`, the server's CPU time per report during a storm.
#![expect(
    clippy::unwrap_used,
    reason = "a benchmark: a failed setup should stop it loudly"
)]

use std::{collections::BTreeMap, hint::black_box};

use serde_json::{Value, json};
use zwave_mcp_server::{
    network::{
        HealthBook, NodeId, NodeInfo, Nodes, now_ms, parse_nodes,
        topics::{Route, TopicIndex, TopicStyle, node_path, value_path},
        zwave_js_server::events::{self, Event},
    },
    sim::home::{MAX_NODES, sized_home},
};

fn main() {
    divan::main();
}

fn full_home() -> BTreeMap<NodeId, NodeInfo> {
    parse_nodes(Value::Array(sized_home(MAX_NODES, now_ms()))).unwrap()
}

/// Every value of the home as its report arrives: the topic (default style: ValueID topics,
/// names and locations) and a time-value payload.
fn reports(nodes: &BTreeMap<NodeId, NodeInfo>) -> Vec<(String, Vec<u8>)> {
    let style = TopicStyle::default();
    nodes
        .values()
        .flat_map(|node| {
            let path = node_path("zwave", node, style);
            node.values.values().map(move |value| {
                let topic = format!("{path}/{}", value_path(value, style.kind));
                let payload = json!({"time": 1_764_000_000_000_i64, "value": 21.5});
                (topic, payload.to_string().into_bytes())
            })
        })
        .collect()
}

/// One value report: route the topic, decode the payload, store the value in its node.
#[divan::bench(sample_count = 100, sample_size = 1000)]
fn value_report(bencher: divan::Bencher) {
    let list = full_home();
    let index = TopicIndex::build("zwave", list.values());
    let reports = reports(&list);
    let mut nodes = Nodes::new(list);
    let mut next = 0;
    bencher.bench_local(|| {
        let (topic, payload) = &reports[next % reports.len()];
        next += 1;
        let Some(Route::Value(target)) = index.route(topic) else {
            panic!("{topic} is not indexed");
        };
        let value = zwave_mcp_server::network::topics::decode_value(payload).unwrap_or_default();
        black_box(nodes.record_report(target.node, &target.key, value, 0, true))
    });
}

/// One zwave-js-server `statistics updated` event, as the connection takes it in: read
/// (bounded, field by field), kept in the health book, and the node's last activity moved
/// when it was heard from later (here, every other event).
#[divan::bench(sample_count = 100, sample_size = 1000)]
fn statistics_event(bencher: divan::Bencher) {
    let mut nodes = Nodes::new(full_home());
    let mut book = HealthBook::default();
    let frames: Vec<Box<serde_json::value::RawValue>> = (0..1_000_u64)
        .map(|i| {
            let seen = jiff::Timestamp::from_millisecond(1_764_000_000_000 + (i / 2) as i64 * 1_000).unwrap();
            let event = json!({"source": "node", "event": "statistics updated", "nodeId": 2 + i % 200,
                "statistics": {"commandsTX": 30 + i, "commandsRX": 20, "commandsDroppedRX": 0,
                    "commandsDroppedTX": 0, "timeoutResponse": 0, "rtt": 67.2,
                    "lastSeen": seen.to_string()}});
            serde_json::value::RawValue::from_string(event.to_string()).unwrap()
        })
        .collect();
    let mut next = 0;
    bencher.bench_local(|| {
        let event = events::read(&frames[next % frames.len()]).unwrap();
        next += 1;
        if let Event::Statistics { node, statistics } = &event {
            book.record(*node, statistics.clone());
        }
        black_box(events::apply(&mut nodes, event, 0))
    });
}

/// The topic index of a freshly loaded 232-node list (every topic style).
#[divan::bench(sample_count = 20)]
fn topic_index_build(bencher: divan::Bencher) {
    let list = full_home();
    bencher.bench_local(|| TopicIndex::build("zwave", black_box(&list).values()));
}

/// The node list parsed from a `getNodes` reply of 232 nodes.
#[divan::bench(sample_count = 20)]
fn get_nodes_parse(bencher: divan::Bencher) {
    let reply = serde_json::to_string(&sized_home(MAX_NODES, now_ms())).unwrap();
    bencher.bench_local(|| {
        let raw: Box<serde_json::value::RawValue> =
            serde_json::from_str(black_box(&reply)).unwrap();
        zwave_mcp_server::network::parse_nodes_raw(Some(&raw)).unwrap()
    });
}
