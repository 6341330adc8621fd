//! How names are compared: folded to one form ([`normalize`]), and how far apart two are
//! ([`edit_distance`], for the closest names to suggest).

/// A name as it is compared: invisible characters dropped, raw or escaped (a garage door named
/// "Front Door Lock" and a soft hyphen reads as the lock, so the two names are one), Unicode
/// compatibility forms folded (NFKC: a full-width "Ｌａｍｐ" is "Lamp"), every run of white
/// space (a no-break space too) one space, lowercase. Lookups and the owner's exposure rules
/// compare names this one way.
pub(crate) fn normalize(text: &str) -> String {
    use unicode_normalization::UnicodeNormalization as _;
    let folded: String = crate::network::text::without_invisible(text)
        .nfkc()
        .collect();
    let mut joined = String::with_capacity(folded.len());
    for word in folded.split_whitespace() {
        if !joined.is_empty() {
            joined.push(' ');
        }
        joined.push_str(word);
    }
    joined.to_lowercase()
}

/// Levenshtein distance over chars; inputs are device names, so the quadratic cost is tiny.
pub(super) fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut diagonal = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let above = row[j + 1];
            row[j + 1] = if ca == *cb {
                diagonal
            } else {
                1 + diagonal.min(above).min(row[j])
            };
            diagonal = above;
        }
    }
    row[b.len()]
}
