//! A write whose answer did not come in time was sent: its caller is told it may still take
//! effect, never that it failed.

use std::time::Duration;

use serde_json::json;

use crate::harness::{GatewayHome, answer};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_write_that_timed_out_says_it_may_still_take_effect() {
    let home = GatewayHome::renamed(&[]).await;
    home.sim.set_delay("writeValue", Duration::from_secs(60));
    let output = home
        .run(
            &["--api-timeout", "1s"],
            &[(
                "control_zwave_device",
                json!({"deviceName": "Switch One", "action": "on"}),
            )],
        )
        .await;
    assert_eq!(
        answer(&output, 2),
        (
            true,
            "no answer to the command for \"Switch One\": zwave-js-ui did not answer `writeValue` within 1s (the command was sent and may still take effect: check the device's state before trying again): is gateway `zwave-js-ui` running with its MQTT gateway enabled, and do --topic-prefix `zwave` and --gateway-name match its settings? (see --api-timeout)"
                .to_owned()
        )
    );
    assert_eq!(home.writes().len(), 1, "it was sent");
}
