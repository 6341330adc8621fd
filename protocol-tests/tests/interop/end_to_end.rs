//! End to end with a real broker: mcp-client → zwave-mcp-server → Mosquitto → the simulated
//! gateway (`zwave-mcp-server simulate`, a separate process), and the light switched through
//! the tool is seen on its MQTT value topic by an independent subscriber.

use std::{
    process::{Child, Command, Stdio},
    time::Duration,
};

use mcp_client::{ServerCommand, ServerConfig, ServerConnection};
use rumqttc::{AsyncClient, Event, MqttOptions, Packet, QoS};
use serde_json::{Value, json};
use test_support::{mosquitto::Mosquitto, workspace_bin};

struct Reaper(Child);

impl Drop for Reaper {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_light_switched_through_the_tool_is_seen_on_its_mqtt_topic() {
    let broker = Mosquitto::start(None);
    let _gateway = Reaper(
        Command::new(workspace_bin("zwave-mcp-server"))
            .args(["simulate", "--mqtt-url", &broker.url()])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    );

    // An independent observer of the dimmer's current-value topic.
    let mut options = MqttOptions::new("e2e-observer", "127.0.0.1", broker.plain.port());
    options.set_keep_alive(Duration::from_secs(30));
    let (observer, mut events) = AsyncClient::new(options, 16);
    observer
        .subscribe(
            "zwave/Living_Room/Living_Room_Light/38/0/currentValue",
            QoS::AtLeastOnce,
        )
        .await
        .unwrap();
    let (seen_tx, mut seen) = tokio::sync::mpsc::unbounded_channel::<Value>();
    tokio::spawn(async move {
        while let Ok(event) = events.poll().await {
            if let Event::Incoming(Packet::Publish(publish)) = event
                && let Ok(payload) = serde_json::from_slice::<Value>(&publish.payload)
            {
                let _ = seen_tx.send(payload);
            }
        }
    });

    let server = workspace_bin("zwave-mcp-server")
        .to_string_lossy()
        .into_owned();
    let mut config = ServerConfig::new(ServerCommand::new(
        "zwave",
        server,
        ["--mqtt-url".to_owned(), broker.url()],
    ));
    config.init_timeout = Duration::from_secs(20);
    let client = ServerConnection::new(config);
    client.connect().await.unwrap();
    // The simulated gateway may still be starting: retry the first call for a few seconds.
    let mut result = None;
    for _ in 0..50 {
        let attempt = client
            .call_tool(
                "control_zwave_device",
                json!({"deviceName": "Living Room Light", "action": "dim", "level": 70})
                    .as_object()
                    .unwrap()
                    .clone(),
            )
            .await
            .unwrap();
        if attempt.is_error != Some(true) {
            result = Some(attempt);
            break;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let result = result.expect("the tool succeeded once the gateway was up");
    // Answered at acknowledgement (the default): the dimmer's own report comes ~5 s later.
    let outcome = result.structured_content.unwrap();
    assert_eq!(outcome["outcome"], "acknowledged", "{outcome}");
    assert_eq!(outcome["status"], 254, "{outcome}");

    let observed = tokio::time::timeout(Duration::from_secs(5), async {
        while let Some(payload) = seen.recv().await {
            if payload["value"] == 70 {
                return payload;
            }
        }
        Value::Null
    })
    .await
    .expect("the new level was published on the value topic");
    assert_eq!(observed["value"], 70);
    client.shutdown().await;
}
