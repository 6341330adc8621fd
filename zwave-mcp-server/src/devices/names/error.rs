//! Why a name did not resolve to one device ([`ResolveError`]): each answer says what to give
//! instead, and lists the candidates or the closest names, never a guess.

use crate::network::text::MAX_NAME_CHARS;

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
