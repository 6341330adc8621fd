//! Builds nodes the way Z-Wave JS UI's `getNodes` returns them: the node object and its value
//! objects, one command class at a time, shaped like the captures.

use std::collections::HashMap;

use crate::network::NodeId;
use serde_json::{Value, json, value::RawValue};

/// A command class: its number and name.
#[derive(Debug, Clone, Copy)]
pub(super) struct Cc {
    pub id: u16,
    pub name: &'static str,
}

pub(super) const BINARY_SWITCH: Cc = Cc {
    id: 37,
    name: "Binary Switch",
};
pub(super) const MULTILEVEL_SWITCH: Cc = Cc {
    id: 38,
    name: "Multilevel Switch",
};
const MULTILEVEL_SENSOR: Cc = Cc {
    id: 49,
    name: "Multilevel Sensor",
};
const METER: Cc = Cc {
    id: 50,
    name: "Meter",
};
const CONFIGURATION: Cc = Cc {
    id: 112,
    name: "Configuration",
};
const NOTIFICATION: Cc = Cc {
    id: 113,
    name: "Notification",
};
const MANUFACTURER_SPECIFIC: Cc = Cc {
    id: 114,
    name: "Manufacturer Specific",
};
const BARRIER_OPERATOR: Cc = Cc {
    id: 102,
    name: "Barrier Operator",
};
const CENTRAL_SCENE: Cc = Cc {
    id: 91,
    name: "Central Scene",
};
const BATTERY: Cc = Cc {
    id: 128,
    name: "Battery",
};
const VERSION: Cc = Cc {
    id: 134,
    name: "Version",
};

/// One read-only value object of `getNodes` (`values["<cc>-0-<property>"]`) at endpoint 0;
/// the caller adds what the value has beyond that (`writeable`, `value`, `unit`, a key...).
pub(super) fn value_json(
    node: NodeId,
    at: i64,
    cc: Cc,
    property: &str,
    kind: &str,
    label: &str,
) -> Value {
    json!({
        "id": format!("{node}-{}-0-{property}", cc.id),
        "nodeId": node, "commandClass": cc.id, "commandClassName": cc.name, "endpoint": 0,
        "property": property, "propertyName": property, "type": kind, "readable": true,
        "writeable": false, "label": label, "stateless": false, "list": false,
        "lastUpdate": at,
    })
}

/// `value` made writeable.
pub(super) fn writeable(mut value: Value) -> Value {
    value["writeable"] = json!(true);
    value
}

