//! The demo home: the `getNodes` data the simulated gateway serves, shaped like the captures.

use serde_json::{Map, Value, json};

/// The demo home's nodes, as Z-Wave JS UI's `getNodes` returns them.
///
/// Node 1 is the controller, 255 the virtual broadcast node; the devices are a switch with a
/// power meter, a dimmer, a temperature/humidity multisensor, a motion sensor, an unnamed plug
/// and a dead light.
pub fn demo_home(now_ms: i64) -> Vec<Value> {
    let recent = now_ms - 45_000;
    vec![
        controller(now_ms),
        Node::new(2, "Switch One", "Kitchen", recent)
            .binary_switch(false)
            .meter(
                65_537,
                "Electric_kWh_Consumed",
                "Electric Consumption [kWh]",
                "kWh",
                json!(12.34),
            )
            .meter(
                66_049,
                "Electric_W_Consumed",
                "Electric Consumption [W]",
                "W",
                json!(0),
            )
            .build(),
        Node::new(3, "Living Room Light", "Living Room", recent)
            .dimmer(0)
            .build(),
        Node::new(4, "Office Temperature", "Office", recent)
            .sensor("Air temperature", "°C", json!(21.5), 1)
            .sensor("Humidity", "%", json!(45), 5)
            .battery(87)
            .build(),
        Node::new(5, "Hallway Motion", "Hallway", recent)
            .motion(0)
            .sensor("Illuminance", "Lux", json!(120), 3)
            .battery(64)
            .build(),
        Node::new(6, "", "", recent).binary_switch(true).build(),
        Node::new(7, "Garage Light", "Garage", now_ms - 3 * 86_400_000)
            .binary_switch(false)
            .dead()
            .build(),
        broadcast(now_ms),
    ]
}

fn controller(now_ms: i64) -> Value {
    json!({
        "id": 1, "name": "", "loc": "", "ready": true, "available": true, "failed": false,
        "status": "Alive", "interviewStage": "Complete", "isControllerNode": true,
        "isListening": true, "lastActive": now_ms, "productLabel": "Demo controller",
        "manufacturer": "zwave-mcp-server", "deviceId": "0-0-0", "values": {},
    })
}

fn broadcast(now_ms: i64) -> Value {
    let mut values = Map::new();
    for (key, value) in [
        (
            "37-0-targetValue",
            value_json(
                255,
                37,
                "Binary Switch",
                "targetValue",
                None,
                "boolean",
                true,
                "Target value",
                now_ms,
            ),
        ),
        (
            "38-0-targetValue",
            value_json(
                255,
                38,
                "Multilevel Switch",
                "targetValue",
                None,
                "number",
                true,
                "Target value",
                now_ms,
            ),
        ),
    ] {
        values.insert(key.to_owned(), value);
    }
    json!({
        "id": 255, "name": "Broadcast", "virtual": true, "kind": "broadcast", "ready": true,
        "available": true, "failed": false, "values": values,
    })
}

#[allow(clippy::too_many_arguments)]
fn value_json(
    node: u16,
    cc: u16,
    cc_name: &str,
    property: &str,
    key: Option<(Value, &str)>,
    kind: &str,
    writeable: bool,
    label: &str,
    at: i64,
) -> Value {
    let mut value = json!({
        "id": match &key {
            Some((k, _)) => format!("{node}-{cc}-0-{property}-{}", plain(k)),
            None => format!("{node}-{cc}-0-{property}"),
        },
        "nodeId": node, "commandClass": cc, "commandClassName": cc_name, "endpoint": 0,
        "property": property, "propertyName": property, "type": kind, "readable": true,
        "writeable": writeable, "label": label, "stateless": false, "list": false,
        "lastUpdate": at,
    });
    if let Some((k, name)) = key {
        value["propertyKey"] = k;
        value["propertyKeyName"] = json!(name);
    }
    value
}

fn plain(value: &Value) -> String {
    match value {
        Value::String(text) => text.clone(),
        other => other.to_string(),
    }
}

struct Node {
    json: Value,
    at: i64,
}

impl Node {
    fn new(id: u16, name: &str, loc: &str, at: i64) -> Self {
        Self {
            json: json!({
                "id": id, "name": name, "loc": loc, "ready": true, "available": true,
                "failed": false, "status": "Alive", "interviewStage": "Complete",
                "isControllerNode": false, "isListening": true, "lastActive": at,
                "manufacturer": "zwave-mcp-server demo", "productLabel": "Simulated device",
                "deviceId": "0-0-0", "values": {},
            }),
            at,
        }
    }

    fn id(&self) -> u16 {
        self.json["id"]
            .as_u64()
            .and_then(|id| u16::try_from(id).ok())
            .unwrap_or_default()
    }

    fn add(mut self, value: Value) -> Self {
        let key = value_key_of(&value);
        self.json["values"][key] = value;
        self
    }

