//! What zwave-js-server or the broker sends cannot grow the server with it. A
//! WebSocket frame past the frame limit ends the connection before it is read; a value past
//! the bounds of one value is refused from its text, never built into a `serde_json::Value`
//! tree (32 bytes per element: 60 MiB of `[0,0,…]` was 2.05 GB at peak, 16 MiB over MQTT
//! 563 MB). The witness is the binary's own peak RSS (`VmHWM`), read while it runs, after a
//! later message shows that the big one was read.

use std::time::{Duration, Instant};

use futures_util::{SinkExt as _, StreamExt as _};
use rumqttc::{AsyncClient, Event, MqttOptions, Packet, QoS};
use serde_json::{Value, json};
use test_support::{child::peak_rss_kib, mosquitto::Mosquitto};
use tokio::net::TcpListener;
use tokio_tungstenite::tungstenite::Message;
use zwave_mcp_server::sim::{SimGateway, SimOptions};

use crate::harness::{Conversation, command};

/// Peak RSS allowed, in KiB: the binary's own (~20 MiB) plus one frame or packet buffered
/// (16 MiB, twice at most), far below one tree of it (~250 MiB for 16 MiB of zeros).
const PEAK_KIB: u64 = 96 * 1024;

/// `[0,0,…]`, `items` zeros: two bytes of JSON each.
fn zeros(items: usize) -> String {
    format!("[{}0]", "0,".repeat(items - 1))
}

/// A `value updated` event of node 2's switch (the recorded network's `37-0-currentValue`)
/// with `value` (JSON text) as its new value.
fn switch_event(value: &str) -> String {
    format!(
        r#"{{"type":"event","event":{{"source":"node","event":"value updated","nodeId":2,"args":{{"commandClassName":"Binary Switch","commandClass":37,"endpoint":0,"property":"currentValue","newValue":{value}}}}}}}"#
    )
}

/// A zwave-js-server that answers the handshake with the recorded state and, on its n-th
/// connection, then sends the frames of `after[n]`. Returns its URL.
async fn scripted(after: Vec<Vec<String>>) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("ws://{}", listener.local_addr().unwrap());
    let recorded: Value = serde_json::from_str(&test_support::fixture_text(
        "zwave-js-server/start_listening.result.json",
    ))
    .unwrap();
    let state = recorded["result"].clone();
    tokio::spawn(async move {
        let mut scripts = after.into_iter();
        while let Ok((stream, _)) = listener.accept().await {
            let frames = scripts.next().unwrap_or_default();
            let state = state.clone();
            tokio::spawn(async move {
                let Ok(mut socket) = tokio_tungstenite::accept_async(stream).await else {
                    return;
                };
                let version = json!({"type": "version", "homeId": 1, "driverVersion": "15.29.0",
                    "serverVersion": "3.10.2", "minSchemaVersion": 0, "maxSchemaVersion": 50});
                if socket
                    .send(Message::text(version.to_string()))
                    .await
                    .is_err()
                {
                    return;
                }
                // Pings (the client's liveness check) are answered by tungstenite itself.
                while let Some(Ok(message)) = socket.next().await {
                    let Message::Text(text) = message else {
                        continue;
                    };
                    let command: Value = serde_json::from_str(&text).unwrap();
                    let listen = command["command"] == "start_listening";
                    let result = if listen { state.clone() } else { json!({}) };
                    let reply = json!({"type": "result", "success": true,
                        "messageId": command["messageId"], "result": result});
                    if socket.send(Message::text(reply.to_string())).await.is_err() {
                        return;
                    }
                    if listen {
                        for frame in &frames {
                            // The client may drop the connection at a frame too big.
                            if socket.send(Message::text(frame.clone())).await.is_err() {
                                return;
                            }
                        }
                    }
                }
            });
        }
    });
    url
}

