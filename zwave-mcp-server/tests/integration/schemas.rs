//! The tool surface as a client sees it: input schemas from Rust types, output schemas that
//! every structured result conforms to.

use serde_json::{Value, json};

use crate::harness::Home;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_tool_has_documented_schemas_and_its_results_conform() {
    let home = Home::start().await;
    let tools = home.client.list_all_tools().await.unwrap();
    let mut names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
    names.sort_unstable();
    assert_eq!(
        names,
        [
            "control_zwave_device",
            "get_device_sensor_data",
            "get_device_status",
            "get_zwave_health",
            "list_zwave_devices"
        ]
    );

    let calls = [
        ("list_zwave_devices", json!({"includeInactive": true})),
        (
            "control_zwave_device",
            json!({"deviceName": "Living Room Light", "action": "dim", "level": 25}),
        ),
        (
            "get_device_sensor_data",
            json!({"deviceName": "Hallway Motion", "refresh": true}),
        ),
        ("get_device_status", json!({"deviceName": "Switch One"})),
        ("get_zwave_health", json!({})),
        (
            "get_zwave_health",
            json!({"deviceName": "Garage Light", "ping": true}),
        ),
    ];
    for (name, args) in calls {
        let tool = tools.iter().find(|t| t.name == name).unwrap();
        let input = Value::Object((*tool.input_schema).clone());
        assert_eq!(input["type"], "object", "{name}");
        for (property, schema) in input["properties"].as_object().unwrap() {
            assert!(
                schema.get("description").is_some(),
                "{name}.{property} has no description"
            );
        }
        assert!(
            tool.description.as_deref().is_some_and(|d| d.len() > 40),
            "{name} description"
        );
        jsonschema::validator_for(&input)
            .unwrap_or_else(|err| panic!("{name} input schema: {err}"));

        let output = Value::Object(
            (*tool
                .output_schema
                .clone()
                .unwrap_or_else(|| panic!("{name} has no outputSchema")))
            .clone(),
        );
        let validator = jsonschema::validator_for(&output)
            .unwrap_or_else(|err| panic!("{name} output schema: {err}"));
        let result = home.ok(name, args).await;
        let errors: Vec<String> = validator
            .iter_errors(&result)
            .map(|e| e.to_string())
            .collect();
        assert!(
            errors.is_empty(),
            "{name} result does not match its outputSchema: {errors:?}\n{result}"
        );
    }

    let control = tools
        .iter()
        .find(|t| t.name == "control_zwave_device")
        .unwrap();
    let schema = Value::Object((*control.input_schema).clone());
    assert_eq!(schema["required"], json!(["deviceName", "action"]));
    let action = serde_json::to_string(&schema).unwrap();
    assert!(
        action.contains("\"on\"") && action.contains("\"off\"") && action.contains("\"dim\""),
        "{action}"
    );
    assert_eq!(
        control.annotations.as_ref().and_then(|a| a.read_only_hint),
        Some(false)
    );
}
