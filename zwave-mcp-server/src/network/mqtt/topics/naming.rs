//! How Z-Wave JS UI names topics: the node part (name, `nodeID_<id>` or id, with or without
//! the location) and the value part in both value-topic styles, and its sanitizing of names.

use crate::network::{nodes::NodeInfo, values::ValueInfo};

/// Z-Wave JS UI's gateway "type": how value topics are built.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TopicKind {
    /// 0 "ValueID topics": `<cc>/<endpoint>/<property>[/<propertyKey>]`.
    ValueId,
    /// 1 "named topics": `<class>/endpoint_<n>/<propertyName>[/<propertyKey>]`.
    Named,
}

/// The gateway settings that shape value topics.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TopicStyle {
    /// Gateway type.
    pub kind: TopicKind,
    /// `nodeNames`: the node's name (or `nodeID_<id>` when unnamed) instead of its id.
    pub node_names: bool,
    /// `ignoreLoc`: leave the location level out.
    pub ignore_loc: bool,
}

impl TopicStyle {
    /// Every combination, for indexing topics without knowing the gateway's settings.
    pub const ALL: [Self; 8] = {
        let mut all = [Self {
            kind: TopicKind::ValueId,
            node_names: true,
            ignore_loc: false,
        }; 8];
        let mut i = 0;
        while i < 8 {
            all[i] = Self {
                kind: if i & 1 == 0 {
                    TopicKind::ValueId
                } else {
                    TopicKind::Named
                },
                node_names: i & 2 == 0,
                ignore_loc: i & 4 != 0,
            };
            i += 1;
        }
        all
    };
}

impl Default for TopicStyle {
    /// Z-Wave JS UI's defaults: ValueID topics with node names and locations.
    fn default() -> Self {
        Self {
            kind: TopicKind::ValueId,
            node_names: true,
            ignore_loc: false,
        }
    }
}

/// The node part of a topic: `<prefix>[/<loc>]/<name | nodeID_<id> | id>`.
pub fn node_path(prefix: &str, node: &NodeInfo, style: TopicStyle) -> String {
    let name = sanitize(&node.name);
    let name = match (style.node_names, name.is_empty()) {
        (true, false) => name,
        (true, true) => format!("nodeID_{}", node.id),
        (false, _) => node.id.to_string(),
    };
    let loc = sanitize(&node.loc);
    if style.ignore_loc || loc.is_empty() {
        format!("{prefix}/{name}")
    } else {
        format!("{prefix}/{loc}/{name}")
    }
}

/// The value part of a topic.
pub fn value_path(value: &ValueInfo, kind: TopicKind) -> String {
    match kind {
        TopicKind::ValueId => with_key(
            format!(
                "{}/{}/{}",
                value.command_class,
                value.endpoint,
                sanitize(&value.property.to_string())
            ),
            value,
        ),
        TopicKind::Named => named_path(value, true),
    }
}

/// Every tail a value may be published on, each once: its ValueID form, its named form, and
/// the named form with the raw property instead of the property name (seen from gateways
/// that publish it so).
pub fn value_tails(value: &ValueInfo) -> Vec<String> {
    let mut tails = vec![value_path(value, TopicKind::ValueId)];
    for tail in [
        value_path(value, TopicKind::Named),
        named_path(value, false),
    ] {
        if !tails.contains(&tail) {
            tails.push(tail);
        }
    }
    tails
}

fn named_path(value: &ValueInfo, use_property_name: bool) -> String {
    let property = match (&value.property_name, use_property_name) {
        (Some(name), true) => sanitize(name),
        _ => sanitize(&value.property.to_string()),
    };
    with_key(
        format!(
            "{}/endpoint_{}/{property}",
            class_topic_name(value),
            value.endpoint
        ),
        value,
    )
}

fn with_key(base: String, value: &ValueInfo) -> String {
    match &value.property_key {
        Some(key) => format!("{base}/{}", sanitize(&key.to_string())),
        None => base,
    }
}

/// The command class level of a "named" (type 1) topic.
fn class_topic_name(value: &ValueInfo) -> String {
    // Z-Wave JS UI names these after zwave-js' CommandClasses enum keys in snake case, which
    // puts the noun first ("Binary Switch" → switch_binary); the common ones are listed, the
    // rest follow the command class name.
    let known = match value.command_class {
        32 => "basic",
        37 => "switch_binary",
        38 => "switch_multilevel",
        48 => "sensor_binary",
        49 => "sensor_multilevel",
        50 => "meter",
        64 => "thermostat_mode",
        66 => "thermostat_operating_state",
        67 => "thermostat_setpoint",
        98 => "door_lock",
        112 => "configuration",
        113 => "notification",
        114 => "manufacturer_specific",
        119 => "node_naming",
        128 => "battery",
        134 => "version",
        _ => "",
    };
    if known.is_empty() {
        sanitize(&value.command_class_name).to_lowercase()
    } else {
        known.to_owned()
    }
}

/// Z-Wave JS UI's topic sanitizing: white space becomes `_`, characters other than letters,
/// digits, `_`, `-` and `/` are dropped (`/` is kept on purpose upstream).
pub fn sanitize(text: &str) -> String {
    text.chars()
        .filter_map(|c| {
            if c.is_whitespace() {
                Some('_')
            } else if c.is_ascii_alphanumeric()
                || matches!(c, '_' | '-' | '/' | 'À'..='Ö' | 'Ø'..='ö' | 'ø'..='ÿ')
            {
                Some(c)
            } else {
                None
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sanitize_matches_the_topics_seen_on_the_wire() {
        assert_eq!(sanitize("Air temperature"), "Air_temperature");
        assert_eq!(sanitize("Coffee/Plug"), "Coffee/Plug");
        assert_eq!(sanitize("Kitchen Dimmer"), "Kitchen_Dimmer");
        assert_eq!(sanitize("Bob's lamp (2)"), "Bobs_lamp_2");
    }
}
