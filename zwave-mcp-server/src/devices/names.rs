//! Resolving a device name said by a person or a model to exactly one node, or refusing.
//!
//! Order: exact name (case-insensitive) or `Node <id>` (one stage: a device named "Node 10"
//! beside node 10 makes it ambiguous, never silently one of the two), then "location name",
//! then a unique match of whole words ("living light" → "Living Room Light"). That is all a
//! command that switches something accepts ([`Purpose::Control`]): a partial name must never actuate
//! ("it" is inside "Kitchen" and "Switch"). Reads ([`Purpose::Read`]) also take a bare node
//! number or a unique substring, and their answers name the device they resolved to. No match
//! suggests the closest names; several matches list them. Never a guess.
//!
//! Names are matched over every device, the ones the owner hides from the agent too: a name
//! that reaches a hidden device is answered as it would be were the device absent when that
//! answer is a refusal anyway (several visible devices match: the same "matches 2 devices"),
//! and as an unknown name when that answer would pick a visible device: a hidden "Space
//! Heater" can neither be switched as itself nor turn "Space Heater" into "Space Heater Fan"
//! by being skipped, and no answer tells the agent that it exists.

use crate::gateway::{NodeInfo, text::echoed};

use super::display_name;

/// Longest device name accepted, in characters: anything longer is refused before any work
/// (the gateway's names are cut to this length when the node list is parsed).
pub const MAX_NAME_CHARS: usize = crate::gateway::text::MAX_NAME_CHARS;

/// What the device is looked up for: switching takes only names beyond doubt.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Purpose {
    /// Reading: partial names and bare node numbers are accepted too.
    Read,
    /// Switching: exact name, "location name", `Node <id>` or a unique whole-word match.
    Control,
}

/// Why a name did not resolve to one device.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ResolveError {
    /// The name was empty.
    #[error("deviceName is empty: give a device name as shown by list_zwave_devices")]
    Empty,
    /// The name is longer than any device name.
    #[error(
        "deviceName is {chars} characters long; device names are at most {MAX_NAME_CHARS}: give a device name as shown by list_zwave_devices"
    )]
    TooLong {
        /// Its length in characters.
        chars: usize,
    },
    /// Only a partial match (part of a word, a bare number): not enough to switch anything.
    #[error("\"{query}\" is only part of a device name ({}); to switch a device, give its full name, \"location name\" or `Node <id>`", .candidates.join(", "))]
    Partial {
        /// The name asked for.
        query: String,
        /// The devices it partly matches, described with node id and location.
        candidates: Vec<String>,
    },
    /// Nothing matched.
    #[error("no Z-Wave device matches \"{query}\"{}; list_zwave_devices shows every device", suggest(.suggestions))]
    NotFound {
        /// The name asked for.
        query: String,
        /// The closest device names, best first.
        suggestions: Vec<String>,
    },
    /// Several devices matched.
    #[error("\"{query}\" matches {} devices: {}; say which one by its full name", .candidates.len(), .candidates.join(", "))]
    Ambiguous {
        /// The name asked for.
        query: String,
        /// The matching devices, described with node id and location.
        candidates: Vec<String>,
    },
}

fn suggest(suggestions: &[String]) -> String {
    if suggestions.is_empty() {
        String::new()
    } else {
        let quoted: Vec<String> = suggestions.iter().map(|s| format!("\"{s}\"")).collect();
        format!(" (closest: {})", quoted.join(", "))
    }
}

/// Finds the one device `query` names among `devices`, as strictly as `purpose` demands.
/// Builds a [`Directory`] for this one lookup; resolving many names against the same
/// devices, keep the directory instead.
///
/// # Errors
/// [`ResolveError`] when no device or several devices match, the name is empty or too long,
/// or (for [`Purpose::Control`]) only partly matches.
pub fn resolve<'a>(
    devices: &[&'a NodeInfo],
    query: &str,
    purpose: Purpose,
) -> Result<&'a NodeInfo, ResolveError> {
    let at = Directory::new(devices.iter().copied()).resolve(query, purpose)?;
    Ok(devices[at])
}

