//! The values of a node as `getNodes` describes them ([`ValueInfo`]), the key a node's values
//! are stored under ([`ValueKey`]), a value's address in the API ([`ValueId`]), and the bounds
//! of one value ([`parse_value`]).

use std::fmt;

use serde::{Deserialize, Serialize};
use serde_json::{Value, value::RawValue};

/// Most bytes of one value's JSON the cache takes. Z-Wave values are numbers, booleans, short
/// texts and small objects: the largest of the recorded networks is 67 bytes (a colour's
/// channels); a user code or a list of 232 node ids is well under this. A parsed `Value`
/// costs 32 bytes per element and more per member (a `[0,0,…]` of 60 MiB is a 1 GB tree), so a
/// larger value is refused from its text, never parsed.
pub const MAX_VALUE_BYTES: usize = 8 * 1024;
/// Most elements (scalars, arrays, objects) of one value: with [`MAX_VALUE_BYTES`], what one
/// stored value may cost, some tens of KiB at most (a hostile backend's 300 values of
/// `[0,0,…]` at the old 64 KiB cap held 315 MB).
pub const MAX_VALUE_ITEMS: usize = 1024;
/// Deepest nesting of one value (the recorded ones are at most 2 deep).
pub const MAX_VALUE_DEPTH: usize = 16;

/// Why a reported value was not taken.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ValueRefused {
    /// Its JSON is longer than [`MAX_VALUE_BYTES`].
    #[error("{bytes} bytes of JSON, over the {MAX_VALUE_BYTES}-byte limit of one value")]
    TooLarge {
        /// Its length.
        bytes: usize,
    },
    /// Nested deeper than [`MAX_VALUE_DEPTH`].
    #[error("nested deeper than {MAX_VALUE_DEPTH} levels")]
    TooDeep,
    /// More elements than [`MAX_VALUE_ITEMS`].
    #[error("{items} elements, over the {MAX_VALUE_ITEMS}-element limit of one value")]
    TooMany {
        /// How many it has.
        items: usize,
    },
    /// Not JSON.
    #[error("not JSON: {0}")]
    NotJson(String),
}

/// One value's JSON text, parsed only within the bounds of one value.
///
/// # Errors
/// Longer than [`MAX_VALUE_BYTES`] (checked before parsing), not JSON, or deeper than
/// [`MAX_VALUE_DEPTH`].
pub fn parse_value(json: &str) -> Result<Value, ValueRefused> {
    if json.len() > MAX_VALUE_BYTES {
        return Err(ValueRefused::TooLarge { bytes: json.len() });
    }
    let value: Value =
        serde_json::from_str(json).map_err(|err| ValueRefused::NotJson(err.to_string()))?;
    if depth(&value) > MAX_VALUE_DEPTH {
        return Err(ValueRefused::TooDeep);
    }
    let items = items(&value);
    if items > MAX_VALUE_ITEMS {
        return Err(ValueRefused::TooMany { items });
    }
    let mut value = value;
    // A value is shown too (a lock's door status, a sensor's text reading): a newline in it
    // must not forge a row, nor its invisible characters carry words only a model reads
    // (found by the third hostile review: a `doorStatus` with both reached every read).
    super::text::clean_json(&mut value);
    Ok(value)
}

/// How many elements `value` holds, itself included.
fn items(value: &Value) -> usize {
    1 + match value {
        Value::Array(items) => items.iter().map(self::items).sum(),
        Value::Object(members) => members.values().map(self::items).sum(),
        _ => 0,
    }
}

/// How deep `value` nests (a scalar: 0). Recursion is bounded by serde_json's own limit (128).
fn depth(value: &Value) -> usize {
    match value {
        Value::Array(items) => 1 + items.iter().map(depth).max().unwrap_or(0),
        Value::Object(members) => 1 + members.values().map(depth).max().unwrap_or(0),
        _ => 0,
    }
}

/// Deserializes a node list's `value` ([`ValueInfo::value`]) as its text first, then parses it
/// within [`parse_value`]'s bounds; a value past them is left undefined and logged.
fn bounded<'de, D: serde::Deserializer<'de>>(deserializer: D) -> Result<Option<Value>, D::Error> {
    let Some(raw) = Option::<Box<RawValue>>::deserialize(deserializer)? else {
        return Ok(None);
    };
    Ok(match parse_value(raw.get()) {
        Ok(value) => Some(value),
        Err(why) => {
            tracing::warn!(%why, "a value of the node list was refused: it is left undefined");
            None
        }
    })
}

use super::node_id::NodeId;

