//! Which devices an agent may see and switch: the owner's choice, as Home Assistant lets its
//! owner choose what an assistant may touch. Rules name devices by node id, location or name;
//! reading and controlling have their own allow and deny lists, and read-only mode takes the
//! control tool away altogether.
//!
//! A device is readable when the read allow list is empty or names it, and no read deny rule
//! does. It is controllable when it is readable, the server is not read-only, the control allow
//! list is empty or names it, and no control deny rule does. Deny wins over allow.

use std::{collections::BTreeSet, fmt, path::Path, str::FromStr};

use serde::Deserialize;

use super::{display_name, names::normalize};
use crate::network::{NodeId, NodeInfo};

/// One rule: `node:7`, `location:Kitchen` or `name:Garage Light`. Names and locations are
/// compared as device lookups compare them (case, white space and Unicode compatibility forms
/// folded), so a rule hides every device a lookup of its name would find exactly.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Rule {
    /// A node id.
    Node(NodeId),
    /// Every device in a location.
    Location(String),
    /// A device by its name as list_zwave_devices shows it.
    Name(String),
}

/// A rule that does not parse.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "exposure rule \"{rule}\" is not valid: use node:<id>, location:<location> or name:<device name>"
)]
pub struct RuleError {
    /// The rule as given.
    pub rule: String,
}

impl FromStr for Rule {
    type Err = RuleError;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let invalid = || RuleError {
            rule: text.to_owned(),
        };
        let (kind, value) = text.split_once(':').ok_or_else(invalid)?;
        let value = value.trim();
        if value.is_empty() {
            return Err(invalid());
        }
        match kind.trim().to_lowercase().as_str() {
            "node" => value
                .parse::<u16>()
                .map(|id| Self::Node(NodeId(id)))
                .map_err(|_| invalid()),
            "location" | "loc" => Ok(Self::Location(normalize(value))),
            "name" => Ok(Self::Name(normalize(value))),
            _ => Err(invalid()),
        }
    }
}

impl fmt::Display for Rule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Node(id) => write!(f, "node:{id}"),
            Self::Location(loc) => write!(f, "location:{loc}"),
            Self::Name(name) => write!(f, "name:{name}"),
        }
    }
}

impl Rule {
    /// Whether the rule names `node`.
    pub fn matches(&self, node: &NodeInfo) -> bool {
        match self {
            Self::Node(id) => node.id == *id,
            Self::Location(loc) => normalize(&node.loc) == *loc,
            Self::Name(name) => normalize(&display_name(node)) == *name,
        }
    }
}

/// An allow list and a deny list.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Rules {
    /// When not empty, only devices it names.
    pub allow: Vec<Rule>,
    /// Never devices it names.
    pub deny: Vec<Rule>,
}

impl Rules {
    fn admits(&self, node: &NodeInfo) -> bool {
        (self.allow.is_empty() || self.allow.iter().any(|rule| rule.matches(node)))
            && !self.deny.iter().any(|rule| rule.matches(node))
    }
}

/// What an agent may see and switch.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Exposure {
    /// No switching at all: the control tool is not offered.
    pub read_only: bool,
    /// Which devices reads see.
    pub read: Rules,
    /// Which readable devices may be switched.
    pub control: Rules,
}

impl Exposure {
    /// Whether reads may see `node`.
    pub fn can_read(&self, node: &NodeInfo) -> bool {
        self.read.admits(node)
    }

    /// Whether `node` may be switched.
    pub fn can_control(&self, node: &NodeInfo) -> bool {
        !self.read_only && self.can_read(node) && self.control.admits(node)
    }

    /// Adds the rules of an exposure file (JSON):
    /// `{"readOnly": true, "read": {"allow": [...], "deny": [...]}, "control": {...}}`.
    ///
    /// # Errors
    /// The file cannot be read or parsed, or holds a rule that is not valid; the message names
    /// the file.
    pub fn add_file(&mut self, path: &Path) -> Result<(), String> {
        let text = std::fs::read_to_string(path)
            .map_err(|err| format!("cannot read the exposure file {path:?}: {err}"))?;
        let file: ExposureFile =
            serde_json::from_str(&text).map_err(|err| format!("exposure file {path:?}: {err}"))?;
        let parse = |rules: Vec<String>| -> Result<Vec<Rule>, String> {
            rules
                .iter()
                .map(|rule| {
                    rule.parse()
                        .map_err(|err: RuleError| format!("exposure file {path:?}: {err}"))
                })
                .collect()
        };
        self.read_only |= file.read_only;
        self.read.allow.extend(parse(file.read.allow)?);
        self.read.deny.extend(parse(file.read.deny)?);
        self.control.allow.extend(parse(file.control.allow)?);
        self.control.deny.extend(parse(file.control.deny)?);
        Ok(())
    }
}

