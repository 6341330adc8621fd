//! What the broker carries cannot knock the server out: a retained message larger than any of
//! Z-Wave JS UI's is dropped where it arrives, and the connection stays up.

use std::time::Duration;

use rumqttc::{AsyncClient, Event, MqttOptions, Packet, QoS};
use serde_json::json;
use test_support::mosquitto::Mosquitto;
use zwave_mcp_server::sim::{SimGateway, SimOptions};

use crate::harness::{answer, command, feed_blocking, session};

/// Publishes `bytes` bytes, retained, to `topic` on `broker`, and waits for the broker's ack.
async fn publish_retained(broker: &Mosquitto, topic: &str, bytes: usize) {
    let url: zwave_mcp_server::network::MqttUrl = broker.url().parse().unwrap();
    let mut options = MqttOptions::new("misbehaving-publisher", url.host.clone(), url.port);
    options.set_max_packet_size(64 * 1024 * 1024, 64 * 1024 * 1024);
    let (client, mut events) = AsyncClient::new(options, 10);
    client
        .publish(topic, QoS::AtLeastOnce, true, vec![b'x'; bytes])
        .await
        .unwrap();
    tokio::time::timeout(Duration::from_secs(20), async {
        loop {
            if let Event::Incoming(Packet::PubAck(_)) = events.poll().await.unwrap() {
                return;
            }
        }
    })
    .await
    .expect("the broker acknowledged the big message");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_huge_retained_message_under_the_prefix_is_dropped_and_the_server_keeps_working() {
    let broker = Mosquitto::start(None);
    let sim = SimGateway::start(&broker.url().parse().unwrap(), SimOptions::default());
    sim.wait_ready(Duration::from_secs(5)).await.unwrap();
    publish_retained(&broker, "zwave/junk/big", 17 * 1024 * 1024).await;
    let calls: Vec<(&str, serde_json::Value)> = (0..5)
        .map(|_| ("get_device_status", json!({"deviceName": "Switch One"})))
        .collect();
    let output = feed_blocking(
        command(&["--mqtt-url", &broker.url()]),
        &session(&calls),
        Duration::from_secs(60),
    )
    .await;
    let stderr = String::from_utf8_lossy(&output.stderr);
    for id in 2..=6 {
        let (error, text) = answer(&output, id);
        assert!(!error, "{text}\n{stderr}");
    }
    assert!(
        stderr.contains("dropped an incoming message too large to be Z-Wave JS UI's topic=\"zwave/junk/big\" bytes=17825792"),
        "{stderr}"
    );
    assert!(!stderr.contains("lost the mqtt connection"), "{stderr}");
    let loads = sim
        .received()
        .iter()
        .filter(|r| r.api == "getNodes")
        .count();
    assert_eq!(loads, 1, "one connection, one node list");
}
