//! Broker-level behaviour against a real Mosquitto: TLS, and the broker going away and back.

use std::time::Duration;

use serde_json::json;
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