/// The names of a list of devices, normalized once: resolving a name against it allocates
/// nothing per device.
#[derive(Debug, Clone)]
pub struct Directory {
    entries: Vec<Entry>,
}

/// A device with its names normalized for matching.
#[derive(Debug, Clone)]
struct Entry {
    id: u16,
    /// Whether the agent may see it: a hidden device takes part in matching, never in answers.
    visible: bool,
    /// Its display name, as people see it.
    display: String,
    /// Its location, as set.
    location: String,
    /// The display name, normalized.
    name: String,
    /// `location name`, normalized.
    full: String,
}

impl Entry {
    fn describe(&self) -> String {
        describe_parts(&self.display, self.id, &self.location)
    }
}

impl Directory {
    /// The directory of `devices`, in their order, every one visible.
    pub fn new<'a>(devices: impl IntoIterator<Item = &'a NodeInfo>) -> Self {
        Self::with_visibility(devices, |_| true)
    }

    /// The directory of `devices`, in their order; those `visible` refuses are matched but
    /// never resolved to, listed or suggested.
    pub fn with_visibility<'a>(
        devices: impl IntoIterator<Item = &'a NodeInfo>,
        visible: impl Fn(&NodeInfo) -> bool,
    ) -> Self {
        let entries = devices
            .into_iter()
            .map(|node| {
                let display = display_name(node);
                Entry {
                    id: node.id.0,
                    visible: visible(node),
                    name: normalize(&display),
                    full: normalize(&format!("{} {display}", node.loc)),
                    location: node.loc.clone(),
                    display,
                }
            })
            .collect();
        Self { entries }
    }

    /// The node id of the device at `position` (as returned by [`Directory::resolve`]).
    pub fn id(&self, position: usize) -> Option<u16> {
        self.entries.get(position).map(|entry| entry.id)
    }

    /// Finds the one device `query` names, as strictly as `purpose` demands; returns its
    /// position in the list the directory was built from.
    ///
    /// # Errors
    /// As [`resolve`]; a name that reaches a hidden device gets the refusal it would get were
    /// the device absent, or [`ResolveError::NotFound`] where that would pick another device.
    pub fn resolve(&self, query: &str, purpose: Purpose) -> Result<usize, ResolveError> {
        match self.find(query, |_| true) {
            Found::At(stage) if stage.found.iter().any(|&at| !self.entries[at].visible) => {
                // As if the hidden devices were absent, when that refuses anyway; where it
                // would resolve to a visible device, the name is unknown: a hidden device
                // never redirects a name.
                // A read names the device it resolved to, so it is answered exactly as were
                // the hidden devices absent.
                match self.answer(query, purpose, self.find(query, |entry| entry.visible)) {
                    Ok(_) if purpose == Purpose::Control => Err(self.not_found(query)),
                    answered => answered,
                }
            }
            found => self.answer(query, purpose, found),
        }
    }

    /// No device of this name, with the closest visible names.
    fn not_found(&self, query: &str) -> ResolveError {
        ResolveError::NotFound {
            query: echoed(query.trim()).into_owned(),
            suggestions: self.closest(&normalize(query)),
        }
    }

    /// What `found` answers `query` asked for `purpose`.
    fn answer(&self, query: &str, purpose: Purpose, found: Found) -> Result<usize, ResolveError> {
        match found {
            Found::Nothing => Err(self.not_found(query)),
            Found::Refused(error) => Err(error),
            Found::At(stage) => match (stage.found.as_slice(), stage.partial, purpose) {
                ([one], false, _) | ([one], true, Purpose::Read) => Ok(*one),
                (found, true, Purpose::Control) => Err(ResolveError::Partial {
                    query: echoed(query.trim()).into_owned(),
                    candidates: self.described(found),
                }),
                (several, _, _) => Err(ResolveError::Ambiguous {
                    query: echoed(query.trim()).into_owned(),
                    candidates: self.described(several),
                }),
            },
        }
    }

    fn described(&self, found: &[usize]) -> Vec<String> {
        found
            .iter()
            .map(|&at| self.entries[at].describe())
            .collect()
    }

    /// The first stage of matching that matches anything, over the devices `among` admits
    /// (every device, hidden or not; or the visible ones).
    fn find(&self, query: &str, among: impl Fn(&Entry) -> bool) -> Found {
        // Bytes first: a multi-megabyte name is refused without counting its characters.
        if query.len() > MAX_NAME_CHARS * 4 || query.chars().count() > MAX_NAME_CHARS {
            return Found::Refused(ResolveError::TooLong {
                chars: query.chars().count(),
            });
        }
        let wanted = normalize(query);
        if wanted.is_empty() {
            return Found::Refused(ResolveError::Empty);
        }
        let words: Vec<&str> = wanted.split(' ').collect();
        // `node 7` and a bare `7` name node 7 only when written exactly so (`node 07` does not).
        let number = |text: Option<&str>| {
            text.and_then(|digits| {
                digits
                    .parse::<u16>()
                    .ok()
                    .filter(|id| id.to_string() == digits)
            })
        };
        let node_word = number(wanted.strip_prefix("node "));
        let bare_number = number(Some(&wanted));
        let located = |entry: &Entry| !entry.location.is_empty() && entry.full == wanted;
        let beyond_doubt: [&dyn Fn(&Entry) -> bool; 3] = [
            // `Node <id>` and a device named (or placed and named) "Node <id>" in one stage:
            // node 3 named "Node 10" beside node 10 is ambiguous, neither wins silently.
            &|entry| {
                entry.name == wanted
                    || (node_word.is_some() && (node_word == Some(entry.id) || located(entry)))
            },
            &located,
            // A bare number is no word of a name: "2" must not switch "Node 2" (issue 21).
            &|entry| {
                bare_number.is_none()
                    && words
                        .iter()
                        .all(|word| entry.full.split(' ').any(|w| w == *word))
            },
        ];
        let partial: [&dyn Fn(&Entry) -> bool; 2] =
            [&|entry| bare_number == Some(entry.id), &|entry| {
                entry.full.contains(&wanted)
            }];
        let stage = |matches: &dyn Fn(&Entry) -> bool| -> Vec<usize> {
            (0..self.entries.len())
                .filter(|&at| among(&self.entries[at]) && matches(&self.entries[at]))
                .collect()
        };
        let stages = beyond_doubt
            .iter()
            .map(|matches| (*matches, false))
            .chain(partial.iter().map(|matches| (*matches, true)));
        for (matches, partial) in stages {
            let found = stage(matches);
            if !found.is_empty() {
                return Found::At(Stage { found, partial });
            }
        }
        Found::Nothing
    }

    /// The three visible device names closest to `wanted` by edit distance.
    fn closest(&self, wanted: &str) -> Vec<String> {
        let mut scored: Vec<(usize, &str)> = self
            .entries
            .iter()
            .filter(|entry| entry.visible)
            .map(|entry| (edit_distance(&entry.name, wanted), entry.display.as_str()))
            .collect();
        scored.sort_unstable();
        scored
            .into_iter()
            .take(3)
            .map(|(_, name)| name.to_owned())
            .collect()
    }
}