/// `value` with a property key (its id gains the key).
fn with_key(mut value: Value, key: Value, name: &str) -> Value {
    let id = format!(
        "{}-{}",
        value["id"].as_str().unwrap_or_default(),
        plain(&key)
    );
    value["id"] = json!(id);
    value["propertyKey"] = key;
    value["propertyKeyName"] = json!(name);
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
                "statistics": super::statistics::node(10 + u64::from(id), at),
            }),
            at,
        }
    }

    fn id(&self) -> NodeId {
        NodeId(
            self.json["id"]
                .as_u64()
                .and_then(|id| u16::try_from(id).ok())
                .unwrap_or_default(),
        )
    }

    fn add(mut self, value: Value) -> Self {
        let key = value_key_of(&value);
        self.json["values"][key] = value;
        self
    }

    /// A switch's current value, target value and remaining duration, all showing `state`.
    fn switch_values(&self, cc: Cc, kind: &str, state: &Value) -> [Value; 3] {
        let (id, at) = (self.id(), self.at);
        let mut current = value_json(id, at, cc, "currentValue", kind, "Current value");
        current["value"] = state.clone();
        current["isCurrentValue"] = json!(true);
        current["targetValue"] = json!(format!("{}-0-targetValue", cc.id));
        let mut target = writeable(value_json(id, at, cc, "targetValue", kind, "Target value"));
        target["value"] = state.clone();
        let duration = value_json(id, at, cc, "duration", "duration", "Remaining duration");
        [current, target, duration]
    }

    pub(super) fn binary_switch(self, on: bool) -> Self {
        let [current, target, mut duration] =
            self.switch_values(BINARY_SWITCH, "boolean", &json!(on));
        duration["value"] = json!({"unit": "seconds"});
        self.add(current).add(target).add(duration)
    }

    pub(super) fn dimmer(self, level: u8) -> Self {
        let [mut current, mut target, mut duration] =
            self.switch_values(MULTILEVEL_SWITCH, "number", &json!(level));
        for value in [&mut current, &mut target] {
            value["min"] = json!(0);
            value["max"] = json!(99);
        }
        duration["value"] = json!({"value": 0, "unit": "seconds"});
        let mut restore = writeable(value_json(
            self.id(),
            self.at,
            MULTILEVEL_SWITCH,
            "restorePrevious",
            "boolean",
            "Restore previous value",
        ));
        restore["states"] = json!([{"text": "Restore", "value": true}]);
        self.add(current).add(target).add(duration).add(restore)
    }

    pub(super) fn meter(self, meter: Meter) -> Self {
        let value = value_json(self.id(), self.at, METER, "value", "number", meter.label);
        let mut value = with_key(value, json!(meter.key), meter.key_name);
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
        let mut value = value_json(
            self.id(),
            self.at,
            MULTILEVEL_SENSOR,
            property,
            "number",
            property,
        );
        value["unit"] = json!(unit);
        value["value"] = reading;
        value["ccSpecific"] = json!({"sensorType": sensor_type, "scale": 0});
        self.add(value)
    }

    pub(super) fn motion(self, state: u8) -> Self {
        let status = "Motion sensor status";
        let value = value_json(
            self.id(),
            self.at,
            NOTIFICATION,
            "Home Security",
            "number",
            status,
        );
        let mut value = with_key(value, json!(status), status);
        value["min"] = json!(0);
        value["max"] = json!(255);
        value["states"] =
            json!([{"text": "idle", "value": 0}, {"text": "Motion detection", "value": 8}]);
        value["value"] = json!(state);
        self.add(value)
    }

    pub(super) fn battery(self, level: u8) -> Self {
        let mut value = value_json(
            self.id(),
            self.at,
            BATTERY,
            "level",
            "number",
            "Battery level",
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
            let mut value = value_json(id, at, MANUFACTURER_SPECIFIC, property, "number", label);
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
            let mut value = value_json(id, at, VERSION, property, kind, label);
            value["value"] = reading;
            node = node.add(value);
        }
        node
    }

    /// Configuration parameter `param` (Configuration CC, a numeric property).
    pub(super) fn config(self, param: u16, label: &str, setting: i64, max: i64) -> Self {
        let mut value = writeable(value_json(
            self.id(),
            self.at,
            CONFIGURATION,
            "",
            "number",
            label,
        ));
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
        let label = "Reset accumulated values";
        let mut value = writeable(value_json(
            self.id(),
            self.at,
            METER,
            "reset",
            "boolean",
            label,
        ));
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

    /// A device of a class recorded from zwave-js 15.29's mock devices through the real
    /// Z-Wave JS UI (`classes.json`, from `fixtures/zwave-js-ui/classes/getNodes.full.json`):
    /// `lock`, `thermostat`, `blind`, `color_bulb`, `siren`, `door_leak_sensor`,
    /// `motor_blind`: its device class and the values of its command classes, as recorded.
    pub(super) fn captured(mut self, class: &str) -> Self {
        // The recording stays text (in the binary): only each class a node is built from is
        // parsed, and its parsed values move into the node. A tree of the whole recording,
        // kept for the process's life, cost 240 KiB of the demo's heap.
        static CLASSES: std::sync::OnceLock<HashMap<&'static str, &'static RawValue>> =
            std::sync::OnceLock::new();
        let classes = CLASSES
            .get_or_init(|| serde_json::from_str(include_str!("classes.json")).unwrap_or_default());
        let mut recorded: Value = classes
            .get(class)
            .and_then(|raw| serde_json::from_str(raw.get()).ok())
            .unwrap_or(Value::Null);
        let (id, at) = (self.id(), self.at);
        for field in ["deviceClass", "isListening"] {
            self.json[field] = recorded.get_mut(field).map(Value::take).unwrap_or_default();
        }
        let values = match recorded.get_mut("values") {
            Some(Value::Object(values)) => std::mem::take(values),
            _ => serde_json::Map::new(),
        };
        for (key, mut value) in values {
            value["id"] = json!(format!("{id}-{key}"));
            value["nodeId"] = json!(id);
            if !value["value"].is_null() {
                value["lastUpdate"] = json!(at);
            }
            self.json["values"][key] = value;
        }
        self
    }

    /// The value `key` (recorded before) as last reported: `value`, now.
    pub(super) fn reported(mut self, key: &str, value: Value) -> Self {
        let at = self.at;
        let slot = &mut self.json["values"][key];
        slot["value"] = value;
        slot["lastUpdate"] = json!(at);
        self
    }

    /// A garage door opener (Barrier Operator, 102), as zwave-js names its values (there is
    /// no mock of one to record): `targetState` 0 closed / 255 open, `currentState` with
    /// closing (252), stopped (253) and opening (254) between, `position` in percent.
    pub(super) fn barrier(self, open: bool) -> Self {
        let (id, at) = (self.id(), self.at);
        let state = json!(if open { 255 } else { 0 });
        let states = |list: &[(i64, &str)]| {
            Value::Array(
                list.iter()
                    .map(|(value, text)| json!({"value": value, "text": text}))
                    .collect(),
            )
        };
        let mut target = writeable(value_json(
            id,
            at,
            BARRIER_OPERATOR,
            "targetState",
            "number",
            "Target Barrier State",
        ));
        target["states"] = states(&[(0, "Closed"), (255, "Open")]);
        target["value"] = state.clone();
        let mut current = value_json(
            id,
            at,
            BARRIER_OPERATOR,
            "currentState",
            "number",
            "Current Barrier State",
        );
        current["states"] = states(&[
            (0, "Closed"),
            (252, "Closing"),
            (253, "Stopped"),
            (254, "Opening"),
            (255, "Open"),
        ]);
        current["value"] = state;
        current["targetValue"] = json!("102-0-targetState");
        let mut position = value_json(
            id,
            at,
            BARRIER_OPERATOR,
            "position",
            "number",
            "Barrier Position",
        );
        position["unit"] = json!("%");
        position["value"] = json!(if open { 100 } else { 0 });
        self.add(target).add(current).add(position)
    }

    /// A scene remote's buttons (Central Scene, as zwave-js names its values: `scene/001`…,
    /// stateless, no value until a key event; there is no mock of one to record).
    pub(super) fn scene_buttons(self, buttons: u8) -> Self {
        let (id, at) = (self.id(), self.at);
        let mut node = self;
        for button in 1..=buttons {
            let key = format!("{button:03}");
            let label = format!("Scene {key}");
            let mut value = value_json(id, at, CENTRAL_SCENE, "scene", "number", &label);
            value = with_key(value, json!(key), &key);
            value["stateless"] = json!(true);
            value["min"] = json!(0);
            value["max"] = json!(255);
            value["states"] = json!([
                {"value": 0, "text": "KeyPressed"}, {"value": 1, "text": "KeyReleased"},
                {"value": 2, "text": "KeyHeldDown"}, {"value": 3, "text": "KeyPressed2x"},
                {"value": 4, "text": "KeyPressed3x"},
            ]);
            if let Some(fields) = value.as_object_mut() {
                fields.remove("lastUpdate");
            }
            node = node.add(value);
        }
        node
    }

    /// A lock's Access Control notification "Lock state" (zwave-js names it so): 0 idle,
    /// 11 Lock jammed.
    pub(super) fn lock_state(self) -> Self {
        let (id, at) = (self.id(), self.at);
        let label = "Lock state";
        let value = value_json(id, at, NOTIFICATION, "Access Control", "number", label);
        let mut value = with_key(value, json!(label), label);
        value["min"] = json!(0);
        value["max"] = json!(255);
        value["states"] =
            json!([{"text": "idle", "value": 0}, {"text": "Lock jammed", "value": 11}]);
        value["value"] = json!(0);
        value["ccSpecific"] = json!({"notificationType": 6});
        self.add(value)
    }

    /// Value `key` (already added) now shows `value`.
    pub(super) fn showing(mut self, key: &str, value: Value) -> Self {
        if let Some(slot) = self.json["values"].get_mut(key) {
            slot["value"] = value;
            slot["lastUpdate"] = json!(self.at);
        }
        self
    }

    pub(super) fn dead(mut self) -> Self {
        self.json["status"] = json!("Dead");
        self.json["available"] = json!(false);
        self
    }

    /// Sets statistics fields (`{"timeoutResponse": 5, "lwr": {...}}`) over the recorded ones.
    pub(super) fn statistics(mut self, fields: Value) -> Self {
        if let (Value::Object(statistics), Value::Object(fields)) =
            (&mut self.json["statistics"], fields)
        {
            statistics.extend(fields);
        }
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