    fn binary_switch(self, on: bool) -> Self {
        let (id, at) = (self.id(), self.at);
        let mut current = value_json(
            id,
            37,
            "Binary Switch",
            "currentValue",
            None,
            "boolean",
            false,
            "Current value",
            at,
        );
        current["value"] = json!(on);
        current["isCurrentValue"] = json!(true);
        current["targetValue"] = json!("37-0-targetValue");
        let mut target = value_json(
            id,
            37,
            "Binary Switch",
            "targetValue",
            None,
            "boolean",
            true,
            "Target value",
            at,
        );
        target["value"] = json!(on);
        let mut duration = value_json(
            id,
            37,
            "Binary Switch",
            "duration",
            None,
            "duration",
            false,
            "Remaining duration",
            at,
        );
        duration["value"] = json!({"unit": "seconds"});
        self.add(current).add(target).add(duration)
    }

    fn dimmer(self, level: u8) -> Self {
        let (id, at) = (self.id(), self.at);
        let mut current = value_json(
            id,
            38,
            "Multilevel Switch",
            "currentValue",
            None,
            "number",
            false,
            "Current value",
            at,
        );
        current["value"] = json!(level);
        current["min"] = json!(0);
        current["max"] = json!(99);
        current["isCurrentValue"] = json!(true);
        current["targetValue"] = json!("38-0-targetValue");
        let mut target = value_json(
            id,
            38,
            "Multilevel Switch",
            "targetValue",
            None,
            "number",
            true,
            "Target value",
            at,
        );
        target["value"] = json!(level);
        target["min"] = json!(0);
        target["max"] = json!(99);
        let mut duration = value_json(
            id,
            38,
            "Multilevel Switch",
            "duration",
            None,
            "duration",
            false,
            "Remaining duration",
            at,
        );
        duration["value"] = json!({"value": 0, "unit": "seconds"});
        let mut restore = value_json(
            id,
            38,
            "Multilevel Switch",
            "restorePrevious",
            None,
            "boolean",
            true,
            "Restore previous value",
            at,
        );
        restore["states"] = json!([{"text": "Restore", "value": true}]);
        self.add(current).add(target).add(duration).add(restore)
    }

    fn meter(self, key: i64, key_name: &str, label: &str, unit: &str, reading: Value) -> Self {
        let (id, at) = (self.id(), self.at);
        let mut value = value_json(
            id,
            50,
            "Meter",
            "value",
            Some((json!(key), key_name)),
            "number",
            false,
            label,
            at,
        );
        value["unit"] = json!(unit);
        value["value"] = reading;
        self.add(value)
    }

    fn sensor(self, property: &str, unit: &str, reading: Value, sensor_type: u8) -> Self {
        let (id, at) = (self.id(), self.at);
        let mut value = value_json(
            id,
            49,
            "Multilevel Sensor",
            property,
            None,
            "number",
            false,
            property,
            at,
        );
        value["unit"] = json!(unit);
        value["value"] = reading;
        value["ccSpecific"] = json!({"sensorType": sensor_type, "scale": 0});
        self.add(value)
    }

    fn motion(self, state: u8) -> Self {
        let (id, at) = (self.id(), self.at);
        let mut value = value_json(
            id,
            113,
            "Notification",
            "Home Security",
            Some((json!("Motion sensor status"), "Motion sensor status")),
            "number",
            false,
            "Motion sensor status",
            at,
        );
        value["propertyName"] = json!("Home Security");
        value["min"] = json!(0);
        value["max"] = json!(255);
        value["states"] =
            json!([{"text": "idle", "value": 0}, {"text": "Motion detection", "value": 8}]);
        value["value"] = json!(state);
        self.add(value)
    }

    fn battery(self, level: u8) -> Self {
        let (id, at) = (self.id(), self.at);
        let mut value = value_json(
            id,
            128,
            "Battery",
            "level",
            None,
            "number",
            false,
            "Battery level",
            at,
        );
        value["unit"] = json!("%");
        value["min"] = json!(0);
        value["max"] = json!(100);
        value["value"] = json!(level);
        self.add(value)
    }

    fn dead(mut self) -> Self {
        self.json["status"] = json!("Dead");
        self.json["available"] = json!(false);
        self
    }

    fn build(self) -> Value {
        self.json
    }
}

/// `"<cc>-<endpoint>-<property>[-<propertyKey>]"` of a value object.
pub fn value_key_of(value: &Value) -> String {
    let base = format!(
        "{}-{}-{}",
        value["commandClass"],
        value["endpoint"].as_u64().unwrap_or(0),
        plain(&value["property"])
    );
    match value.get("propertyKey") {
        Some(key) if !key.is_null() => format!("{base}-{}", plain(key)),
        _ => base,
    }
}