/// What a lookup found before visibility and purpose are applied.
enum Found {
    /// The name itself is refused (empty, too long).
    Refused(ResolveError),
    /// No stage matched anything.
    Nothing,
    /// The devices the first matching stage found.
    At(Stage),
}

/// The devices one stage of matching found, by position.
struct Stage {
    found: Vec<usize>,
    /// Whether the stage is a partial one (a bare number, part of a name).
    partial: bool,
}

/// `"Living Room Light" (node 3, Living Room)`.
pub fn describe(node: &NodeInfo) -> String {
    describe_parts(&display_name(node), node.id.0, &node.loc)
}

fn describe_parts(name: &str, id: u16, location: &str) -> String {
    if location.is_empty() {
        format!("\"{name}\" (node {id})")
    } else {
        format!("\"{name}\" (node {id}, {location})")
    }
}

/// A name as it is compared: Unicode compatibility forms folded (NFKC: a full-width "Ｌａｍｐ"
/// is "Lamp"), every run of white space (a no-break space too) one space, lowercase. Lookups
/// and the owner's exposure rules compare names this one way.
pub(crate) fn normalize(text: &str) -> String {
    use unicode_normalization::UnicodeNormalization as _;
    let folded: String = text.nfkc().collect();
    let mut joined = String::with_capacity(folded.len());
    for word in folded.split_whitespace() {
        if !joined.is_empty() {
            joined.push(' ');
        }
        joined.push_str(word);
    }
    joined.to_lowercase()
}

