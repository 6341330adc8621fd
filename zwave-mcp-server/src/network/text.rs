//! Text Z-Wave JS supplies (device names, locations, labels, units, state names, error
//! messages) is data, never layout: control characters, line and paragraph separators and
//! every invisible character (bidirectional overrides, zero-width and soft hyphens, variation
//! selectors, tags) are escaped (a name with a newline must not forge a row of the device
//! list or a log line; one with a soft hyphen must not read as another device's name; tag
//! characters must not carry words only a model reads), and lengths are capped when the node
//! list is parsed (a 4 MB name cost seconds of CPU in name suggestions).

use std::borrow::Cow;

pub use common::text::is_invisible;
use serde::{Deserialize as _, Deserializer};

/// Longest name or location kept, in characters (longer ones are cut, ending in `…`); device
/// lookups refuse longer names, so every device stays reachable by its name.
pub const MAX_NAME_CHARS: usize = 256;

/// Longest label, unit, state name or message kept, in characters.
pub const MAX_TEXT_CHARS: usize = 1024;

/// `text` with what could change the layout escaped (`\n`, `\u{202e}`), cut to `max_chars`.
pub fn clean(text: &str, max_chars: usize) -> Cow<'_, str> {
    let needs_escape = text.chars().any(is_layout);
    // Bytes first: most text is short, and counting its characters is then needless.
    let too_long = text.len() > max_chars && text.chars().nth(max_chars).is_some();
    if !needs_escape && !too_long {
        return Cow::Borrowed(text);
    }
    let mut cleaned = String::with_capacity(text.len().min(max_chars.saturating_mul(4)) + 8);
    for (chars, c) in text.chars().enumerate() {
        if chars + 1 >= max_chars && too_long {
            cleaned.push('…');
            break;
        }
        match c {
            '\n' => cleaned.push_str("\\n"),
            '\r' => cleaned.push_str("\\r"),
            // White space that moves nothing: a tab in a name is a space.
            '\t' => cleaned.push(' '),
            c if is_layout(c) => cleaned.push_str(&format!("\\u{{{:x}}}", u32::from(c))),
            c => cleaned.push(c),
        }
    }
    Cow::Owned(cleaned)
}

/// Every text in `value` (strings and keys) [`clean`]ed and cut to [`MAX_TEXT_CHARS`].
pub fn clean_json(value: &mut serde_json::Value) {
    use serde_json::Value;
    match value {
        Value::String(text) => {
            if let Cow::Owned(cleaned) = clean(text, MAX_TEXT_CHARS) {
                *text = cleaned;
            }
        }
        Value::Array(items) => items.iter_mut().for_each(clean_json),
        Value::Object(members) => {
            let dirty = members
                .keys()
                .any(|key| matches!(clean(key, MAX_TEXT_CHARS), Cow::Owned(_)));
            if dirty {
                *members = std::mem::take(members)
                    .into_iter()
                    .map(|(key, value)| (clean(&key, MAX_TEXT_CHARS).into_owned(), value))
                    .collect();
            }
            members.values_mut().for_each(clean_json);
        }
        _ => {}
    }
}

/// What a caller gave (a colour, a tone, a mode, a filter, a device name) as an answer
/// quotes it: escaped and cut as device names are, so a megabyte argument is never echoed.
pub fn echoed(given: &str) -> Cow<'_, str> {
    clean(given, MAX_NAME_CHARS)
}

/// Whether `c` moves text around, or shows nothing, rather than being part of it.
fn is_layout(c: char) -> bool {
    // U+2800 (a braille cell with no dots) shows as a blank that is no white space: a name
    // ending in one reads as another device's.
    c.is_control() || matches!(c, '\u{2028}' | '\u{2029}' | '\u{2800}') || is_invisible(c)
}

/// `text` without its invisible characters, raw or as [`clean`] escapes them (`\u{ad}`):
/// what a name reads as, for telling names apart.
pub fn without_invisible(text: &str) -> Cow<'_, str> {
    if !text.contains("\\u{") && !text.chars().any(is_invisible) {
        return Cow::Borrowed(text);
    }
    let mut kept = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(c) = rest.chars().next() {
        if let Some(escaped) = rest.strip_prefix("\\u{")
            && let Some((hex, after)) = escaped.split_once('}')
            && hex.len() <= 6
            && let Some(code) = u32::from_str_radix(hex, 16).ok().and_then(char::from_u32)
            && is_invisible(code)
        {
            rest = after;
            continue;
        }
        if !is_invisible(c) {
            kept.push(c);
        }
        rest = &rest[c.len_utf8()..];
    }
    Cow::Owned(kept)
}

/// Deserializes a name or a location: cleaned, capped at [`MAX_NAME_CHARS`]; `null` is empty.
pub(crate) fn name<'de, D: Deserializer<'de>>(deserializer: D) -> Result<String, D::Error> {
    let text = Option::<Cow<'de, str>>::deserialize(deserializer)?.unwrap_or_default();
    Ok(clean(&text, MAX_NAME_CHARS).into_owned())
}

