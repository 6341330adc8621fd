//! How text from a model or a server is written on the terminal: every character that shows
//! nothing or moves what follows as an escape, long runs of white space counted, quotes
//! escaped inside a quoted string. The approval card, the line after a call and a server's
//! form labels all write text this way.

/// White space shown as it is up to this many characters in a row; a longer run is counted.
const SHOWN_SPACES: usize = 3;

/// How a value is written: a string in quotes (its quotes and backslashes escaped), or the
/// JSON of any other value as it is (its strings are escaped already).
#[derive(Clone, Copy)]
pub(super) enum Quote {
    String,
    Json,
}

impl Quote {
    pub(super) fn wrap(self, shown: &str) -> String {
        match self {
            Self::String => format!("\"{shown}\""),
            Self::Json => shown.to_owned(),
        }
    }
}

/// `text` with every character that shows nothing, or moves what follows, written as an
/// escape, quotes and backslashes escaped as JSON escapes them, and long runs of white space
/// counted.
pub(super) fn escaped(text: &str, quote: Quote) -> String {
    let mut shown = String::with_capacity(text.len() + 2);
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c.is_whitespace() && !matches!(c, '\n' | '\r' | '\t') {
            let mut run = 1;
            while chars.peek() == Some(&c) {
                chars.next();
                run += 1;
            }
            if run > SHOWN_SPACES {
                let name = if c == ' ' {
                    "spaces".to_owned()
                } else {
                    format!("× U+{:04X}", u32::from(c))
                };
                shown.push_str(&format!("⟨{run} {name}⟩"));
            } else if c == ' ' {
                (0..run).for_each(|_| shown.push(' '));
            } else {
                (0..run).for_each(|_| shown.push_str(&format!("\\u{{{:x}}}", u32::from(c))));
            }
            continue;
        }
        match c {
            '"' if matches!(quote, Quote::String) => shown.push_str("\\\""),
            '\\' if matches!(quote, Quote::String) => shown.push_str("\\\\"),
            '\n' => shown.push_str("\\n"),
            '\r' => shown.push_str("\\r"),
            '\t' => shown.push_str("\\t"),
            // U+2800 (a braille cell with no dots) is a blank that is no white space.
            c if c.is_control()
                || common::is_invisible(c)
                || is_separator(c)
                || c == '\u{2800}' =>
            {
                shown.push_str(&format!("\\u{{{:x}}}", u32::from(c)));
            }
            c => shown.push(c),
        }
    }
    shown
}

/// The line and paragraph separators: a line ends there in some terminals.
fn is_separator(c: char) -> bool {
    matches!(c, '\u{2028}' | '\u{2029}')
}
