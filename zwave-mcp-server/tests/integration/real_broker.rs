//! Broker-level behaviour against a real Mosquitto: TLS, and the broker going away and back.

use std::time::Duration;

use serde_json::{Value, json};
use zwave_mcp_server::{
    Gateway,
    config::MqttUrl,
    gateway::BrokerState,
    sim::{SimControl, SimOptions},
};

use protocol_tests::mosquitto::{Mosquitto, ScratchDir, TlsFiles};

use crate::harness::{call, eventually, fast_backoff, serve, settings_for, text_of};

fn plain_url(broker: &Mosquitto) -> MqttUrl {
    broker.url().parse().unwrap()
}

/// A simulated gateway on `broker`'s plain listener, ready to answer.
async fn simulated_gateway(broker: &Mosquitto) -> SimControl {
    let sim = SimControl::start(&plain_url(broker), SimOptions::default());
    sim.wait_ready(Duration::from_secs(5)).await.unwrap();
    sim
}

/// A Mosquitto with the simulated gateway on it, and our gateway client connecting to it.
async fn home_on_mosquitto(api_timeout: Duration) -> (Mosquitto, SimControl, Gateway) {
    let broker = Mosquitto::start(None);
    let sim = simulated_gateway(&broker).await;
    let gateway = Gateway::connect(
        settings_for(plain_url(&broker), api_timeout),
        fast_backoff(),
    );
    (broker, sim, gateway)
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
    let gateway = Gateway::connect(settings, fast_backoff());
    let client = serve(gateway, Duration::from_secs(2)).await;
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
    let untrusting = Gateway::connect(settings, fast_backoff());
    let probe = untrusting.clone();
    assert!(
        eventually(Duration::from_secs(5), || matches!(
            probe.state().broker,
            BrokerState::Down { .. }
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
    let (mut broker, sim, gateway) = home_on_mosquitto(Duration::from_secs(2)).await;
    let client = serve(gateway.clone(), Duration::from_secs(2)).await;
    let result = call(
        &client,
        "control_zwave_device",
        json!({"deviceName": "Switch One", "action": "on"}),
    )
    .await;
    assert_eq!(result.is_error, Some(false), "{}", text_of(&result));

    broker.stop();
    let probe = gateway.clone();
    assert!(
        eventually(Duration::from_secs(5), || matches!(
            probe.state().broker,
            BrokerState::Down { .. }
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
    let probe = gateway.clone();
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
    let probe = gateway.clone();
    assert!(
        eventually(Duration::from_secs(3), || {
            probe.state().nodes[&zwave_mcp_server::gateway::NodeId(4)].values["49-0-Air temperature"].value == Some(json!(19.0))
        })
        .await
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_request_waiting_when_the_broker_dies_fails_at_once() {
    let (mut broker, sim, gateway) = home_on_mosquitto(Duration::from_secs(20)).await;
    gateway.ensure_nodes().await.unwrap();
    sim.set_silent(true);
    let waiting = tokio::spawn({
        let gateway = gateway.clone();
        async move { gateway.call("getInfo", vec![]).await }
    });
    tokio::time::sleep(Duration::from_millis(300)).await;
    let stopped = std::time::Instant::now();
    broker.stop();
    let err = waiting.await.unwrap().unwrap_err();
    assert!(
        stopped.elapsed() < Duration::from_secs(5),
        "failed when the connection dropped, not at the 20 s timeout"
    );
    assert_eq!(
        err.to_string(),
        "lost the mqtt connection while waiting for `getInfo`; reconnecting in the background, try again"
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
    client.subscribe(topic, QoS::AtLeastOnce).await.unwrap();
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
async fn two_servers_on_one_home_never_take_each_others_replies() {
    // Every client of the home sees every API reply. One server switches while the other
    // polls sensors: a writeValue reply must never complete the other's pollValue (before
    // per-process ids, both servers' first request was `zwave-mcp-1`).
    let (broker, _sim, first) = home_on_mosquitto(Duration::from_secs(5)).await;
    let second = Gateway::connect(
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
    const ROUNDS: usize = 10;
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
    let reads = async {
        let mut results = Vec::new();
        for _ in 0..ROUNDS {
            results.push(
                call(
                    &reading,
                    "get_device_sensor_data",
                    json!({"deviceName": "Office Temperature", "refresh": true}),
                )
                .await,
            );
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
    for result in read {
        assert_eq!(result.is_error, Some(false), "{}", text_of(&result));
        let data = result.structured_content.unwrap();
        assert_eq!(data["device"], "Office Temperature");
        assert_eq!(data["refreshErrors"], json!([]), "{data}");
        for reading in data["readings"].as_array().unwrap() {
            assert!(
                reading["value"].is_number(),
                "a reading took another reply: {reading}"
            );
        }
    }
    // The independent observer saw each write once, each with its own id.
    assert!(
        eventually(Duration::from_secs(5), || writes.lock().unwrap().len()
            >= ROUNDS)
        .await
    );
    let seen = writes.lock().unwrap().clone();
    assert_eq!(seen.len(), ROUNDS, "{seen:?}");
    let ids: std::collections::BTreeSet<&str> = seen
        .iter()
        .map(|w| w["requestId"].as_str().unwrap())
        .collect();
    assert_eq!(ids.len(), ROUNDS);
}