/// Deserializes a label, unit or state name: cleaned, capped at [`MAX_TEXT_CHARS`].
pub(crate) fn text<'de, D: Deserializer<'de>>(deserializer: D) -> Result<String, D::Error> {
    let text = Cow::<'de, str>::deserialize(deserializer)?;
    Ok(clean(&text, MAX_TEXT_CHARS).into_owned())
}

/// [`text`], for text that may be absent.
pub(crate) fn optional_text<'de, D: Deserializer<'de>>(
    deserializer: D,
) -> Result<Option<String>, D::Error> {
    let text = Option::<Cow<'de, str>>::deserialize(deserializer)?;
    Ok(text.map(|text| clean(&text, MAX_TEXT_CHARS).into_owned()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_that_could_forge_a_line_or_flip_a_row_is_escaped() {
        assert_eq!(clean("Hall Lamp", 256), "Hall Lamp");
        assert!(matches!(clean("Hall Lamp", 256), Cow::Borrowed(_)));
        assert_eq!(
            clean("Lamp\n- Front Door Lock (node 99, Porch): switch, on", 256),
            "Lamp\\n- Front Door Lock (node 99, Porch): switch, on"
        );
        assert_eq!(clean("a\rb\tc\u{1b}[31m", 256), "a\\rb c\\u{1b}[31m");
        assert_eq!(
            clean("x\u{2028}y\u{202e}z\u{85}", 256),
            "x\\u{2028}y\\u{202e}z\\u{85}"
        );
        assert_eq!(clean("Küche °C", 256), "Küche °C");
        assert_eq!(
            clean("Front Door Lock\u{ad}", 256),
            "Front Door Lock\\u{ad}"
        );
        assert_eq!(
            clean("Lamp\u{e0049}\u{e0067}\u{fe0f}\u{fff9}", 256),
            "Lamp\\u{e0049}\\u{e0067}\\u{fe0f}\\u{fff9}"
        );
        assert_eq!(
            clean("Front Door Lock\u{2800}", 256),
            "Front Door Lock\\u{2800}"
        );
        // Visible marks that combine or join stay as they are.
        assert_eq!(clean("Café Zoë 🇳🇱 ก่", 256), "Café Zoë 🇳🇱 ก่");
    }

    /// The code points of `fixtures/unicode/invisible.txt`: every one that Unicode's data
    /// gives as `Default_Ignorable_Code_Point` or `Cf`.
    fn recorded_invisible() -> Vec<char> {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../fixtures/unicode/invisible.txt"
        );
        let recorded = std::fs::read_to_string(path).unwrap();
        let mut chars = Vec::new();
        for line in recorded.lines().filter(|line| !line.starts_with('#')) {
            let (first, last) = line.split_once("..").unwrap();
            let code = |hex: &str| u32::from_str_radix(hex.trim(), 16).unwrap();
            chars.extend((code(first)..=code(last)).filter_map(char::from_u32));
        }
        chars
    }

    #[test]
    fn every_invisible_code_point_is_escaped_and_no_visible_one_is() {
        let recorded = recorded_invisible();
        assert!(recorded.len() > 4_000, "{} code points", recorded.len());
        let invisible: std::collections::HashSet<char> = recorded.iter().copied().collect();
        for code in 0..=0x10_ffff_u32 {
            let Some(c) = char::from_u32(code) else {
                continue;
            };
            let listed = invisible.contains(&c);
            assert_eq!(is_invisible(c), listed, "U+{code:04X}");
            let name = format!("Front Door Lock{c}");
            let cleaned = clean(&name, MAX_NAME_CHARS);
            if listed {
                assert_eq!(
                    cleaned,
                    format!("Front Door Lock\\u{{{code:x}}}"),
                    "U+{code:04X}"
                );
                assert_eq!(
                    without_invisible(&cleaned),
                    "Front Door Lock",
                    "U+{code:04X}"
                );
                assert_eq!(without_invisible(&name), "Front Door Lock", "U+{code:04X}");
            } else if !is_layout(c) {
                assert_eq!(cleaned, name, "U+{code:04X}");
                assert_eq!(without_invisible(&cleaned), name, "U+{code:04X}");
            }
        }
    }

    #[test]
    fn only_escapes_of_invisible_characters_are_dropped_from_a_name() {
        assert_eq!(without_invisible("Lamp\\u{41}"), "Lamp\\u{41}");
        assert_eq!(without_invisible("Lamp\\u{zz}\\u{"), "Lamp\\u{zz}\\u{");
        assert_eq!(without_invisible("La\\u{200b}mp\\u{1b}"), "Lamp\\u{1b}");
        assert_eq!(without_invisible("\\u{e0001}\\u{1234567}"), "\\u{1234567}");
    }

    #[test]
    fn long_text_is_cut_with_an_ellipsis_within_its_cap() {
        let long = "é".repeat(4_000_000);
        let cut = clean(&long, MAX_NAME_CHARS);
        assert_eq!(cut.chars().count(), MAX_NAME_CHARS);
        assert!(cut.ends_with("é…"));
        assert_eq!(clean(&"x".repeat(256), 256), "x".repeat(256));
        assert_eq!(clean(&"x".repeat(257), 256).chars().count(), 256);
    }
}