/// Watches what the owner's rules match from one node list to the next, so that a rule that
/// means nothing (a typo) or that a rename in Z-Wave JS UI moved onto other devices is said,
/// not silently obeyed.
#[derive(Debug)]
pub struct RuleAudit {
    exposure: Exposure,
    /// What each rule matched in the last list: by list and rule, the device ids.
    last: Option<Vec<BTreeSet<NodeId>>>,
}

impl RuleAudit {
    /// An audit of `exposure`'s rules.
    pub fn new(exposure: Exposure) -> Self {
        Self {
            exposure,
            last: None,
        }
    }

    /// Whether there is anything to audit.
    pub fn has_rules(&self) -> bool {
        self.rules().next().is_some()
    }

    fn rules(&self) -> impl Iterator<Item = (&'static str, &Rule)> {
        let lists = [
            ("read allow", &self.exposure.read.allow),
            ("read deny", &self.exposure.read.deny),
            ("control allow", &self.exposure.control.allow),
            ("control deny", &self.exposure.control.deny),
        ];
        lists
            .into_iter()
            .flat_map(|(list, rules)| rules.iter().map(move |rule| (list, rule)))
    }

    /// Checks a freshly loaded node list: what to warn the owner about, in words.
    pub fn check<'a>(&mut self, devices: impl IntoIterator<Item = &'a NodeInfo>) -> Vec<String> {
        let devices: Vec<&NodeInfo> = devices
            .into_iter()
            .filter(|node| super::is_device(node))
            .collect();
        let named = |id: &NodeId| {
            devices
                .iter()
                .find(|node| node.id == *id)
                .map_or_else(|| format!("node {id}"), |node| super::describe(node))
        };
        let matched: Vec<BTreeSet<NodeId>> = self
            .rules()
            .map(|(_, rule)| {
                devices
                    .iter()
                    .filter(|node| rule.matches(node))
                    .map(|node| node.id)
                    .collect()
            })
            .collect();
        let mut warnings = Vec::new();
        for (at, (list, rule)) in self.rules().enumerate() {
            let now = &matched[at];
            if now.is_empty() {
                warnings.push(format!(
                    "exposure rule \"{list} {rule}\" matches no device: check it against list_zwave_devices, or name the device by node:<id>"
                ));
            }
            if let Some(before) = self.last.as_ref().and_then(|last| last.get(at))
                && before != now
            {
                let show = |ids: Vec<&NodeId>| {
                    if ids.is_empty() {
                        "nothing".to_owned()
                    } else {
                        ids.into_iter().map(&named).collect::<Vec<_>>().join(", ")
                    }
                };
                warnings.push(format!(
                    "exposure rule \"{list} {rule}\" now also matches {} and no longer {}: a device was renamed, moved, added or removed; check that the rule still means what you meant (node:<id> rules do not move)",
                    show(now.difference(before).collect()),
                    show(before.difference(now).collect()),
                ));
            }
        }
        self.last = Some(matched);
        warnings
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct ExposureFile {
    #[serde(default)]
    read_only: bool,
    #[serde(default)]
    read: FileRules,
    #[serde(default)]
    control: FileRules,
}

#[derive(Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct FileRules {
    #[serde(default)]
    allow: Vec<String>,
    #[serde(default)]
    deny: Vec<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn node(id: u16, name: &str, loc: &str) -> NodeInfo {
        serde_json::from_value(serde_json::json!({"id": id, "name": name, "loc": loc})).unwrap()
    }

    fn rules(list: &[&str]) -> Vec<Rule> {
        list.iter().map(|r| r.parse().unwrap()).collect()
    }

    #[test]
    fn rules_parse_and_bad_ones_say_what_is_valid() {
        assert_eq!("node:7".parse(), Ok(Rule::Node(NodeId(7))));
        assert_eq!(
            " Location : Living Room".parse(),
            Ok(Rule::Location("living room".into()))
        );
        assert_eq!(
            "garage".parse::<Rule>().unwrap_err().to_string(),
            "exposure rule \"garage\" is not valid: use node:<id>, location:<location> or name:<device name>"
        );
        assert!("node:seven".parse::<Rule>().is_err());
        assert!("name:".parse::<Rule>().is_err());
    }

    #[test]
    fn deny_wins_and_control_needs_read() {
        let (kitchen, garage, lounge) = (
            node(2, "Switch One", "Kitchen"),
            node(7, "Garage Light", "Garage"),
            node(3, "Living Room Light", "Living Room"),
        );
        let exposure = Exposure {
            read_only: false,
            read: Rules {
                allow: vec![],
                deny: rules(&["name:garage light"]),
            },
            control: Rules {
                allow: rules(&["location:living room", "node:7"]),
                deny: vec![],
            },
        };
        assert!(exposure.can_read(&kitchen) && !exposure.can_control(&kitchen));
        assert!(!exposure.can_read(&garage) && !exposure.can_control(&garage));
        assert!(exposure.can_control(&lounge));
        let read_only = Exposure {
            read_only: true,
            ..Exposure::default()
        };
        assert!(read_only.can_read(&lounge) && !read_only.can_control(&lounge));
        assert!(Exposure::default().can_control(&garage));
    }

    #[test]
    fn rules_match_names_as_lookups_do() {
        let exposure = Exposure {
            read: Rules {
                allow: vec![],
                deny: rules(&[
                    "name:Front Door Light",
                    "name:hall lamp",
                    "location:Ｐｏｒｃｈ",
                ]),
            },
            ..Exposure::default()
        };
        for (name, loc) in [
            ("Front  Door Light", ""),
            ("FRONT DOOR\tLIGHT", ""),
            ("Hall\u{a0}Lamp", ""),
            ("Ｈａｌｌ Lamp", ""),
            ("Porch Light", " porch "),
        ] {
            assert!(
                !exposure.can_read(&node(9, name, loc)),
                "{name:?} in {loc:?}"
            );
        }
        assert!(exposure.can_read(&node(9, "Front Door", "")));
    }

    #[test]
    fn rules_that_match_nothing_or_move_with_a_rename_are_reported() {
        let sensor = |id: u16, name: &str, loc: &str| {
            serde_json::from_value::<NodeInfo>(serde_json::json!({
                "id": id, "name": name, "loc": loc,
                "values": {"37-0-currentValue": {"commandClass": 37, "property": "currentValue", "value": false}}
            }))
            .unwrap()
        };
        let exposure = Exposure {
            read: Rules {
                allow: vec![],
                deny: rules(&["name:Front Door Lock", "node:40", "location:Garage"]),
            },
            ..Exposure::default()
        };
        let mut audit = RuleAudit::new(exposure);
        assert!(audit.has_rules());
        let before = [
            sensor(2, "Front Door Lock", "Porch"),
            sensor(3, "Side Door", "Garage"),
        ];
        assert_eq!(
            audit.check(&before),
            [
                "exposure rule \"read deny node:40\" matches no device: check it against list_zwave_devices, or name the device by node:<id>"
            ]
        );
        // The lock renamed, another device given its old name.
        let after = [
            sensor(2, "Front Door Deadbolt", "Porch"),
            sensor(3, "Front Door Lock", "Garage"),
        ];
        assert_eq!(
            audit.check(&after),
            [
                "exposure rule \"read deny name:front door lock\" now also matches \"Front Door Lock\" (node 3, Garage) and no longer \"Front Door Deadbolt\" (node 2, Porch): a device was renamed, moved, added or removed; check that the rule still means what you meant (node:<id> rules do not move)",
                "exposure rule \"read deny node:40\" matches no device: check it against list_zwave_devices, or name the device by node:<id>",
            ]
        );
        assert!(!RuleAudit::new(Exposure::default()).has_rules());
    }

    #[test]
    fn exposure_files_add_rules_and_name_themselves_in_errors() {
        let dir = std::env::temp_dir().join(format!("zwave-exposure-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let good = dir.join("good.json");
        std::fs::write(
            &good,
            r#"{"readOnly": false, "control": {"deny": ["location:Garage"]}}"#,
        )
        .unwrap();
        let mut exposure = Exposure::default();
        exposure.add_file(&good).unwrap();
        assert_eq!(exposure.control.deny, rules(&["location:garage"]));
        let bad = dir.join("bad.json");
        std::fs::write(&bad, r#"{"control": {"deny": ["garage"]}}"#).unwrap();
        assert_eq!(
            Exposure::default().add_file(&bad).unwrap_err(),
            format!(
                "exposure file {bad:?}: exposure rule \"garage\" is not valid: use node:<id>, location:<location> or name:<device name>"
            )
        );
        let typo = dir.join("typo.json");
        std::fs::write(&typo, r#"{"controll": {}}"#).unwrap();
        let error = Exposure::default().add_file(&typo).unwrap_err();
        assert!(
            error.starts_with(&format!("exposure file {typo:?}: unknown field `controll`")),
            "{error}"
        );
    }
}