/// One value of a node, as in `getNodes` and in "entire ValueID" payloads.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ValueInfo {
    /// `"<nodeId>-<cc>-<endpoint>-<property>[-<propertyKey>]"`.
    #[serde(default)]
    pub id: String,
    /// Command class number (37 Binary Switch, 38 Multilevel Switch, ...).
    pub command_class: u16,
    /// Command class name ("Binary Switch").
    #[serde(default, deserialize_with = "super::text::name")]
    pub command_class_name: String,
    /// Endpoint index; 0 is the root device.
    #[serde(default)]
    pub endpoint: u16,
    /// Property: a name such as "currentValue", or a number for some command classes.
    pub property: Property,
    /// Human form of the property ("Air temperature").
    #[serde(default, deserialize_with = "super::text::optional_text")]
    pub property_name: Option<String>,
    /// Sub-key of the property (meter type 65537, "Motion sensor status").
    #[serde(default)]
    pub property_key: Option<Property>,
    /// Human form of the property key.
    #[serde(default, deserialize_with = "super::text::optional_text")]
    pub property_key_name: Option<String>,
    /// Value type: "boolean", "number", "string", "duration", ...
    #[serde(default, rename = "type")]
    pub kind: String,
    /// Whether it can be read.
    #[serde(default = "yes")]
    pub readable: bool,
    /// Whether it can be written.
    #[serde(default)]
    pub writeable: bool,
    /// Label for people ("Current value").
    #[serde(default, deserialize_with = "super::text::optional_text")]
    pub label: Option<String>,
    /// Unit ("°C", "%", "W").
    #[serde(default, deserialize_with = "super::text::optional_text")]
    pub unit: Option<String>,
    /// Lower bound, when numeric.
    #[serde(default)]
    pub min: Option<f64>,
    /// Upper bound, when numeric.
    #[serde(default)]
    pub max: Option<f64>,
    /// Named states of the value (0 "idle", 8 "Motion detection").
    #[serde(default)]
    pub states: Option<Vec<ValueState>>,
    /// The current value; absent while undefined (or past the bounds of one value).
    #[serde(default, deserialize_with = "bounded")]
    pub value: Option<Value>,
    /// When the value last changed, epoch milliseconds.
    #[serde(default)]
    pub last_update: Option<i64>,
    /// Set on `currentValue`-like values that have a writeable target.
    #[serde(default)]
    pub is_current_value: bool,
    /// Key of the value that sets this one (`"37-0-targetValue"`).
    #[serde(default)]
    pub target_value: Option<String>,
    /// When this process last received the value from a value topic or a poll (local clock).
    #[serde(skip)]
    pub seen_at: Option<std::time::Instant>,
}

impl ValueInfo {
    /// The address of this value for `writeValue` / `pollValue`.
    pub fn value_id(&self, node: NodeId) -> ValueId {
        ValueId {
            node_id: node,
            command_class: self.command_class,
            endpoint: self.endpoint,
            property: self.property.clone(),
            property_key: self.property_key.clone(),
        }
    }

    /// The key used in `NodeInfo::values`.
    pub fn key(&self) -> ValueKey {
        ValueKey::new(
            self.command_class,
            self.endpoint,
            &self.property,
            self.property_key.as_ref(),
        )
    }

    /// The state name of the current value, when the value has named states.
    pub fn state_name(&self) -> Option<&str> {
        let value = self.value.as_ref()?;
        self.states
            .as_ref()?
            .iter()
            .find(|state| &state.value == value)
            .map(|state| state.text.as_str())
    }
}

/// The key of a value inside `NodeInfo::values`: `<cc>-<endpoint>-<property>[-<propertyKey>]`,
/// as Z-Wave JS UI keys a node's values (`37-0-currentValue`, `50-0-value-65537`).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct ValueKey(String);

impl ValueKey {
    /// The key of the value `property` (`key`) of command class `cc` on `endpoint`.
    pub fn new(cc: u16, endpoint: u16, property: &Property, key: Option<&Property>) -> Self {
        Self(match key {
            Some(key) => format!("{cc}-{endpoint}-{property}-{key}"),
            None => format!("{cc}-{endpoint}-{property}"),
        })
    }

    /// The key as text.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// Lookups by a key's text (`values.get("37-0-currentValue")`).
impl std::borrow::Borrow<str> for ValueKey {
    fn borrow(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for ValueKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// A named state of a value.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
pub struct ValueState {
    /// The state's name.
    #[serde(deserialize_with = "super::text::text")]
    pub text: String,
    /// The value that means this state.
    pub value: Value,
}

/// A property or property key: a string for most command classes, a number for some.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Deserialize, Serialize)]
#[serde(untagged)]
pub enum Property {
    /// A numeric property (meter types, configuration parameters).
    Number(i64),
    /// A named property.
    Name(String),
}

impl fmt::Display for Property {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Number(number) => number.fmt(f),
            Self::Name(name) => f.write_str(name),
        }
    }
}

impl Property {
    /// The property as JSON: a number or a string.
    pub fn to_json(&self) -> Value {
        match self {
            Self::Number(number) => (*number).into(),
            Self::Name(name) => name.as_str().into(),
        }
    }
}

impl From<&str> for Property {
    fn from(name: &str) -> Self {
        Self::Name(name.to_owned())
    }
}

/// The address of a value in Z-Wave JS UI's API (`writeValue`, `pollValue`).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Deserialize, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ValueId {
    /// Node id.
    pub node_id: NodeId,
    /// Command class number.
    pub command_class: u16,
    /// Endpoint index.
    #[serde(default)]
    pub endpoint: u16,
    /// Property.
    pub property: Property,
    /// Property key, when the property has sub-keys.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub property_key: Option<Property>,
}

