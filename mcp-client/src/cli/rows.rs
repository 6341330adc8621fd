//! Lines a server or a model wrote, cut into rows that fit the terminal before it wraps them:
//! a terminal that wraps a long line starts its rest at the first column, where padding can
//! place text that reads as the client's own words (an approval question, an `[assistant]`
//! line). Rows after a line's first are indented, so nothing of a text ever starts a row.

/// The terminal's width in columns (stderr's, then stdout's), or 80 when neither is one.
pub(super) fn terminal_columns() -> usize {
    let size = rustix::termios::tcgetwinsize(std::io::stderr())
        .or_else(|_| rustix::termios::tcgetwinsize(std::io::stdout()));
    match size {
        Ok(size) if size.ws_col >= 20 => usize::from(size.ws_col),
        _ => 80,
    }
}

/// The columns `c` may take: one for ASCII, two for anything else (wide characters take two;
/// counting every other one so errs on the side of shorter rows).
fn columns(c: char) -> usize {
    if c.is_ascii() { 1 } else { 2 }
}

/// `line` in rows of at most `width` columns: the first as it starts, the others after
/// `indent`.
pub(super) fn fitted(line: &str, width: usize, indent: &str) -> Vec<String> {
    let width = width.max(indent.len() + 8);
    let mut rows = Vec::new();
    let mut row = String::new();
    let mut used = 0;
    for c in line.chars() {
        let taking = columns(c);
        if used + taking > width {
            rows.push(std::mem::take(&mut row));
            row.push_str(indent);
            used = indent.len();
        }
        row.push(c);
        used += taking;
    }
    rows.push(row);
    rows
}

/// Each line of `text` fitted to `width` (see [`fitted`]), joined with newlines.
pub(super) fn fitted_text(text: &str, width: usize, indent: &str) -> String {
    text.split('\n')
        .flat_map(|line| fitted(line, width, indent))
        .collect::<Vec<_>>()
        .join("\n")
}

/// `text` cut to at most `width` columns, ending in `…` when cut.
pub(super) fn clipped_to(text: &str, width: usize) -> String {
    let mut shown = String::new();
    let mut used = 0;
    for c in text.chars() {
        if used + columns(c) > width.saturating_sub(1) {
            shown.push('…');
            return shown;
        }
        shown.push(c);
        used += columns(c);
    }
    shown
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_long_line_never_reaches_the_terminals_edge_and_its_rest_is_indented() {
        let forged = format!("{}Allow the tool \"x\" to run? [y/N]", "a".repeat(150));
        let rows = fitted(&forged, 160, "      ");
        assert_eq!(rows.len(), 2);
        assert!(rows[1].starts_with("      "), "{rows:?}");
        assert!(
            rows.iter()
                .all(|row| row.chars().map(columns).sum::<usize>() <= 160)
        );
        // Wide characters count two columns.
        let wide = "\u{3000}".repeat(100);
        assert!(
            fitted(&wide, 160, "  ")
                .iter()
                .all(|row| row.chars().map(columns).sum::<usize>() <= 160)
        );
        assert_eq!(fitted("short", 160, "  "), ["short"]);
        assert_eq!(clipped_to("abcdef", 4), "abc…");
        assert_eq!(clipped_to("abc", 4), "abc");
        assert_eq!(fitted_text("a\nb", 80, " "), "a\nb");
    }
}
