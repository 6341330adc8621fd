//! Text Z-Wave JS supplies (device names, locations, labels, units, state names, error
//! messages) is data, never layout: control characters, line and paragraph separators and
//! bidirectional overrides are escaped (a name with a newline must not forge a row of the
//! device list or a log line), and lengths are capped when the node list is parsed (a 4 MB
//! name cost seconds of CPU in name suggestions).

use std::borrow::Cow;

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

/// What a caller gave (a colour, a tone, a mode, a filter, a device name) as an answer
/// quotes it: escaped and cut as device names are, so a megabyte argument is never echoed.
pub fn echoed(given: &str) -> Cow<'_, str> {
    clean(given, MAX_NAME_CHARS)
}

/// Whether `c` moves text around rather than being part of it.
fn is_layout(c: char) -> bool {
    c.is_control()
        || matches!(
            c,
            '\u{2028}' | '\u{2029}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}'
                // Invisible: zero-width spaces and joiners, marks, the word joiner, the BOM.
                | '\u{200b}'..='\u{200f}' | '\u{061c}' | '\u{2060}'..='\u{2064}' | '\u{feff}'
        )
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