/// Levenshtein distance over chars; inputs are device names, so the quadratic cost is tiny.
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut diagonal = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let above = row[j + 1];
            row[j + 1] = if ca == *cb {
                diagonal
            } else {
                1 + diagonal.min(above).min(row[j])
            };
            diagonal = above;
        }
    }
    row[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gateway::NodeId;

    fn node(id: u16, name: &str, loc: &str) -> NodeInfo {
        serde_json::from_value(serde_json::json!({"id": id, "name": name, "loc": loc})).unwrap()
    }

    fn home() -> Vec<NodeInfo> {
        vec![
            node(2, "Switch One", "Kitchen"),
            node(3, "Living Room Light", "Living Room"),
            node(4, "Office Temperature", "Office"),
            node(6, "", ""),
            node(7, "Garage Light", "Garage"),
        ]
    }

    fn find(query: &str) -> Result<NodeId, ResolveError> {
        find_for(query, Purpose::Read)
    }

    fn find_for(query: &str, purpose: Purpose) -> Result<NodeId, ResolveError> {
        let nodes = home();
        let refs: Vec<&NodeInfo> = nodes.iter().collect();
        resolve(&refs, query, purpose).map(|node| node.id)
    }

    #[test]
    fn switching_takes_only_names_beyond_doubt() {
        for (query, id) in [
            ("switch one", 2),
            ("Kitchen Switch One", 2),
            ("node 6", 6),
            ("living light", 3),
            ("garage LIGHT", 7),
            ("temperature", 4),
        ] {
            assert_eq!(find_for(query, Purpose::Control), Ok(NodeId(id)), "{query}");
        }
        assert_eq!(
            find_for("it", Purpose::Control).unwrap_err().to_string(),
            "\"it\" is only part of a device name (\"Switch One\" (node 2, Kitchen)); to switch a device, give its full name, \"location name\" or `Node <id>`"
        );
        assert_eq!(
            find_for("7", Purpose::Control).unwrap_err().to_string(),
            "\"7\" is only part of a device name (\"Garage Light\" (node 7, Garage)); to switch a device, give its full name, \"location name\" or `Node <id>`"
        );
        assert_eq!(
            find_for("light", Purpose::Control).unwrap_err().to_string(),
            "\"light\" matches 2 devices: \"Living Room Light\" (node 3, Living Room), \"Garage Light\" (node 7, Garage); say which one by its full name"
        );
        // Reads stay forgiving.
        assert_eq!(find("it"), Ok(NodeId(2)));
        assert_eq!(find("7"), Ok(NodeId(7)));
    }

    #[test]
    fn a_bare_number_never_switches_the_unnamed_node_it_is_part_of() {
        assert_eq!(
            find_for("6", Purpose::Control).unwrap_err().to_string(),
            "\"6\" is only part of a device name (\"Node 6\" (node 6)); to switch a device, give its full name, \"location name\" or `Node <id>`"
        );
        assert_eq!(find_for("Node 6", Purpose::Control), Ok(NodeId(6)));
        assert_eq!(find("6"), Ok(NodeId(6)));
    }

    /// The home with a hidden "Space Heater" (node 8) beside a visible "Space Heater Fan".
    fn heaters(hidden: bool) -> (Vec<NodeInfo>, impl Fn(&NodeInfo) -> bool) {
        let mut nodes = home();
        if hidden {
            nodes.push(node(8, "Space Heater", "Bedroom"));
        }
        nodes.push(node(9, "Space Heater Fan", "Bedroom"));
        (nodes, |node: &NodeInfo| node.id != NodeId(8))
    }

    fn resolve_among(
        nodes: &[NodeInfo],
        visible: impl Fn(&NodeInfo) -> bool,
        query: &str,
        purpose: Purpose,
    ) -> Result<u16, ResolveError> {
        let directory = Directory::with_visibility(nodes, visible);
        directory
            .resolve(query, purpose)
            .map(|at| directory.id(at).unwrap())
    }

    #[test]
    fn a_hidden_device_never_redirects_a_name_and_is_answered_as_unknown() {
        let (with_hidden, visible) = heaters(true);
        let (without, all) = heaters(false);
        for purpose in [Purpose::Control, Purpose::Read] {
            for query in [
                "Space Heater",
                "Bedroom Space Heater",
                "Node 8",
                "heater",
                "8",
                "space",
            ] {
                let hidden = resolve_among(&with_hidden, &visible, query, purpose);
                // A read names what it resolved to: it is answered as were the device absent.
                if purpose == Purpose::Read {
                    assert_eq!(
                        hidden,
                        resolve_among(&without, &all, query, purpose),
                        "{query}"
                    );
                    continue;
                }
                assert!(
                    matches!(hidden, Err(ResolveError::NotFound { .. })),
                    "{query} ({purpose:?}): {hidden:?}"
                );
                // Where only the hidden device matches, its answer is an absent one's; where
                // others match too, an absent one would let them resolve: refused instead.
                if ["Node 8", "8"].contains(&query) {
                    assert_eq!(
                        hidden,
                        resolve_among(&without, &all, query, purpose),
                        "{query}: a hidden device and an absent one get the same answer"
                    );
                }
            }
            assert_eq!(
                resolve_among(&with_hidden, &visible, "Space Heater Fan", purpose),
                Ok(9)
            );
        }
        assert_eq!(
            resolve_among(&with_hidden, &visible, "Space Heater", Purpose::Control)
                .unwrap_err()
                .to_string(),
            "no Z-Wave device matches \"Space Heater\" (closest: \"Space Heater Fan\", \"Switch One\", \"Garage Light\"); list_zwave_devices shows every device"
        );
    }

    #[test]
    fn a_hidden_device_among_several_matches_is_answered_as_an_absent_one() {
        let doors = |lock: bool| {
            let mut nodes = home();
            if lock {
                nodes.push(node(8, "Front Door Lock", "Entrance"));
            }
            nodes.push(node(11, "Garage Door", "Garage"));
            nodes.push(node(14, "Back Door Sensor", "Kitchen"));
            nodes
        };
        let hidden = |node: &NodeInfo| node.id != NodeId(8);
        for purpose in [Purpose::Control, Purpose::Read] {
            let with_hidden = resolve_among(&doors(true), hidden, "Door", purpose);
            assert_eq!(
                with_hidden,
                resolve_among(&doors(false), |_| true, "Door", purpose),
                "{purpose:?}"
            );
            assert_eq!(
                with_hidden.unwrap_err().to_string(),
                "\"Door\" matches 2 devices: \"Garage Door\" (node 11, Garage), \"Back Door Sensor\" (node 14, Kitchen); say which one by its full name"
            );
            // Where only the hidden lock matches, or the answer would pick a visible device
            // beside it, it is an unknown name.
            for query in ["Front Door", "Front Door Lock", "Entrance Front Door Lock"] {
                assert!(
                    matches!(
                        resolve_among(&doors(true), hidden, query, purpose),
                        Err(ResolveError::NotFound { .. })
                    ),
                    "{query}"
                );
            }
        }
    }

    #[test]
    fn a_read_is_answered_as_were_the_hidden_devices_absent() {
        let with = |siren: bool| {
            let mut nodes = vec![node(5, "Hallway Motion", "Hallway")];
            if siren {
                nodes.push(node(13, "Hallway Siren", "Hallway"));
            }
            nodes
        };
        let hidden = |node: &NodeInfo| node.id != NodeId(13);
        for query in ["Hall", "hallway", "Hallway Siren", "y"] {
            assert_eq!(
                resolve_among(&with(true), hidden, query, Purpose::Read),
                resolve_among(&with(false), |_| true, query, Purpose::Read),
                "{query}"
            );
        }
        assert_eq!(
            resolve_among(&with(true), hidden, "Hall", Purpose::Read),
            Ok(5)
        );
    }

    #[test]
    fn a_device_named_like_another_nodes_id_makes_that_id_ambiguous() {
        let nodes = [node(3, "node 10", ""), node(10, "Hall Lamp", "Hall")];
        for purpose in [Purpose::Control, Purpose::Read] {
            assert_eq!(
                resolve_among(&nodes, |_| true, "Node 10", purpose)
                    .unwrap_err()
                    .to_string(),
                "\"Node 10\" matches 2 devices: \"node 10\" (node 3), \"Hall Lamp\" (node 10, Hall); say which one by its full name"
            );
        }
        assert_eq!(
            resolve_among(&nodes, |_| true, "Hall Lamp", Purpose::Control),
            Ok(10)
        );
        assert_eq!(
            resolve_among(&nodes, |_| true, "Node 3", Purpose::Control),
            Ok(3)
        );
        // Without a node 10, the name is all "Node 10" can mean.
        assert_eq!(
            resolve_among(&nodes[..1], |_| true, "Node 10", Purpose::Control),
            Ok(3)
        );
    }

    #[test]
    fn names_match_whatever_their_white_space_case_and_unicode_form() {
        let nodes = [
            node(2, "Front  Door Light", "Hall"),
            node(3, "Hall\u{a0}Lamp", ""),
            node(4, "Ｐｏｒｃｈ Light", ""),
        ];
        for (query, id) in [
            ("front door light", 2),
            ("Hall Lamp", 3),
            ("porch light", 4),
            ("ＨＡＬＬ　ＬＡＭＰ", 3),
        ] {
            assert_eq!(
                resolve_among(&nodes, |_| true, query, Purpose::Control),
                Ok(id),
                "{query}"
            );
        }
    }

    #[test]
    fn names_longer_than_any_device_name_are_refused_at_once() {
        let huge = "x".repeat(5_000_000);
        assert_eq!(
            find_for(&huge, Purpose::Control).unwrap_err().to_string(),
            "deviceName is 5000000 characters long; device names are at most 256: give a device name as shown by list_zwave_devices"
        );
        assert_eq!(
            find(&"é".repeat(257)).unwrap_err(),
            ResolveError::TooLong { chars: 257 }
        );
        assert!(find(&"x".repeat(256)).is_err_and(|e| matches!(e, ResolveError::NotFound { .. })));
    }

    #[test]
    fn exact_names_match_case_insensitively() {
        assert_eq!(find("switch one"), Ok(NodeId(2)));
        assert_eq!(find("  Living   Room Light "), Ok(NodeId(3)));
    }

    #[test]
    fn location_name_and_node_id_forms_match() {
        assert_eq!(find("Kitchen Switch One"), Ok(NodeId(2)));
        assert_eq!(find("Node 6"), Ok(NodeId(6)));
        assert_eq!(find("node 7"), Ok(NodeId(7)));
    }

    #[test]
    fn a_unique_substring_matches_for_reading() {
        assert_eq!(find("offi"), Ok(NodeId(4)));
    }

    #[test]
    fn several_matches_are_listed_never_guessed() {
        let err = find("light").unwrap_err();
        assert_eq!(
            err.to_string(),
            "\"light\" matches 2 devices: \"Living Room Light\" (node 3, Living Room), \"Garage Light\" (node 7, Garage); say which one by its full name"
        );
    }

    #[test]
    fn no_match_suggests_the_closest_names() {
        let err = find("Swich On").unwrap_err();
        assert_eq!(
            err.to_string(),
            "no Z-Wave device matches \"Swich On\" (closest: \"Switch One\", \"Node 6\", \"Garage Light\"); list_zwave_devices shows every device"
        );
        assert_eq!(find(" ").unwrap_err(), ResolveError::Empty);
    }
}
