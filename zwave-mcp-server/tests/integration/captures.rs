//! The real system's captures: every getNodes result parses, and every value topic seen in
//! runs 1–3 (three gateway configurations) maps to its value through the getNodes data.

use std::collections::BTreeMap;

use serde_json::Value;
use zwave_mcp_server::network::{
    ApiReply, NodeId, NodeInfo, PendingRequests, parse_nodes, parse_nodes_raw,
    topics::{Route, TopicIndex, decode_value},
};

use crate::harness::{fixture_json, fixture_text};

const GET_NODES: [&str; 5] = [
    "zwave-js-ui/captures/api-getNodes.response.raw.json",
    "zwave-js-ui/captures/api-fresh-getNodes.response.raw.json",
    "zwave-js-ui/captures/api-run2-getNodes.response.raw.json",
    "zwave-js-ui/captures/api-run3-getNodes.response.raw.json",
    "zwave-js-ui/captures/api-run3-getNodes-mockdown.response.raw.json",
];

/// The capture's nodes as the gateway client reads them: the reply's text parsed node by node;
/// the same as parsing the whole result first.
fn nodes_of(capture: &str) -> BTreeMap<NodeId, NodeInfo> {
    let reply: ApiReply = serde_json::from_str(&fixture_text(capture)).unwrap();
    assert!(reply.success, "{capture}");
    let nodes = parse_nodes_raw(reply.result.as_deref()).unwrap();
    let whole = parse_nodes(fixture_json(capture)["result"].clone()).unwrap();
    assert_eq!(
        serde_json::to_value(&nodes).unwrap(),
        serde_json::to_value(&whole).unwrap(),
        "{capture}"
    );
    nodes
}