/// Reads `device` until it is on (each read a round trip: nothing is ordered by sleeping).
fn until_on(session: &mut Conversation, device: &str) {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let (_, text, status) = session.call("get_device_status", json!({"deviceName": device}));
        if status["on"] == true {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "{device} never showed on: {text}"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_huge_frame_or_value_from_zwave_js_server_does_not_grow_the_server() {
    // Connection 1: a 60 MiB frame, over the frame limit: the connection ends unread.
    // Connection 2: 15 MiB of zeros as the switch's value (under the frame limit, over the
    // value limit: refused unparsed), then `true`, which says both were read.
    let url = scripted(vec![
        vec![switch_event(&zeros(30 << 20))],
        vec![switch_event(&zeros(15 << 19)), switch_event("true")],
    ])
    .await;
    let mut session = Conversation::over(&mut command(&["--zwave-js-url", &url]));
    until_on(&mut session, "Node 2");
    let peak = peak_rss_kib(session.pid());
    let output = session.finish();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("Message too long"), "{stderr}");
    assert!(
        stderr.contains("refused a value zwave-js-server reported")
            && stderr.contains("key=37-0-currentValue")
            && stderr.contains(&format!("{} bytes of JSON", zeros(15 << 19).len())),
        "{stderr}"
    );
    eprintln!("peak RSS {} MiB", peak / 1024);
    assert!(peak < PEAK_KIB, "peak RSS {peak} KiB\n{stderr}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_16_mib_value_over_mqtt_is_refused_unparsed_and_does_not_grow_the_server() {
    let broker = Mosquitto::start(None);
    let sim = SimGateway::start(&broker.url().parse().unwrap(), SimOptions::default());
    sim.wait_ready(Duration::from_secs(5)).await.unwrap();
    let mut session = Conversation::over(&mut command(&["--mqtt-url", &broker.url()]));
    // Loaded and subscribed before anything is published.
    let (error, text, status) =
        session.call("get_device_status", json!({"deviceName": "Switch One"}));
    assert!(!error && status["on"] == false, "{text}");
    let topic = sim.value_topic(2, "37-0-currentValue").unwrap();
    // 16 MiB exactly, the largest message taken at all (`MAX_PAYLOAD`).
    let head = r#"{"time":1,"value":"#;
    let huge = format!("{head}{}}}", zeros((16 * 1024 * 1024 - head.len() - 2) / 2));
    assert!(huge.len() <= 16 * 1024 * 1024);
    let bytes = huge.len();
    // One publisher, one topic: the broker delivers the two in order.
    publish(
        &broker,
        &topic,
        vec![huge.into_bytes(), br#"{"time":2,"value":true}"#.to_vec()],
    )
    .await;
    until_on(&mut session, "Switch One");
    let peak = peak_rss_kib(session.pid());
    let output = session.finish();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("refused a value report larger than any value")
            && stderr.contains("node=2")
            && stderr.contains("key=37-0-currentValue")
            && stderr.contains(&format!("bytes={bytes}")),
        "{stderr}"
    );
    eprintln!("peak RSS {} MiB", peak / 1024);
    assert!(peak < PEAK_KIB, "peak RSS {peak} KiB\n{stderr}");
}

/// Publishes `payloads` in order to `topic` (QoS 1, not retained), and waits for every ack.
async fn publish(broker: &Mosquitto, topic: &str, payloads: Vec<Vec<u8>>) {
    let url: zwave_mcp_server::network::MqttUrl = broker.url().parse().unwrap();
    let mut options = MqttOptions::new("memory-publisher", url.host.clone(), url.port);
    options.set_max_packet_size(64 * 1024 * 1024, 64 * 1024 * 1024);
    let (client, mut events) = AsyncClient::new(options, 10);
    let count = payloads.len();
    for payload in payloads {
        client
            .publish(topic, QoS::AtLeastOnce, false, payload)
            .await
            .unwrap();
    }
    tokio::time::timeout(Duration::from_secs(30), async {
        let mut acked = 0;
        while acked < count {
            if let Event::Incoming(Packet::PubAck(_)) = events.poll().await.unwrap() {
                acked += 1;
            }
        }
    })
    .await
    .expect("the broker acknowledged both messages");
}
