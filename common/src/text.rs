//! Text as a log line or an error message shows it: one line, and short.

/// `text` on one line (control characters, newlines included, become spaces), cut after `max`
/// characters with `…` when longer.
pub fn clip(text: &str, max: usize) -> String {
    let mut clipped = String::with_capacity(text.len().min(max.saturating_mul(4)) + 3);
    for (count, c) in text.chars().enumerate() {
        if count == max {
            clipped.push('…');
            break;
        }
        clipped.push(if c.is_control() { ' ' } else { c });
    }
    clipped
}

/// `text` safe to show on a terminal: control characters (C0 but newline and tab, DEL, C1)
/// removed, so text a model or a server wrote cannot send escape sequences (set the window
/// title, write the clipboard with OSC 52, hide text, move the cursor over earlier lines);
/// bidirectional overrides, embeddings, isolates and marks escaped as the Z-Wave server
/// escapes them (`\u{202e}`), so they cannot reorder what is shown (a call's arguments in an
/// approval prompt reading other than they are).
pub fn printable(text: &str) -> std::borrow::Cow<'_, str> {
    let unsafe_char = |c: char| c.is_control() && c != '\n' && c != '\t';
    // The line and paragraph separators end a line in some terminals and editors, where
    // the text meant none: escaped as the marks are.
    let escaped = |c: char| is_bidi(c) || matches!(c, '\u{2028}' | '\u{2029}');
    if !text.chars().any(|c| unsafe_char(c) || escaped(c)) {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut shown = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        if escaped(c) {
            shown.push_str(&format!("\\u{{{:x}}}", u32::from(c)));
        } else if !unsafe_char(c) {
            shown.push(c);
        }
    }
    std::borrow::Cow::Owned(shown)
}

/// Every code point that is `Default_Ignorable_Code_Point` or of general category `Cf`
/// (format) in Unicode 18, as inclusive ranges in order: bidirectional controls, zero-width
/// spaces and joiners, the soft hyphen, the combining grapheme joiner, Hangul fillers,
/// variation selectors, interlinear annotations, tags. `fixtures/unicode/` holds the same
/// classes as Unicode's data gives them, and the Z-Wave server's tests hold this table to it.
const INVISIBLE: [(char, char); 25] = [
    ('\u{ad}', '\u{ad}'),
    ('\u{34f}', '\u{34f}'),
    ('\u{600}', '\u{605}'),
    ('\u{61c}', '\u{61c}'),
    ('\u{6dd}', '\u{6dd}'),
    ('\u{70f}', '\u{70f}'),
    ('\u{890}', '\u{891}'),
    ('\u{8e2}', '\u{8e2}'),
    ('\u{115f}', '\u{1160}'),
    ('\u{17b4}', '\u{17b5}'),
    ('\u{180b}', '\u{180f}'),
    ('\u{200b}', '\u{200f}'),
    ('\u{202a}', '\u{202e}'),
    ('\u{2060}', '\u{206f}'),
    ('\u{3164}', '\u{3164}'),
    ('\u{fe00}', '\u{fe0f}'),
    ('\u{feff}', '\u{feff}'),
    ('\u{ffa0}', '\u{ffa0}'),
    ('\u{fff0}', '\u{fffb}'),
    ('\u{110bd}', '\u{110bd}'),
    ('\u{110cd}', '\u{110cd}'),
    ('\u{13430}', '\u{1343f}'),
    ('\u{1bca0}', '\u{1bca3}'),
    ('\u{1d173}', '\u{1d17a}'),
    ('\u{e0000}', '\u{e0fff}'),
];

/// Whether `c` is invisible: a default-ignorable or a format character (the table above).
pub fn is_invisible(c: char) -> bool {
    // Below the soft hyphen only controls, which are layout already.
    c >= '\u{ad}'
        && INVISIBLE
            .binary_search_by(|&(first, last)| {
                if last < c {
                    std::cmp::Ordering::Less
                } else if first > c {
                    std::cmp::Ordering::Greater
                } else {
                    std::cmp::Ordering::Equal
                }
            })
            .is_ok()
}

/// Whether `c` changes the direction text is shown in: the embeddings and overrides
/// (U+202A–U+202E), the isolates (U+2066–U+2069), and the marks (U+200E, U+200F, U+061C).
fn is_bidi(c: char) -> bool {
    matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}' | '\u{200e}' | '\u{200f}' | '\u{61c}')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn printable_text_keeps_lines_and_tabs_and_drops_escapes() {
        assert_eq!(printable("plain\n\tindented"), "plain\n\tindented");
        assert!(matches!(printable("plain"), std::borrow::Cow::Borrowed(_)));
        // OSC 52 (clipboard), OSC 0 (title), SGR 8 (hidden), a carriage return, C1 CSI.
        assert_eq!(
            printable("a\u{1b}]52;c;ZXZpbA==\u{7}b\u{1b}]0;pwned\u{7}c\u{1b}[8mhidden\rd\u{9b}2Je"),
            "a]52;c;ZXZpbA==b]0;pwnedc[8mhiddend2Je"
        );
    }

    #[test]
    fn bidirectional_controls_are_escaped_as_the_server_escapes_them() {
        assert_eq!(
            printable("{\"deviceName\":\"Porch\u{202e}kcoL\"}"),
            r#"{"deviceName":"Porch\u{202e}kcoL"}"#
        );
        assert_eq!(
            printable(
                "a\u{202a}b\u{202b}c\u{202c}d\u{202d}e\u{2066}f\u{2067}g\u{2068}h\u{2069}i\u{200e}j\u{200f}k\u{61c}l"
            ),
            r"a\u{202a}b\u{202b}c\u{202c}d\u{202d}e\u{2066}f\u{2067}g\u{2068}h\u{2069}i\u{200e}j\u{200f}k\u{61c}l"
        );
        // With escapes removed alongside; other format characters (a zero-width joiner) stay.
        assert_eq!(
            printable("\u{1b}[1m\u{202e}x\u{200d}"),
            "[1m\\u{202e}x\u{200d}"
        );
        // Found by the hostile review: the separators reached the terminal as they were.
        assert_eq!(printable("on\u{2028}off\u{2029}"), r"on\u{2028}off\u{2029}");
        assert!(matches!(
            printable("Küche °C"),
            std::borrow::Cow::Borrowed(_)
        ));
    }

    #[test]
    fn text_is_flattened_and_cut_by_characters() {
        assert_eq!(clip("short", 10), "short");
        assert_eq!(clip("exactly10!", 10), "exactly10!");
        assert_eq!(clip("two\nlines\tand more", 9), "two lines…");
        assert_eq!(clip("ÄÖÜäöü", 3), "ÄÖÜ…");
        assert_eq!(clip("", 0), "");
        assert_eq!(clip("x", 0), "…");
        assert_eq!(clip("no limit", usize::MAX), "no limit");
    }
}
