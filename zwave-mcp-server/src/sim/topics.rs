//! The topics the simulated gateway publishes on, formatted by the simulator itself from what
//! the captures of the real Z-Wave JS UI show (`fixtures/zwave-js-ui/captures`, API.md "Value
//! topics") and from the node and value JSON it serves. It shares no code with the server's
//! `network::topics`, so a test of the server's cache against the simulator checks the
//! server's naming against an independent one: if either is wrong, they disagree.

use serde_json::Value;

/// Z-Wave JS UI's gateway "type": how value topics are named.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum TopicType {
    /// 0, "ValueID topics": `<cc>/<endpoint>/<property>[/<propertyKey>]`.
    #[default]
    #[value(name = "value-id", alias = "0")]
    ValueId,
    /// 1, "named topics": `<class>/endpoint_<n>/<propertyName>[/<propertyKey>]`.
    #[value(name = "named", alias = "1")]
    Named,
}

/// The gateway settings that shape topics.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TopicSettings {
    /// The gateway type.
    pub kind: TopicType,
    /// `nodeNames`: the node's name (`nodeID_<id>` when it has none) instead of its id.
    pub node_names: bool,
    /// `ignoreLoc`: no location level.
    pub ignore_loc: bool,
}

impl Default for TopicSettings {
    /// Z-Wave JS UI's defaults (run1 of the captures).
    fn default() -> Self {
        Self {
            kind: TopicType::ValueId,
            node_names: true,
            ignore_loc: false,
        }
    }
}

/// `<prefix>[/<loc>]/<node>`: where a node's topics start. `node` is the node as `getNodes`
/// serves it (`id`, `name`, `loc` are read).
pub fn node_topic(prefix: &str, settings: TopicSettings, node: &Value) -> String {
    let id = node["id"].as_u64().unwrap_or_default();
    let name = clean(node["name"].as_str().unwrap_or_default());
    let node_part = if !settings.node_names {
        id.to_string()
    } else if name.is_empty() {
        format!("nodeID_{id}")
    } else {
        name
    };
    let loc = clean(node["loc"].as_str().unwrap_or_default());
    if settings.ignore_loc || loc.is_empty() {
        format!("{prefix}/{node_part}")
    } else {
        format!("{prefix}/{loc}/{node_part}")
    }
}

/// The topic of one value of `node`.
pub fn value_topic(prefix: &str, settings: TopicSettings, node: &Value, value: &Value) -> String {
    let mut topic = node_topic(prefix, settings, node);
    let endpoint = value["endpoint"].as_u64().unwrap_or_default();
    match settings.kind {
        TopicType::ValueId => {
            let cc = value["commandClass"].as_u64().unwrap_or_default();
            topic.push_str(&format!("/{cc}/{endpoint}/{}", part(&value["property"])));
        }
        TopicType::Named => {
            let property = match value.get("propertyName").and_then(Value::as_str) {
                Some(name) => clean(name),
                None => part(&value["property"]),
            };
            topic.push_str(&format!(
                "/{}/endpoint_{endpoint}/{property}",
                class_level(value)
            ));
        }
    }
    if let Some(key) = value.get("propertyKey").filter(|key| !key.is_null()) {
        topic.push('/');
        topic.push_str(&part(key));
    }
    topic
}

/// The class level of a named topic, as the captures show it: zwave-js's command class key in
/// snake case with the noun first ("Binary Switch" → `switch_binary`).
fn class_level(value: &Value) -> String {
    let seen_in_captures = match value["commandClass"].as_u64() {
        Some(32) => "basic",
        Some(37) => "switch_binary",
        Some(38) => "switch_multilevel",
        Some(49) => "sensor_multilevel",
        Some(50) => "meter",
        Some(113) => "notification",
        Some(114) => "manufacturer_specific",
        Some(128) => "battery",
        Some(134) => "version",
        _ => "",
    };
    if seen_in_captures.is_empty() {
        // Not in the captures (the demo homes have none of these): the class name in lower case.
        clean(value["commandClassName"].as_str().unwrap_or("unknown")).to_lowercase()
    } else {
        seen_in_captures.to_owned()
    }
}

