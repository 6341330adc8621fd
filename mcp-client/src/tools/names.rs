//! Tool names that every LLM provider accepts (`^[a-zA-Z0-9_-]{1,64}$`), with an exact way
//! back to the server and the tool's own name.

/// Longest name providers accept.
pub const MAX_NAME: usize = 64;

/// `name` with every character outside `[a-zA-Z0-9_-]` replaced by `_`, cut to 64 characters
/// (a cut name ends in a short hash of the whole, so two long names stay apart).
pub fn provider_safe(name: &str) -> String {
    let mut safe: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect();
    if safe.is_empty() {
        safe.push('_');
    }
    if safe.len() > MAX_NAME {
        let hash = fnv1a(name.as_bytes());
        safe.truncate(MAX_NAME - 9);
        safe.push_str(&format!("_{hash:08x}"));
    }
    safe
}

/// Whether `name` is valid for every provider.
pub fn is_provider_safe(name: &str) -> bool {
    (1..=MAX_NAME).contains(&name.len())
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
}

fn fnv1a(bytes: &[u8]) -> u32 {
    bytes.iter().fold(0x811c_9dc5_u32, |hash, &b| {
        (hash ^ u32::from(b)).wrapping_mul(0x0100_0193)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn invalid_characters_become_underscores() {
        assert_eq!(provider_safe("get-sum"), "get-sum");
        assert_eq!(provider_safe("files.read/all"), "files_read_all");
        assert_eq!(provider_safe("météo"), "m_t_o");
        assert!(is_provider_safe(&provider_safe("a b")));
    }

    #[test]
    fn long_names_are_cut_with_a_hash_and_stay_distinct() {
        let a = provider_safe(&"x".repeat(80));
        let b = provider_safe(&format!("{}y", "x".repeat(79)));
        assert_eq!(a.len(), 64);
        assert!(is_provider_safe(&a));
        assert_ne!(a, b);
    }
}
