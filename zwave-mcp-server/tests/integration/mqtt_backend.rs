//! The MQTT backend against the simulated Z-Wave JS UI gateway: correlation, statuses,
//! failures, reconnection, and the live cache for every topic and payload type.

use std::{net::TcpListener, time::Duration};

use serde_json::json;
use zwave_mcp_server::{
    Network,
    network::{LinkState, NetworkError, NodeId, ValueId},
    sim::{EmbeddedBroker, PayloadType, SimGateway, SimOptions, TopicSettings, TopicType},
};

use crate::harness::{Home, eventually, fast_backoff, settings_for};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn replies_arriving_out_of_order_reach_the_right_callers() {
    let home = Home::start().await;
    home.sim.set_delay("getInfo", Duration::from_millis(400));
    let slow = tokio::spawn({
        let network = home.network.clone();
        async move {
            let info = network.call("getInfo", vec![]).await.unwrap();
            (info, tokio::time::Instant::now())
        }
    });
    // The slow request is at the gateway (and held there 400 ms) before the fast one is sent.
    let sim = home.sim.clone();
    assert!(
        eventually(Duration::from_secs(5), || sim
            .received()
            .iter()
            .any(|r| r.api == "getInfo"))
        .await
    );
    // Node 7, dead, does not answer: the gateway's answer is `false`.
    home.sim.set_answering(7, false);
    let ping = home.network.call("pingNode", vec![json!(2)]).await.unwrap();
    let ping_done = tokio::time::Instant::now();
    let dead_ping = home.network.call("pingNode", vec![json!(7)]).await.unwrap();
    let (info, info_done) = slow.await.unwrap();
    assert_eq!(ping, json!(true));
    assert_eq!(dead_ping, json!(false));
    assert_eq!(info["appVersion"], "11.22.2");
    assert!(
        ping_done < info_done,
        "the fast reply came first and was not mixed up"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn write_value_checks_the_status_not_success() {
    let home = Home::start().await;
    let readonly = ValueId {
        node_id: NodeId(4),
        command_class: 49,
        endpoint: 0,
        property: "Air temperature".into(),
        property_key: None,
    };
    let err = home
        .network
        .write_value(&readonly, json!(5))
        .await
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "writing 5 to 4-49-0-Air temperature failed with status 4 (NotImplemented): The Multilevel Sensor CC does not support setting values"
    );
    let dimmer = ValueId {
        node_id: NodeId(3),
        command_class: 38,
        endpoint: 0,
        property: "targetValue".into(),
        property_key: None,
    };
    let err = home
        .network
        .write_value(&dimmer, json!("50"))
        .await
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "writing \"50\" to 3-38-0-targetValue failed with status 5 (InvalidValue): Multilevel Switch: \"targetValue\" must be of type \"number\", received \"string\" (ZW0322)"
    );
    let missing = ValueId {
        node_id: NodeId(99),
        ..dimmer.clone()
    };
    let err = home
        .network
        .write_value(&missing, json!(10))
        .await
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "writing 10 to 99-38-0-targetValue failed with status 2 (Fail)"
    );
    assert!(!err.is_retryable());
    assert_eq!(
        home.network.write_value(&dimmer, json!(10)).await.unwrap(),
        254
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unknown_apis_and_driver_down_are_told_apart() {
    let home = Home::start().await;
    let err = home.network.call("setValue", vec![]).await.unwrap_err();
    assert_eq!(
        err.to_string(),
        "zwave-js-ui rejected `setValue`: Unknown API"
    );
    home.sim.set_driver_ready(false).await;
    let err = home.network.reload_nodes().await.unwrap_err();
    assert!(
        matches!(err, NetworkError::DriverDown { api: "getNodes" }),
        "{err:?}"
    );
    assert!(err.is_retryable());
    assert!(
        home.wait_until(|state| state.driver_ready == Some(false))
            .await
    );
    // The driver coming back triggers a reload of the node list.
    home.sim.set_driver_ready(true).await;
    assert!(home.wait_until(|state| state.reload_error.is_none()).await);
}

/// A reply saying the driver is down, to a request sent before the driver came back and
/// delivered after its "up", is old news: the driver stays up.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_late_driver_down_reply_does_not_undo_the_drivers_newer_status() {
    let home = Home::start().await;
    home.sim.set_driver_ready(false).await;
    assert!(
        home.wait_until(|state| state.driver_ready == Some(false))
            .await
    );
    home.sim.set_delay("getInfo", Duration::from_millis(300));
    let network = home.network.clone();
    let asked = tokio::spawn(async move { network.call("getInfo", vec![]).await });
    // The request reached Z-Wave JS UI (its answer is decided now: the driver is down) …
    assert!(
        eventually(Duration::from_secs(3), || home
            .sim
            .received()
            .iter()
            .any(|request| request.api == "getInfo"))
        .await
    );
    // … then the driver comes back, and only then does the old answer arrive.
    home.sim.set_driver_ready(true).await;
    assert!(
        home.wait_until(|state| state.driver_ready == Some(true))
            .await
    );
    let err = asked.await.unwrap().unwrap_err();
    assert!(
        matches!(err, NetworkError::DriverDown { api: "getInfo" }),
        "{err:?}"
    );
    let state = home.network.state();
    assert_eq!(state.driver_ready, Some(true));
    assert_eq!(state.driver_down_since, None);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_silent_gateway_times_out_with_the_knobs_to_check() {
    let home = Home::start_with(
        SimOptions::default(),
        Duration::from_millis(300),
        Duration::from_secs(1),
    )
    .await;
    home.sim.set_silent(true);
    let err = home.network.call("getInfo", vec![]).await.unwrap_err();
    assert_eq!(
        err.to_string(),
        "zwave-js-ui did not answer `getInfo` within 300ms: is gateway `zwave-js-ui` running with its MQTT gateway enabled, and do --topic-prefix `zwave` and --gateway-name match its settings? (see --api-timeout)"
    );
    assert!(err.is_retryable());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn broker_down_at_start_is_reported_and_the_client_connects_when_it_comes_back() {
    let addr = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap();
    let url = zwave_mcp_server::network::MqttUrl {
        host: "127.0.0.1".into(),
        port: addr.port(),
        tls: false,
    };
    let network = Network::connect(
        settings_for(url.clone(), Duration::from_secs(2)),
        fast_backoff(),
    );
    let client = crate::harness::serve(network.clone(), Duration::from_secs(1)).await;

    let probe = network.clone();
    assert!(
        eventually(Duration::from_secs(3), || matches!(
            probe.state().link,
            LinkState::Down { .. }
        ))
        .await
    );
    let result = crate::harness::call(&client, "list_zwave_devices", json!({})).await;
    assert_eq!(result.is_error, Some(true));
    let text = crate::harness::text_of(&result);
    assert!(
        text.starts_with(&format!(
            "cannot reach the mqtt broker at mqtt://127.0.0.1:{}: ",
            addr.port()
        )),
        "{text}"
    );
    assert!(
        text.ends_with("(is the broker running? check --mqtt-url; retrying in the background)"),
        "{text}"
    );

    let broker = EmbeddedBroker::start_on(addr).unwrap();
    let sim = SimGateway::start(&broker.url(), SimOptions::default());
    sim.wait_ready(Duration::from_secs(5)).await.unwrap();
    let probe = network.clone();
    assert!(
        eventually(Duration::from_secs(5), || probe.state().nodes_loaded).await,
        "reconnected and reloaded"
    );
    let result = crate::harness::call(
        &client,
        "control_zwave_device",
        json!({"deviceName": "Node 6", "action": "off"}),
    )
    .await;
    assert_eq!(
        result.is_error,
        Some(false),
        "{}",
        crate::harness::text_of(&result)
    );
    assert_eq!(sim.value(6, "37-0-currentValue"), Some(json!(false)));
}

/// Every value-topic style and payload type keeps the cache current. The simulator names its
/// topics with its own code (`sim::topics`, from the captures), so this checks the server's
/// topic index against an independent naming.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_cache_follows_value_topics_of_every_type() {
    for kind in [TopicType::ValueId, TopicType::Named] {
        for payload in [
            PayloadType::TimeValue,
            PayloadType::EntireValueId,
            PayloadType::Raw,
        ] {
            for (node_names, ignore_loc) in [(true, false), (false, false), (true, true)] {
                let options = SimOptions {
                    topics: TopicSettings {
                        kind,
                        node_names,
                        ignore_loc,
                    },
                    payload,
                    ..SimOptions::default()
                };
                let home =
                    Home::start_with(options, Duration::from_secs(2), Duration::from_secs(2)).await;
                home.network.ensure_nodes().await.unwrap();
                home.sim
                    .press(4, "49-0-Air temperature", json!(23.25))
                    .await;
                home.sim.press(2, "37-0-currentValue", json!(true)).await;
                let network = home.network.clone();
                let seen = eventually(Duration::from_secs(3), || {
                    let state = network.state();
                    state.nodes[&NodeId(4)].values["49-0-Air temperature"].value
                        == Some(json!(23.25))
                        && state.nodes[&NodeId(2)].values["37-0-currentValue"].value
                            == Some(json!(true))
                })
                .await;
                let topic = home.sim.value_topic(4, "49-0-Air temperature").unwrap();
                assert!(
                    seen,
                    "value on {topic} ({kind:?}, {payload:?}) did not reach the cache"
                );
            }
        }
    }
}

/// The demo's Switch One (node 2) as node `id` named `name` in `loc`.
fn switch_like_node_2(id: u16, name: &str, loc: &str) -> serde_json::Value {
    let home = zwave_mcp_server::sim::home::demo_home(zwave_mcp_server::network::now_ms());
    let mut node = home.into_iter().find(|n| n["id"] == 2).unwrap();
    node["id"] = json!(id);
    node["name"] = json!(name);
    node["loc"] = json!(loc);
    for value in node["values"].as_object_mut().unwrap().values_mut() {
        value["nodeId"] = json!(id);
    }
    node
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_node_sharing_a_topic_never_moves_another_nodes_state() {
    // Node 9 "Light" in the Kitchen and node 3 "Light" with no location share
    // zwave/Light/... (the location-less form of node 9's topics).
    let nodes = vec![
        switch_like_node_2(9, "Light", "Kitchen"),
        switch_like_node_2(3, "Light", ""),
    ];
    let home = Home::start_home(
        SimOptions::default(),
        nodes,
        Duration::from_secs(3),
        Duration::from_millis(300),
    )
    .await;
    home.network.ensure_nodes().await.unwrap();
    // Node 3 switches on locally: its report comes on the shared topic.
    home.sim.press(3, "37-0-currentValue", json!(true)).await;
    // Then node 9 reports its power on its own topic; reports arrive in order, so once this
    // one is in, node 3's has been handled.
    home.sim.press(9, "50-0-value-66049", json!(7.5)).await;
    assert!(
        home.wait_until(
            |state| state.nodes[&NodeId(9)].values["50-0-value-66049"].value == Some(json!(7.5))
        )
        .await
    );
    let kitchen = home.network.node(NodeId(9)).unwrap();
    assert_eq!(
        kitchen.values["37-0-currentValue"].value,
        Some(json!(false)),
        "node 3's report moved node 9"
    );
    let status = home
        .ok("get_device_status", json!({"deviceName": "Kitchen Light"}))
        .await;
    assert_eq!(status["on"], false);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn after_a_storm_of_reports_the_cache_holds_every_last_reading() {
    let nodes = zwave_mcp_server::sim::home::sized_home(20, zwave_mcp_server::network::now_ms());
    // Every reading the storm reports: Multilevel Sensor (49) and Meter (50) numbers.
    let readings: Vec<(u16, String)> = nodes
        .iter()
        .flat_map(|node| {
            let id = node["id"].as_u64().unwrap() as u16;
            node["values"]
                .as_object()
                .into_iter()
                .flatten()
                .filter(|(_, v)| {
                    [49, 50].contains(&v["commandClass"].as_u64().unwrap())
                        && v["type"] == "number"
                        && v["writeable"] == false
                        && v["value"].is_number()
                })
                .map(move |(key, _)| (id, key.clone()))
        })
        .collect();
    assert!(readings.len() > 20, "{} readings", readings.len());
    let home = Home::start_home(
        SimOptions::default(),
        nodes,
        Duration::from_secs(3),
        Duration::from_secs(1),
    )
    .await;
    home.network.ensure_nodes().await.unwrap();
    let before: Vec<_> = readings
        .iter()
        .map(|(node, key)| home.network.value(NodeId(*node), key))
        .collect();
    let storm = home.sim.storm(5_000).unwrap();
    // Three rounds over every reading, with tools answering meanwhile.
    let rounds = 3 * readings.len() as u64;
    while storm.published() < rounds {
        home.ok("list_zwave_devices", json!({})).await;
    }
    drop(storm);
    let cache_matches = || {
        readings
            .iter()
            .all(|(node, key)| home.network.value(NodeId(*node), key) == home.sim.value(*node, key))
    };
    assert!(
        eventually(Duration::from_secs(5), cache_matches).await,
        "the cache did not catch up with the last reports"
    );
    // A stormed reading never returns to its value from before the storm.
    for ((node, key), old) in readings.iter().zip(&before) {
        assert_ne!(
            home.network.value(NodeId(*node), key),
            *old,
            "node {node} {key}"
        );
    }
}

/// A broker that accepts every connection, acknowledges it, and drops it at once: what a
/// broker does to a client it refuses after connecting (an ACL, a message it cannot take).
fn dropping_broker() -> (u16, std::sync::Arc<std::sync::atomic::AtomicUsize>) {
    use std::io::{Read as _, Write as _};
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let accepted = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let count = std::sync::Arc::clone(&accepted);
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { return };
            count.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            let mut connect = [0_u8; 256];
            let _ = stream.read(&mut connect);
            // CONNACK, session not present, accepted; then the connection is closed.
            let _ = stream.write_all(&[0x20, 0x02, 0x00, 0x00]);
        }
    });
    (port, accepted)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_connection_dropped_right_after_connecting_keeps_backing_off() {
    let (port, accepted) = dropping_broker();
    let backoff = zwave_mcp_server::Backoff {
        first: Duration::from_millis(100),
        max: Duration::from_secs(10),
        jitter: 0.0,
    };
    let network = zwave_mcp_server::Network::connect(
        settings_for(
            format!("mqtt://127.0.0.1:{port}").parse().unwrap(),
            Duration::from_secs(1),
        ),
        backoff,
    );
    // 100 + 200 + 400 + 800 + 1600 ms: six connections in 3 s at most, backing off. Were the
    // backoff to start afresh at every acknowledged connection, one every 100 ms: some 30.
    let window = Duration::from_secs(3);
    let started = std::time::Instant::now();
    tokio::time::sleep(window).await;
    let connections = accepted.load(std::sync::atomic::Ordering::SeqCst);
    let elapsed = started.elapsed();
    assert!(
        connections <= 7,
        "{connections} connections in {elapsed:?}: the backoff starts afresh after connections that never loaded the node list"
    );
    assert!(connections >= 2, "it kept trying: {connections}");
    drop(network);
}
