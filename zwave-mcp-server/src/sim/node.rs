//! Builds nodes the way Z-Wave JS UI's `getNodes` returns them: the node object and its value
//! objects, one command class at a time, shaped like the captures.

use serde_json::{Value, json};

/// One value object of `getNodes` (`values["<cc>-<endpoint>-<property>[-<key>]"]`).
#[allow(clippy::too_many_arguments)]
pub(super) fn value_json(
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

/// One Meter CC reading: its property key (meter type, scale and rate packed as Z-Wave JS does)
/// and what it shows.
pub(super) struct Meter {
    pub key: i64,
    pub key_name: &'static str,
    pub label: &'static str,
    pub unit: &'static str,
    pub reading: Value,
}

/// A device node being built; [`Node::build`] gives its `getNodes` object.
pub(super) struct Node {
    json: Value,
    at: i64,
}

impl Node {
    pub(super) fn new(id: u16, name: &str, loc: &str, at: i64) -> Self {
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

    pub(super) fn binary_switch(self, on: bool) -> Self {
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

    pub(super) fn dimmer(self, level: u8) -> Self {
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

    pub(super) fn meter(self, meter: Meter) -> Self {
        let (id, at) = (self.id(), self.at);
        let mut value = value_json(
            id,
            50,
            "Meter",
            "value",
            Some((json!(meter.key), meter.key_name)),
            "number",
            false,
            meter.label,
            at,
        );
        value["unit"] = json!(meter.unit);
        value["value"] = meter.reading;
        self.add(value)
    }

    pub(super) fn sensor(
        self,
        property: &str,
        unit: &str,
        reading: Value,
        sensor_type: u8,
    ) -> Self {
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

    pub(super) fn motion(self, state: u8) -> Self {
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

    pub(super) fn battery(self, level: u8) -> Self {
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

    /// Manufacturer Specific (3 values) and Version (5 values), as every real node has.
    pub(super) fn identity(self, manufacturer: u16, product_type: u16, product: u16) -> Self {
        let (id, at) = (self.id(), self.at);
        let mut node = self;
        for (property, label, number) in [
            ("manufacturerId", "Manufacturer ID", manufacturer),
            ("productType", "Product type", product_type),
            ("productId", "Product ID", product),
        ] {
            let mut value = value_json(
                id,
                114,
                "Manufacturer Specific",
                property,
                None,
                "number",
                false,
                label,
                at,
            );
            value["min"] = json!(0);
            value["max"] = json!(65_535);
            value["value"] = json!(number);
            node = node.add(value);
        }
        for (property, label, kind, reading) in [
            (
                "firmwareVersions",
                "Z-Wave chip firmware versions",
                "string[]",
                json!(["7.18"]),
            ),
            (
                "protocolVersion",
                "Z-Wave protocol version",
                "string",
                json!("7.18"),
            ),
            ("libraryType", "Library type", "number", json!(3)),
            (
                "hardwareVersion",
                "Z-Wave chip hardware version",
                "number",
                json!(1),
            ),
            ("sdkVersion", "SDK version", "string", json!("7.18.1")),
        ] {
            let mut value = value_json(id, 134, "Version", property, None, kind, false, label, at);
            value["value"] = reading;
            node = node.add(value);
        }
        node
    }

    /// Configuration parameter `param` (Configuration CC, a numeric property).
    pub(super) fn config(self, param: u16, label: &str, setting: i64, max: i64) -> Self {
        let mut value = value_json(
            self.id(),
            112,
            "Configuration",
            "",
            None,
            "number",
            true,
            label,
            self.at,
        );
        value["id"] = json!(format!("{}-112-0-{param}", self.id()));
        value["property"] = json!(param);
        value["propertyName"] = json!(label);
        value["min"] = json!(0);
        value["max"] = json!(max);
        value["default"] = json!(setting);
        value["value"] = json!(setting);
        self.add(value)
    }

    /// The meter's "Reset accumulated values" button.
    pub(super) fn meter_reset(self) -> Self {
        let (id, at) = (self.id(), self.at);
        let mut value = value_json(
            id,
            50,
            "Meter",
            "reset",
            None,
            "boolean",
            true,
            "Reset accumulated values",
            at,
        );
        value["readable"] = json!(false);
        value["states"] = json!([{"text": "Reset", "value": true}]);
        self.add(value)
    }

    /// How many value objects the node has so far.
    pub(super) fn value_count(&self) -> usize {
        self.json["values"]
            .as_object()
            .map_or(0, serde_json::Map::len)
    }

    pub(super) fn dead(mut self) -> Self {
        self.json["status"] = json!("Dead");
        self.json["available"] = json!(false);
        self
    }

    pub(super) fn build(self) -> Value {
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