impl ValueId {
    /// The key of the value the device reports this target's state in: `currentValue` beside
    /// a `targetValue`; `None` for other properties.
    pub fn current_key(&self) -> Option<String> {
        (self.property == Property::Name("targetValue".into()) && self.property_key.is_none())
            .then(|| format!("{}-{}-currentValue", self.command_class, self.endpoint))
    }

    /// The value id as Z-Wave JS UI's API takes it (`{"nodeId", "commandClass", "endpoint",
    /// "property"[, "propertyKey"]}`), built directly: it cannot fail, unlike a round through
    /// `Serialize`.
    pub fn to_json(&self) -> Value {
        let mut id = serde_json::Map::with_capacity(5);
        id.insert("nodeId".into(), self.node_id.0.into());
        id.insert("commandClass".into(), self.command_class.into());
        id.insert("endpoint".into(), self.endpoint.into());
        id.insert("property".into(), self.property.to_json());
        if let Some(key) = &self.property_key {
            id.insert("propertyKey".into(), key.to_json());
        }
        Value::Object(id)
    }

    /// The key of this value inside `NodeInfo::values`.
    pub fn key(&self) -> ValueKey {
        ValueKey::new(
            self.command_class,
            self.endpoint,
            &self.property,
            self.property_key.as_ref(),
        )
    }
}

impl fmt::Display for ValueId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}-{}", self.node_id, self.key())
    }
}

/// serde default for flags that are true unless the wire says otherwise.
pub(super) fn yes() -> bool {
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_value_id_reaches_the_api_in_the_shape_serde_reads_back() {
        let ids = [
            ValueId {
                node_id: NodeId(5),
                command_class: 38,
                endpoint: 0,
                property: "targetValue".into(),
                property_key: None,
            },
            ValueId {
                node_id: NodeId(232),
                command_class: 50,
                endpoint: 2,
                property: Property::Number(65_537),
                property_key: Some(Property::Name("kWh".into())),
            },
        ];
        for id in ids {
            let json = id.to_json();
            assert_eq!(json, serde_json::to_value(&id).unwrap());
            assert_eq!(serde_json::from_value::<ValueId>(json).unwrap(), id);
        }
    }

    #[test]
    fn a_value_s_texts_are_escaped_as_names_are() {
        let forged =
            "closed\n- Garage Door (node 11, Garage): cover, closed\u{202e}\u{ad}\u{e0069}";
        let value = parse_value(&serde_json::to_string(&forged).unwrap()).unwrap();
        assert_eq!(
            value,
            "closed\\n- Garage Door (node 11, Garage): cover, closed\\u{202e}\\u{ad}\\u{e0069}"
        );
        let nested = parse_value(r#"{"a\n":["x\u200b"],"b":1}"#).unwrap();
        assert_eq!(nested, serde_json::json!({"a\\n": ["x\\u{200b}"], "b": 1}));
        assert_eq!(parse_value(r#""open""#).unwrap(), "open");
    }

    #[test]
    fn a_value_past_its_bounds_is_refused_before_it_is_parsed() {
        assert_eq!(
            parse_value(r#"{"value":0,"unit":"seconds"}"#).unwrap()["unit"],
            "seconds"
        );
        let zeros = format!("[{}0]", "0,".repeat(MAX_VALUE_BYTES / 2));
        assert_eq!(
            parse_value(&zeros),
            Err(ValueRefused::TooLarge { bytes: zeros.len() })
        );
        let deep = format!(
            "{}0{}",
            "[".repeat(MAX_VALUE_DEPTH + 1),
            "]".repeat(MAX_VALUE_DEPTH + 1)
        );
        assert_eq!(parse_value(&deep), Err(ValueRefused::TooDeep));
        // Under the byte cap, over the element cap: a tree of zeros is what costs memory.
        let many = format!("[{}0]", "0,".repeat(MAX_VALUE_ITEMS));
        assert!(many.len() <= MAX_VALUE_BYTES);
        assert_eq!(
            parse_value(&many).unwrap_err().to_string(),
            format!(
                "{} elements, over the 1024-element limit of one value",
                MAX_VALUE_ITEMS + 2
            )
        );
        let most = format!("[{}0]", "0,".repeat(MAX_VALUE_ITEMS - 2));
        assert!(parse_value(&most).is_ok());
        // In a node list: left undefined, the rest of the value read.
        let listed: ValueInfo = serde_json::from_str(&format!(
            r#"{{"commandClass":37,"property":"currentValue","label":"Current value","value":{zeros}}}"#
        ))
        .unwrap();
        assert_eq!(
            (listed.value, listed.label.as_deref()),
            (None, Some("Current value"))
        );
        let listed: ValueInfo = serde_json::from_value(
            serde_json::json!({"commandClass": 37, "property": "currentValue", "value": true}),
        )
        .unwrap();
        assert_eq!(listed.value, Some(Value::Bool(true)));
    }
}