#[test]
fn a_get_nodes_result_that_is_not_a_list_of_nodes_is_named() {
    let reply = |text: &str| -> ApiReply { serde_json::from_str(text).unwrap() };
    for (text, expected) in [
        (
            r#"{"success":true}"#,
            "expected an array of nodes, got nothing",
        ),
        (
            r#"{"success":true,"result":{"id":2}}"#,
            "expected an array of nodes, got an object",
        ),
        (
            r#"{"success":true,"result":"nodes"}"#,
            "expected an array of nodes, got a string",
        ),
    ] {
        let err = parse_nodes_raw(reply(text).result.as_deref()).unwrap_err();
        assert_eq!(err, expected, "{text}");
    }
    let odd = reply(r#"{"success":true,"result":[{"id":"two"},{"id":3,"name":"Lamp"}]}"#);
    let nodes = parse_nodes_raw(odd.result.as_deref()).unwrap();
    assert_eq!(nodes.len(), 1, "one odd node does not hide the others");
    assert_eq!(nodes[&NodeId(3)].name, "Lamp");
}

#[test]
fn every_get_nodes_capture_parses_with_controller_virtual_and_devices() {
    for capture in GET_NODES {
        let nodes = nodes_of(capture);
        let raw = fixture_json(capture)["result"].as_array().unwrap().len();
        assert_eq!(nodes.len(), raw, "{capture}: every node parsed");
        assert!(nodes[&NodeId(1)].is_controller_node, "{capture}");
        assert!(nodes[&NodeId(255)].is_virtual, "{capture}");
        assert!(
            nodes[&NodeId(2)].values.contains_key("37-0-currentValue"),
            "{capture}"
        );
        assert!(
            nodes[&NodeId(3)].values.contains_key("38-0-targetValue"),
            "{capture}"
        );
        assert!(
            nodes[&NodeId(4)]
                .values
                .contains_key("49-0-Air temperature"),
            "{capture}"
        );
    }
    let run3 = nodes_of("zwave-js-ui/captures/api-run3-getNodes.response.raw.json");
    let meter = &run3[&NodeId(2)].values["50-0-value-66049"];
    assert_eq!(meter.unit.as_deref(), Some("W"));
}

/// Topics that are not value topics: gateway, driver, events, requests, node status.
fn is_value_topic(topic: &str) -> bool {
    !(topic.contains("/_CLIENTS/")
        || topic.contains("/_EVENTS/")
        || topic == "zwave/driver/status"
        || topic.ends_with("/set")
        || topic.ends_with("/status")
        || topic.ends_with("/lastActive")
        || topic.ends_with("/nodeinfo"))
}

#[test]
fn every_value_topic_of_runs_1_to_3_maps_to_its_value() {
    // Names changed during the runs (renames in run 1), so the index spans every snapshot.
    let snapshots: Vec<BTreeMap<NodeId, NodeInfo>> =
        GET_NODES.iter().map(|c| nodes_of(c)).collect();
    let index = TopicIndex::build("zwave", snapshots.iter().flat_map(|nodes| nodes.values()));
    let mut checked = 0;
    let mut unmapped = Vec::new();
    for run in ["run1", "run2", "run3"] {
        let text = fixture_text(&format!("zwave-js-ui/captures/{run}-sub-all.txt"));
        for line in text.lines() {
            // `<broker epoch> <retain> <qos> <topic> <payload>`
            let mut fields = line.splitn(5, ' ');
            let (Some(_), Some(_), Some(_), Some(topic)) =
                (fields.next(), fields.next(), fields.next(), fields.next())
            else {
                continue;
            };
            let payload = fields.next().unwrap_or("");
            if !is_value_topic(topic) {
                continue;
            }
            let Some(Route::Value(target)) = index.route(topic) else {
                unmapped.push(topic.to_owned());
                continue;
            };
            let value = snapshots
                .iter()
                .find_map(|nodes| nodes.get(&target.node)?.values.get(&*target.key))
                .unwrap();
            let decoded = decode_value(payload.as_bytes())
                .unwrap_or_else(|refused| panic!("{run} {topic}: {refused}"));
            match (value.kind.as_str(), &decoded) {
                (_, None) => {}
                ("boolean", Some(v)) => assert!(v.is_boolean(), "{run} {topic}: {payload}"),
                ("number", Some(v)) => assert!(v.is_number(), "{run} {topic}: {payload}"),
                ("duration", Some(v)) => assert!(v.is_object(), "{run} {topic}: {payload}"),
                ("string", Some(v)) => assert!(v.is_string(), "{run} {topic}: {payload}"),
                ("string[]", Some(v)) => assert!(v.is_array(), "{run} {topic}: {payload}"),
                (_, Some(Value::Null)) => panic!("{run} {topic}: null value"),
                _ => {}
            }
            checked += 1;
        }
    }
    assert!(checked > 300, "only {checked} value messages were checked");
    // Z-Wave JS UI publishes the Node Naming and Location CC (119) but leaves it out of
    // getNodes: those topics are no device's values, so nothing maps them.
    unmapped.sort();
    unmapped.dedup();
    let not_naming: Vec<&String> = unmapped
        .iter()
        .filter(|topic| !topic.contains("/119/"))
        .collect();
    assert!(
        not_naming.is_empty(),
        "value topics that map to no value: {not_naming:?}"
    );
}

#[test]
fn the_driver_closed_reply_is_a_failure_with_its_message() {
    let reply: ApiReply = serde_json::from_value(fixture_json(
        "zwave-js-ui/captures/api-run3-getNodes-driverclosed.response.raw.json",
    ))
    .unwrap();
    assert!(!reply.success);
    assert_eq!(reply.message, "Z-Wave client not connected");
}

#[test]
fn captured_out_of_order_replies_are_matched_by_request_id() {
    let pending = PendingRequests::default();
    // Our ids are generated; the captured replies carry "req-A".."req-C". Map them in order.
    let mut receivers = Vec::new();
    for _ in 0..3 {
        receivers.push(pending.register("writeValue"));
    }
    let text =
        fixture_text("zwave-js-ui/captures/api-concurrent-writeValue-with-requestId.responses.txt");
    let mut answered = Vec::new();
    for line in text.lines() {
        let mut reply: Value = serde_json::from_str(line).unwrap();
        let captured = reply["origin"]["requestId"].as_str().unwrap().to_owned();
        let index = usize::from(captured.as_bytes()[4] - b'A');
        reply["origin"]["requestId"] = Value::String(receivers[index].0.to_string());
        assert!(pending.complete("writeValue", serde_json::from_value(reply).unwrap()));
        answered.push(captured);
    }
    assert_eq!(
        answered,
        ["req-C", "req-A", "req-B"],
        "the capture really is out of order"
    );
    let messages: Vec<String> = receivers
        .iter_mut()
        .map(|(_, rx)| rx.try_recv().unwrap().message)
        .collect();
    assert_eq!(
        messages,
        [
            "Success zwave api call",
            "Success zwave api call",
            "Args must be an array"
        ]
    );
}
