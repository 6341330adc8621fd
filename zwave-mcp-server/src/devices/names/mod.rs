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

//!
//! | module | owns |
//! |---|---|
//! | `directory` | [`Directory`], [`resolve`]: the stages of matching, and [`Purpose`] |
//! | `error` | [`ResolveError`]: the refusals, with candidates or the closest names |
//! | `describe` | how answers name a device: [`describe`] |
//! | `folding` | how names compare (`normalize`) and how far apart they are |

mod describe;
mod directory;
mod error;
mod folding;

pub use describe::{describe, display_name};
pub use directory::{Directory, MAX_NAME_CHARS, Purpose, resolve};
pub use error::ResolveError;
pub(crate) use folding::normalize;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::network::{NodeId, NodeInfo};

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
    fn a_name_that_reads_as_another_with_invisible_characters_is_ambiguous_never_a_match() {
        // Every default-ignorable and format code point, as Z-Wave JS could name a device.
        let invisible = (0..=0x10_ffff_u32)
            .filter_map(char::from_u32)
            .filter(|&c| crate::network::text::is_invisible(c));
        let mut count = 0;
        for c in invisible {
            count += 1;
            let nodes = [
                node(8, "Front Door Lock", "Entrance"),
                node(11, &format!("Front{c} Door Lock{c}"), "Entrance"),
            ];
            let escaped = nodes[1].name.clone();
            for query in [
                "Front Door Lock",
                escaped.as_str(),
                &format!("Front Door Lock{c}"),
            ] {
                let found = resolve_among(&nodes, |_| true, query, Purpose::Control);
                assert!(
                    matches!(&found, Err(ResolveError::Ambiguous { candidates, .. }) if candidates.len() == 2),
                    "U+{:04X}, {query:?}: {found:?}",
                    u32::from(c)
                );
            }
        }
        assert!(count > 4_000, "{count}");
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
