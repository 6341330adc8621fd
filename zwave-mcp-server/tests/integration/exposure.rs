//! What the owner lets an agent see and switch: read-only mode and allow/deny rules, through
//! MCP against the demo home.

use std::time::Duration;

use serde_json::json;
use zwave_mcp_server::devices::{Exposure, Rules};

use crate::harness::{Home, call, serve_exposed, text_of};

fn rules(list: &[&str]) -> Vec<zwave_mcp_server::devices::Rule> {
    list.iter().map(|rule| rule.parse().unwrap()).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn read_only_offers_no_control_tool_at_all() {
    let home = Home::start().await;
    let exposure = Exposure {
        read_only: true,
        ..Exposure::default()
    };
    let client = serve_exposed(home.network.clone(), Duration::from_secs(1), exposure).await;
    let tools: Vec<String> = client
        .list_all_tools()
        .await
        .unwrap()
        .into_iter()
        .map(|tool| tool.name.to_string())
        .collect();
    assert_eq!(
        tools,
        [
            "get_device_sensor_data",
            "get_device_status",
            "get_zwave_health",
            "list_zwave_devices"
        ]
    );
    let refused = client
        .call_tool(
            rmcp::model::CallToolRequestParams::new("control_zwave_device").with_arguments(
                json!({"deviceName": "Switch One", "action": "on"})
                    .as_object()
                    .unwrap()
                    .clone(),
            ),
        )
        .await
        .unwrap_err();
    assert!(refused.to_string().contains("tool not found"), "{refused}");
    assert_eq!(home.sim.value(2, "37-0-currentValue"), Some(json!(false)));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hidden_devices_are_invisible_and_refused_as_unknown() {
    let home = Home::basic().await;
    let exposure = Exposure {
        read_only: false,
        read: Rules {
            allow: vec![],
            deny: rules(&["name:Garage Light", "node:6"]),
        },
        control: Rules {
            allow: rules(&["location:Living Room"]),
            deny: vec![],
        },
    };
    let client = serve_exposed(home.network.clone(), Duration::from_secs(1), exposure).await;
    let list = call(
        &client,
        "list_zwave_devices",
        json!({"includeInactive": true}),
    )
    .await;
    let names: Vec<&str> = list.structured_content.as_ref().unwrap()["devices"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "Switch One",
            "Living Room Light",
            "Office Temperature",
            "Hallway Motion"
        ]
    );
    // Reads do not see a hidden device at all.
    let status = call(
        &client,
        "get_device_status",
        json!({"deviceName": "Garage Light"}),
    )
    .await;
    assert_eq!(status.is_error, Some(true));
    let text = text_of(&status);
    assert!(
        text.starts_with("no Z-Wave device matches \"Garage Light\""),
        "{text}"
    );
    assert!(!text.contains("node 7"), "{text}");
    // A command naming it gets the answer an unknown name gets: nothing tells the agent it
    // exists.
    let control = call(
        &client,
        "control_zwave_device",
        json!({"deviceName": "Garage Light", "action": "on"}),
    )
    .await;
    assert_eq!(text_of(&control), text);
    let readable_only = call(
        &client,
        "control_zwave_device",
        json!({"deviceName": "Switch One", "action": "on"}),
    )
    .await;
    assert_eq!(
        text_of(&readable_only),
        "\"Switch One\" is not exposed to this agent for switching: the owner of this server chose which devices it may control"
    );
    assert_eq!(home.sim.value(2, "37-0-currentValue"), Some(json!(false)));
    let allowed = call(
        &client,
        "control_zwave_device",
        json!({"deviceName": "Living Room Light", "action": "dim", "level": 30}),
    )
    .await;
    assert_eq!(allowed.is_error, Some(false), "{}", text_of(&allowed));
}
