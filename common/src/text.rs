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
/// title, write the clipboard with OSC 52, hide text, move the cursor over earlier lines).
pub fn printable(text: &str) -> std::borrow::Cow<'_, str> {
    let unsafe_char = |c: char| c.is_control() && c != '\n' && c != '\t';
    if text.chars().any(unsafe_char) {
        std::borrow::Cow::Owned(text.chars().filter(|&c| !unsafe_char(c)).collect())
    } else {
        std::borrow::Cow::Borrowed(text)
    }
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