/// A property or property key as a topic level: a number as it is, a string cleaned.
fn part(property: &Value) -> String {
    match property {
        Value::String(text) => clean(text),
        other => other.to_string(),
    }
}

/// What Z-Wave JS UI does to names in topics: white space becomes `_`; letters (ASCII and
/// Latin-1), digits, `-`, `_` and `/` stay (so `Coffee/Plug` is two levels); the rest goes.
fn clean(text: &str) -> String {
    let mut cleaned = String::with_capacity(text.len());
    for c in text.chars() {
        if c.is_whitespace() {
            cleaned.push('_');
        } else if c.is_ascii_alphanumeric()
            || matches!(c, '-' | '_' | '/')
            || (('\u{c0}'..='\u{ff}').contains(&c) && c != '\u{d7}' && c != '\u{f7}')
        {
            cleaned.push(c);
        }
    }
    cleaned
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn named() -> TopicSettings {
        TopicSettings {
            kind: TopicType::Named,
            ..TopicSettings::default()
        }
    }

    /// Topics copied from the captures (run1: defaults, run2: named, run3: node ids).
    #[test]
    fn topics_read_as_the_captures_show_them() {
        let multisensor = json!({"id": 4, "name": "Multisensor", "loc": "Living Room"});
        let temperature = json!({"commandClass": 49, "endpoint": 0, "property": "Air temperature",
                                 "propertyName": "Air temperature", "commandClassName": "Multilevel Sensor"});
        assert_eq!(
            value_topic(
                "zwave",
                TopicSettings::default(),
                &multisensor,
                &temperature
            ),
            "zwave/Living_Room/Multisensor/49/0/Air_temperature"
        );
        assert_eq!(
            value_topic("zwave", named(), &multisensor, &temperature),
            "zwave/Living_Room/Multisensor/sensor_multilevel/endpoint_0/Air_temperature"
        );
        let motion = json!({"commandClass": 113, "endpoint": 0, "property": "Home Security",
                            "propertyKey": "Motion sensor status", "propertyName": "Home Security"});
        assert_eq!(
            value_topic("zwave", named(), &multisensor, &motion),
            "zwave/Living_Room/Multisensor/notification/endpoint_0/Home_Security/Motion_sensor_status"
        );
        let plug = json!({"id": 5, "name": "Coffee/Plug", "loc": ""});
        let meter = json!({"commandClass": 50, "endpoint": 0, "property": "value",
                           "propertyKey": 65537, "propertyName": "value"});
        assert_eq!(
            value_topic("zwave", named(), &plug, &meter),
            "zwave/Coffee/Plug/meter/endpoint_0/value/65537"
        );
        let unnamed = json!({"id": 2, "name": "", "loc": ""});
        let target = json!({"commandClass": 37, "endpoint": 0, "property": "targetValue"});
        assert_eq!(
            value_topic("zwave", TopicSettings::default(), &unnamed, &target),
            "zwave/nodeID_2/37/0/targetValue"
        );
        let dimmer = json!({"id": 3, "name": "Kitchen Dimmer", "loc": "Kitchen"});
        let by_id = TopicSettings {
            node_names: false,
            ..TopicSettings::default()
        };
        assert_eq!(
            value_topic("zwave", by_id, &dimmer, &target),
            "zwave/Kitchen/3/37/0/targetValue"
        );
        let no_loc = TopicSettings {
            ignore_loc: true,
            ..TopicSettings::default()
        };
        assert_eq!(node_topic("zwave", no_loc, &dimmer), "zwave/Kitchen_Dimmer");
    }

    #[test]
    fn names_lose_what_topics_cannot_carry() {
        assert_eq!(clean("Büro Lampe #2 (alt)"), "Büro_Lampe_2_alt");
        assert_eq!(clean("a×b÷c"), "abc");
    }
}
