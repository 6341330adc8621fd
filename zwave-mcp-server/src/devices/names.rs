//! Resolving a device name said by a person or a model to exactly one node, or refusing.
//!
//! Order: exact name (case-insensitive), then "location name", then `Node <id>`, then a unique
//! substring. No match suggests the closest names; several matches list them. Never a guess.

use crate::gateway::NodeInfo;

use super::display_name;

/// Why a name did not resolve to one device.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ResolveError {
    /// The name was empty.
    #[error("deviceName is empty: give a device name as shown by list_zwave_devices")]
    Empty,
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

/// Finds the one device `query` names among `devices`.
///
/// # Errors
/// [`ResolveError`] when no device or several devices match.
pub fn resolve<'a>(devices: &[&'a NodeInfo], query: &str) -> Result<&'a NodeInfo, ResolveError> {
    let wanted = normalize(query);
    if wanted.is_empty() {
        return Err(ResolveError::Empty);
    }
    let stages: [&dyn Fn(&NodeInfo) -> bool; 4] = [
        &|node| normalize(&display_name(node)) == wanted,
        &|node| {
            !node.loc.is_empty()
                && normalize(&format!("{} {}", node.loc, display_name(node))) == wanted
        },
        &|node| wanted == format!("node {}", node.id) || wanted == node.id.to_string(),
        &|node| {
            normalize(&display_name(node)).contains(&wanted)
                || normalize(&format!("{} {}", node.loc, display_name(node))).contains(&wanted)
        },
    ];
    for stage in stages {
        let matches: Vec<&NodeInfo> = devices.iter().copied().filter(|node| stage(node)).collect();
        match matches.as_slice() {
            [] => continue,
            [one] => return Ok(one),
            several => {
                return Err(ResolveError::Ambiguous {
                    query: query.trim().to_owned(),
                    candidates: several.iter().map(|node| describe(node)).collect(),
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
    text.split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .to_lowercase()
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
        let nodes = home();
        let refs: Vec<&NodeInfo> = nodes.iter().collect();
        resolve(&refs, query).map(|node| node.id)
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
    fn a_unique_substring_matches() {
        assert_eq!(find("office"), Ok(NodeId(4)));
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
