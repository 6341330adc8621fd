//! Broker-level behaviour against a real Mosquitto: TLS, and the broker going away and back.

use std::time::Duration;

use serde_json::{Value, json};
use zwave_mcp_server::{
    MqttSettings, Network,
    network::MqttUrl,
    network::{LinkState, now_ms},
    sim::{
        SimGateway, SimOptions,
        home::{MAX_NODES, sized_home},
    },
};

use test_support::mosquitto::{Mosquitto, ScratchDir, TlsFiles};

use crate::harness::{call, eventually, fast_backoff, serve, settings_for, text_of};

fn plain_url(broker: &Mosquitto) -> MqttUrl {
    broker.url().parse().unwrap()
}

/// A simulated gateway on `broker`'s plain listener, ready to answer.
async fn simulated_gateway(broker: &Mosquitto) -> SimGateway {
    let sim = SimGateway::start(&plain_url(broker), SimOptions::default());
    sim.wait_ready(Duration::from_secs(5)).await.unwrap();
    sim
}

/// A Mosquitto with the simulated gateway on it, and our gateway client connecting to it.
async fn home_on_mosquitto(api_timeout: Duration) -> (Mosquitto, SimGateway, Network) {
    let broker = Mosquitto::start(None);
    let sim = simulated_gateway(&broker).await;
    let network = Network::connect(
        settings_for(plain_url(&broker), api_timeout),
        fast_backoff(),
    );
    (broker, sim, network)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mqtts_with_the_right_ca_works_and_with_another_ca_is_refused() {
    let dir = ScratchDir::new();
    let files = TlsFiles::generate(dir.path(), "good");
    let other = TlsFiles::generate(dir.path(), "other");
    let broker = Mosquitto::start(Some(&files));
    let sim = simulated_gateway(&broker).await;
    let tls_url = MqttUrl {
        host: "127.0.0.1".into(),
        port: broker.tls.unwrap().port(),
        tls: true,
    };

    let mut settings = settings_for(tls_url.clone(), Duration::from_secs(3));
    settings.ca_pem = Some(std::fs::read(&files.ca).unwrap());
    let network = Network::connect(settings, fast_backoff());
    let client = serve(network, Duration::from_secs(2)).await;
    let result = call(
        &client,
        "control_zwave_device",
        json!({"deviceName": "Switch One", "action": "on"}),
    )
    .await;
    assert_eq!(result.is_error, Some(false), "{}", text_of(&result));
    assert_eq!(sim.value(2, "37-0-currentValue"), Some(json!(true)));

    let mut settings = settings_for(tls_url, Duration::from_secs(3));
    settings.ca_pem = Some(std::fs::read(&other.ca).unwrap());
    let untrusting = Network::connect(settings, fast_backoff());
    let probe = untrusting.clone();
    assert!(
        eventually(Duration::from_secs(5), || matches!(
            probe.state().link,
            LinkState::Down { .. }
        ))
        .await
    );
    let client = serve(untrusting, Duration::from_secs(2)).await;
    let result = call(&client, "list_zwave_devices", json!({})).await;
    assert_eq!(result.is_error, Some(true));
    let text = text_of(&result);
    assert!(
        text.starts_with(&format!(
            "cannot reach the mqtt broker at mqtts://127.0.0.1:{}: TLS",
            broker.tls.unwrap().port()
        )),
        "{text}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_client_reconnects_resubscribes_and_reloads_after_a_broker_restart() {
    let (mut broker, sim, network) = home_on_mosquitto(Duration::from_secs(2)).await;
    let client = serve(network.clone(), Duration::from_secs(2)).await;
    let result = call(
        &client,
        "control_zwave_device",
        json!({"deviceName": "Switch One", "action": "on"}),
    )
    .await;
    assert_eq!(result.is_error, Some(false), "{}", text_of(&result));

    broker.stop();
    let probe = network.clone();
    assert!(
        eventually(Duration::from_secs(5), || matches!(
            probe.state().link,
            LinkState::Down { .. }
        ))
        .await
    );
    let result = call(
        &client,
        "control_zwave_device",
        json!({"deviceName": "Switch One", "action": "off"}),
    )
    .await;
    assert_eq!(result.is_error, Some(true));
    let text = text_of(&result);
    assert!(
        text.starts_with(&format!(
            "cannot reach the mqtt broker at {}: ",
            plain_url(&broker)
        )),
        "{text}"
    );
    assert!(
        text.ends_with("(is the broker running? check --mqtt-url; retrying in the background)"),
        "{text}"
    );

    // Reads still answer, from the cache, and say that it is stale and since when.
    let result = call(&client, "list_zwave_devices", json!({})).await;
    assert_eq!(result.is_error, Some(false), "{}", text_of(&result));
    let text = text_of(&result);
    assert!(
        text.starts_with("The MQTT broker is unreachable since "),
        "{text}"
    );
    assert!(text.contains("; last known states:\n"), "{text}");
    let stale = &result.structured_content.unwrap()["stale"];
    assert_eq!(stale["reason"], "broker unreachable");

    broker.restart();
    sim.wait_ready(Duration::from_secs(10)).await.unwrap();
    let probe = network.clone();
    assert!(
        eventually(Duration::from_secs(10), || probe.state().nodes_loaded).await,
        "reloaded after reconnecting"
    );
    let result = call(
        &client,
        "control_zwave_device",
        json!({"deviceName": "Switch One", "action": "off"}),
    )
    .await;
    assert_eq!(result.is_error, Some(false), "{}", text_of(&result));
    assert_eq!(
        result.structured_content.unwrap()["confirmed"],
        true,
        "value topics flow again: resubscribed"
    );
    // A local change after the restart reaches the cache through the new subscription.
    sim.press(4, "49-0-Air temperature", json!(19.0)).await;
    let probe = network.clone();
    assert!(
        eventually(Duration::from_secs(3), || {
            probe.state().nodes[&zwave_mcp_server::network::NodeId(4)].values["49-0-Air temperature"].value == Some(json!(19.0))
        })
        .await
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_request_waiting_when_the_broker_dies_fails_at_once() {
    let (mut broker, sim, network) = home_on_mosquitto(Duration::from_secs(20)).await;
    network.ensure_nodes().await.unwrap();
    sim.set_silent(true);
    let waiting = tokio::spawn({
        let network = network.clone();
        async move { network.call("getInfo", vec![]).await }
    });
    // The request reached the (silent) gateway: it is waiting for a reply.
    let probe = sim.clone();
    assert!(
        crate::harness::eventually(Duration::from_secs(5), || probe
            .received()
            .iter()
            .any(|r| r.api == "getInfo"))
        .await
    );
    let stopped = std::time::Instant::now();
    broker.stop();
    let err = waiting.await.unwrap().unwrap_err();
    assert!(
        stopped.elapsed() < Duration::from_secs(5),
        "failed when the connection dropped, not at the 20 s timeout"
    );
    assert_eq!(
        err.to_string(),
        "lost the mqtt connection while waiting for `getInfo`: it may have reached zwave-js-ui before the connection dropped, but it will not be sent again; reconnecting in the background (check the device's state before trying again)"
    );
    assert!(err.is_retryable());
}

/// Records every payload published on `topic`, from a client of its own.
async fn observe(broker: &Mosquitto, topic: &str) -> std::sync::Arc<std::sync::Mutex<Vec<Value>>> {
    use rumqttc::{AsyncClient, Event, MqttOptions, Packet, QoS};
    let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let mut options = MqttOptions::new(
        format!("observer-{}", std::process::id()),
        "127.0.0.1",
        broker.plain.port(),
    );
    options.set_keep_alive(Duration::from_secs(30));
    let (client, mut events) = AsyncClient::new(options, 64);
    // QoS 0: Mosquitto would drop QoS 1 messages beyond 1,000 queued for a slow reader.
    client.subscribe(topic, QoS::AtMostOnce).await.unwrap();
    let (subscribed, ready) = tokio::sync::oneshot::channel();
    let kept = std::sync::Arc::clone(&seen);
    tokio::spawn(async move {
        let _client = client;
        let mut subscribed = Some(subscribed);
        while let Ok(event) = events.poll().await {
            match event {
                Event::Incoming(Packet::SubAck(_)) => {
                    if let Some(ready) = subscribed.take() {
                        let _ = ready.send(());
                    }
                }
                Event::Incoming(Packet::Publish(publish)) => {
                    if let Ok(value) = serde_json::from_slice(&publish.payload) {
                        kept.lock().unwrap().push(value);
                    }
                }
                _ => {}
            }
        }
    });
    tokio::time::timeout(Duration::from_secs(5), ready)
        .await
        .unwrap()
        .unwrap();
    seen
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_full_network_loads_at_once_although_its_retained_values_overflow_mosquittos_queue() {
    // Mosquitto holds at most 20 QoS 1 messages in flight and 1,000 queued per client, and
    // drops the rest: a 232-node home's 5,000 retained values can push the getNodes reply out
    // of that queue if values are subscribed at QoS 1 (how often depends on timing). And the
    // retained statuses of nodes not yet loaded must not force a second getNodes.
    let broker = Mosquitto::start(None);
    let sim = SimGateway::start_with(
        &MqttSettings::new(plain_url(&broker)),
        SimOptions::default(),
        sized_home(MAX_NODES, now_ms()),
    );
    sim.wait_published(Duration::from_secs(30)).await.unwrap();

    let network = Network::connect(
        settings_for(plain_url(&broker), Duration::from_secs(20)),
        fast_backoff(),
    );
    let client = serve(network, Duration::from_secs(2)).await;
    let result = call(&client, "list_zwave_devices", json!({})).await;
    assert_eq!(result.is_error, Some(false), "{}", text_of(&result));
    assert!(text_of(&result).starts_with("227 Z-Wave devices:"));
    let asked = sim
        .received()
        .iter()
        .filter(|request| request.api == "getNodes")
        .count();
    assert_eq!(
        asked, 1,
        "the first getNodes reply was lost and asked again"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_servers_on_one_home_never_take_each_others_replies() {
    // Every client of the home sees every API reply. One server switches while the other
    // polls sensors: a writeValue reply must never complete the other's pollValue (before
    // per-process ids, both servers' first request was `zwave-mcp-1`).
    let (broker, _sim, first) = home_on_mosquitto(Duration::from_secs(5)).await;
    let second = Network::connect(
        settings_for(plain_url(&broker), Duration::from_secs(5)),
        fast_backoff(),
    );
    let writes = observe(
        &broker,
        "zwave/_CLIENTS/ZWAVE_GATEWAY-zwave-js-ui/api/writeValue/set",
    )
    .await;
    let switching = serve(first, Duration::from_secs(2)).await;
    let reading = serve(second, Duration::from_secs(2)).await;
    const ROUNDS: u64 = 10;
    let switches = async {
        let mut results = Vec::new();
        for round in 0..ROUNDS {
            let action = if round % 2 == 0 { "on" } else { "off" };
            let result = call(
                &switching,
                "control_zwave_device",
                json!({"deviceName": "Switch One", "action": action}),
            )
            .await;
            results.push((action, result));
        }
        results
    };
    // The other server dims the living room light and polls a sensor, in turns.
    let reads = async {
        let mut results = Vec::new();
        for round in 0..ROUNDS {
            let dim = call(
                &reading,
                "control_zwave_device",
                json!({"deviceName": "Living Room Light", "action": "dim", "level": 10 + round}),
            )
            .await;
            let poll = call(
                &reading,
                "get_device_sensor_data",
                json!({"deviceName": "Office Temperature", "refresh": true}),
            )
            .await;
            results.push((round, dim, poll));
        }
        results
    };
    let (switched, read) = tokio::join!(switches, reads);
    for (action, result) in switched {
        assert_eq!(result.is_error, Some(false), "{}", text_of(&result));
        let outcome = result.structured_content.unwrap();
        assert_eq!(outcome["device"], "Switch One");
        assert_eq!(outcome["nodeId"], 2);
        assert_eq!(outcome["written"], json!(action == "on"));
        assert!(
            matches!(outcome["status"].as_i64(), Some(254 | 255)),
            "{outcome}"
        );
    }
    for (round, dim, poll) in read {
        assert_eq!(dim.is_error, Some(false), "{}", text_of(&dim));
        let outcome = dim.structured_content.unwrap();
        assert_eq!(outcome["device"], "Living Room Light");
        assert_eq!(outcome["nodeId"], 3);
        assert_eq!(outcome["written"], json!(10 + round));
        assert!(
            matches!(outcome["status"].as_i64(), Some(254 | 255)),
            "{outcome}"
        );
        assert_eq!(poll.is_error, Some(false), "{}", text_of(&poll));
        let data = poll.structured_content.unwrap();
        assert_eq!(data["device"], "Office Temperature");
        assert_eq!(data["refreshErrors"], json!([]), "{data}");
        for reading in data["readings"].as_array().unwrap() {
            assert!(
                reading["value"].is_number(),
                "a reading took another reply: {reading}"
            );
        }
    }
    // The independent observer saw each write of both servers once, each with its own id.
    let expected = usize::try_from(2 * ROUNDS).unwrap();
    assert!(
        eventually(Duration::from_secs(5), || writes.lock().unwrap().len()
            >= expected)
        .await
    );
    let seen = writes.lock().unwrap().clone();
    assert_eq!(seen.len(), expected, "{seen:?}");
    let ids: std::collections::BTreeSet<&str> = seen
        .iter()
        .map(|w| w["requestId"].as_str().unwrap())
        .collect();
    assert_eq!(ids.len(), expected);
}

/// A small deterministic generator for the fault timings (xorshift64*), seeded per test run.
struct Dice(u64);

impl Dice {
    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D) % n
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_write_whose_caller_got_an_error_never_reaches_the_gateway_later() {
    const RUNS: u64 = 100;
    const WRITES: u64 = 4;
    let mut broker = Mosquitto::start(None);
    let sim = simulated_gateway(&broker).await;
    // Reconnecting more slowly than the simulator (200 ms) lets it subscribe first, so a
    // command sent late after a reconnection would reach it and be seen.
    let backoff = zwave_mcp_server::Backoff {
        first: Duration::from_millis(400),
        max: Duration::from_millis(400),
        jitter: 0.0,
    };
    let network = Network::connect(
        settings_for(plain_url(&broker), Duration::from_secs(2)),
        backoff,
    );
    let seed = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos() as u64
        | 1;
    let mut dice = Dice(seed);
    let dimmer: zwave_mcp_server::network::ValueId = serde_json::from_value(
        json!({"nodeId": 3, "commandClass": 38, "endpoint": 0, "property": "targetValue"}),
    )
    .unwrap();
    let (mut failed, mut succeeded) = (0, 0);
    for run in 0..RUNS {
        let probe = network.clone();
        assert!(
            eventually(Duration::from_secs(10), || {
                let state = probe.state();
                state.link == LinkState::Connected && state.nodes_loaded
            })
            .await,
            "seed {seed} run {run}: no reconnection"
        );
        sim.wait_ready(Duration::from_secs(10)).await.unwrap();
        let started = std::time::Instant::now();
        let mut writes = tokio::task::JoinSet::new();
        for n in 0..WRITES {
            let (network, id) = (network.clone(), dimmer.clone());
            let level = 1 + (run * WRITES + n) % 98;
            writes.spawn(async move {
                let result = network.write_value(&id, json!(level)).await;
                (level, result, std::time::Instant::now())
            });
        }
        // The broker dies at a random moment: before, during or after the writes go out.
        let wait = Duration::from_micros(dice.below(80_000));
        tokio::time::sleep(wait).await;
        broker.stop();
        let mut outcomes = Vec::new();
        while let Some(joined) = writes.join_next().await {
            outcomes.push(joined.unwrap());
        }
        broker.restart();
        // The witness: whatever reaches the restarted broker was sent after the outage. It
        // subscribes long before our client's first reconnection attempt (400 ms).
        let late = observe(
            &broker,
            "zwave/_CLIENTS/ZWAVE_GATEWAY-zwave-js-ui/api/writeValue/set",
        )
        .await;
        let probe = network.clone();
        assert!(
            eventually(Duration::from_secs(10), || probe.state().link
                == LinkState::Connected)
            .await,
            "seed {seed} run {run}: no reconnection"
        );
        sim.wait_ready(Duration::from_secs(10)).await.unwrap();
        // A fence: anything still queued from before the outage would go out before it.
        loop {
            match network.write_value(&dimmer, json!(99)).await {
                Ok(_) => break,
                Err(err) if err.is_retryable() => tokio::task::yield_now().await,
                Err(err) => panic!("seed {seed} run {run}: fence failed: {err}"),
            }
        }
        assert!(
            eventually(Duration::from_secs(5), || late
                .lock()
                .unwrap()
                .iter()
                .any(|w| w["args"][1] == json!(99)))
            .await,
            "seed {seed} run {run}: the observer missed the fence"
        );
        let sent_late: Vec<Value> = late
            .lock()
            .unwrap()
            .iter()
            .map(|w| w["args"][1].clone())
            .filter(|level| *level != json!(99))
            .collect();
        assert!(
            sent_late.is_empty(),
            "seed {seed} run {run} (broker stopped after {wait:?}): commands from before the outage were sent after it: levels {sent_late:?}; callers were told {:?}",
            outcomes
                .iter()
                .map(|(level, result, _)| (level, result.as_ref().map_err(ToString::to_string)))
                .collect::<Vec<_>>()
        );
        // What the gateway got: each successful write exactly once; a failed one at most once
        // (it may have gone out just before the connection dropped, as its error says).
        let received: Vec<Value> = sim
            .received()
            .into_iter()
            .filter(|r| r.api == "writeValue" && r.at >= started)
            .map(|r| r.payload["args"][1].clone())
            .collect();
        for (level, result, _) in outcomes {
            let arrivals = received.iter().filter(|v| **v == json!(level)).count();
            match result {
                Ok(_) => {
                    succeeded += 1;
                    assert_eq!(
                        arrivals, 1,
                        "seed {seed} run {run}: level {level} arrived {arrivals} times"
                    );
                }
                Err(err) => {
                    failed += 1;
                    assert!(
                        arrivals <= 1,
                        "seed {seed} run {run}: level {level} arrived {arrivals} times"
                    );
                    assert!(
                        matches!(
                            err,
                            zwave_mcp_server::NetworkError::ConnectionLost { .. }
                                | zwave_mcp_server::NetworkError::BrokerUnreachable { .. }
                        ),
                        "seed {seed} run {run}: {err}"
                    );
                }
            }
        }
    }
    // Both paths were exercised.
    assert!(
        failed > 0 && succeeded > 0,
        "seed {seed}: {failed} failed, {succeeded} succeeded"
    );
    eprintln!(
        "{RUNS} runs, seed {seed}: {succeeded} writes succeeded, {failed} failed, none arrived late"
    );
}
