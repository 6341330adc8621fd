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

#[cfg(test)]
mod tests {
    use super::*;

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
