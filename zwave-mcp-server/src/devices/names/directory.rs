//! [`Directory`]: the names of a list of devices, normalized once, and the stages of matching
//! a name against them (beyond doubt first, then partial, as strictly as the [`Purpose`]
//! demands), with the hidden devices matched but never answered; [`resolve`] for one lookup.

use super::{
    describe::{describe_parts, display_name},
    error::ResolveError,
    folding::{edit_distance, normalize},
};
use crate::network::{NodeInfo, text::echoed};

/// Longest device name accepted, in characters: anything longer is refused before any work
/// (the names Z-Wave JS gives are cut to this length when the node list is parsed).
pub const MAX_NAME_CHARS: usize = crate::network::text::MAX_NAME_CHARS;

/// What the device is looked up for: switching takes only names beyond doubt.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Purpose {
    /// Reading: partial names and bare node numbers are accepted too.
    Read,
    /// Switching: exact name, "location name", `Node <id>` or a unique whole-word match.
    Control,
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
