//! Resolving a device name said by a person or a model to exactly one node, or refusing.
//!
//! Order: exact name (case-insensitive), then "location name", then `Node <id>`, then a unique
//! match of whole words ("living light" → "Living Room Light"). That is all a command that
//! switches something accepts ([`Purpose::Control`]): a partial name must never actuate
//! ("it" is inside "Kitchen" and "Switch"). Reads ([`Purpose::Read`]) also take a bare node
//! number or a unique substring, and their answers name the device they resolved to. No match
//! suggests the closest names; several matches list them. Never a guess.

use crate::gateway::NodeInfo;

use super::display_name;

/// Longest device name accepted, in characters: anything longer is refused before any work.
pub const MAX_NAME_CHARS: usize = 256;

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
///
/// # Errors
/// [`ResolveError`] when no device or several devices match, the name is empty or too long,
/// or (for [`Purpose::Control`]) only partly matches.
pub fn resolve<'a>(
    devices: &[&'a NodeInfo],
    query: &str,
    purpose: Purpose,
) -> Result<&'a NodeInfo, ResolveError> {
    // Bytes first: a multi-megabyte name is refused without counting its characters.
    if query.len() > MAX_NAME_CHARS * 4 || query.chars().count() > MAX_NAME_CHARS {
        return Err(ResolveError::TooLong {
            chars: query.chars().count(),
        });
    }
    let wanted = normalize(query);
    if wanted.is_empty() {
        return Err(ResolveError::Empty);
    }
    let words: Vec<&str> = wanted.split(' ').collect();
    // Each device's names are normalized at most once per lookup, and only when a stage
    // needs them: an exact name (the common case) never builds the `location name` form.
    let known: Vec<Known<'a>> = devices
        .iter()
        .map(|&node| Known {
            node,
            name: normalize(&display_name(node)),
            full: std::cell::OnceCell::new(),
        })
        .collect();
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
    let beyond_doubt: [&dyn Fn(&Known<'_>) -> bool; 4] = [
        &|known| known.name == wanted,
        &|known| !known.node.loc.is_empty() && known.full() == wanted,
        &|known| node_word == Some(known.node.id.0),
        &|known| {
            words
                .iter()
                .all(|word| known.full().split(' ').any(|w| w == *word))
        },
    ];
    let partial: [&dyn Fn(&Known<'_>) -> bool; 2] =
        [&|known| bare_number == Some(known.node.id.0), &|known| {
            known.full().contains(&wanted)
        }];
    let stage = |matches_node: &dyn Fn(&Known<'_>) -> bool| -> Vec<&'a NodeInfo> {
        known
            .iter()
            .filter(|known| matches_node(known))
            .map(|known| known.node)
            .collect()
    };
    let ambiguous = |several: &[&NodeInfo]| ResolveError::Ambiguous {
        query: query.trim().to_owned(),
        candidates: several.iter().map(|node| describe(node)).collect(),
    };
    for matches_node in beyond_doubt {
        match stage(matches_node).as_slice() {
            [] => continue,
            [one] => return Ok(one),
            several => return Err(ambiguous(several)),
        }
    }
    for matches_node in partial {
        match (stage(matches_node).as_slice(), purpose) {
            ([], _) => continue,
            ([one], Purpose::Read) => return Ok(one),
            (several, Purpose::Read) => return Err(ambiguous(several)),
            (found, Purpose::Control) => {
                return Err(ResolveError::Partial {
                    query: query.trim().to_owned(),
                    candidates: found.iter().map(|node| describe(node)).collect(),
                });
            }
        }
    }
    Err(ResolveError::NotFound {
        query: query.trim().to_owned(),
        suggestions: closest(devices, &wanted),
    })
}

/// `"Living Room Light" (node 3, Living Room)`.
pub fn describe(node: &NodeInfo) -> String {
    if node.loc.is_empty() {
        format!("\"{}\" (node {})", display_name(node), node.id)
    } else {
        format!(
            "\"{}\" (node {}, {})",
            display_name(node),
            node.id,
            node.loc
        )
    }
}

fn normalize(text: &str) -> String {
    let mut joined = String::with_capacity(text.len());
    for word in text.split_whitespace() {
        if !joined.is_empty() {
            joined.push(' ');
        }
        joined.push_str(word);
    }
    joined.to_lowercase()
}

/// A device with its names normalized for matching.
struct Known<'a> {
    node: &'a NodeInfo,
    /// Its display name.
    name: String,
    /// `location name`, normalized when first asked for.
    full: std::cell::OnceCell<String>,
}

impl Known<'_> {
    fn full(&self) -> &str {
        self.full
            .get_or_init(|| normalize(&format!("{} {}", self.node.loc, display_name(self.node))))
    }
}

/// The three device names closest to `wanted` by edit distance.
fn closest(devices: &[&NodeInfo], wanted: &str) -> Vec<String> {
    let mut scored: Vec<(usize, String)> = devices
        .iter()
        .map(|node| {
            let name = display_name(node);
            (edit_distance(&normalize(&name), wanted), name)
        })
        .collect();
    scored.sort();
    scored.into_iter().take(3).map(|(_, name)| name).collect()
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
