//! Which MCP revision a session speaks, and how it starts. From 2026-07-28 there is no
//! handshake: the client asks `server/discover` and every request carries its own protocol
//! version, capabilities and identity. Up to 2025-11-25 the session starts with `initialize`.
//!
//! Unless the configuration pins a revision, a session asks for the newest: `server/discover`
//! first, and `initialize` at [`PINNED_PROTOCOL_VERSION`] when the server answers it with an
//! error (a server of an earlier revision does not know the method) or not at all within ten
//! seconds (rmcp's wait), as the 2026-07-28 specification's backward-compatibility rules say.

use rmcp::{
    model::ProtocolVersion,
    service::{ClientInitializeError, ClientLifecycleMode},
};

use super::PINNED_PROTOCOL_VERSION;

/// The newest revision this client speaks: what it asks `server/discover` for.
pub const NEWEST_PROTOCOL_VERSION: ProtocolVersion = ProtocolVersion::V_2026_07_28;

/// How a session with `pinned` (the configured revision; `None`: the newest the server
/// offers) starts.
pub(super) fn start(pinned: Option<&ProtocolVersion>) -> ClientLifecycleMode {
    match pinned {
        None => ClientLifecycleMode::Auto {
            preferred_versions: vec![NEWEST_PROTOCOL_VERSION],
            legacy_version: Some(PINNED_PROTOCOL_VERSION),
        },
        Some(version) if !version.has_initialize() => ClientLifecycleMode::Discover {
            preferred_versions: vec![version.clone()],
        },
        // The handler announces the pinned revision in `initialize`.
        Some(_) => ClientLifecycleMode::Initialize,
    }
}

/// Why a session did not start, in words: rmcp's error, with both halves when the server
/// refused `server/discover` and the `initialize` after it failed too.
pub(super) fn failure(err: &ClientInitializeError) -> String {
    let versions = |versions: &[ProtocolVersion]| {
        versions
            .iter()
            .map(ProtocolVersion::as_str)
            .collect::<Vec<_>>()
            .join(", ")
    };
    match err {
        ClientInitializeError::LegacyFallbackFailed { discover, fallback } => format!(
            "{} (after it refused server/discover: {discover})",
            failure(fallback)
        ),
        ClientInitializeError::NoCompatibleProtocolVersion {
            client_supported,
            server_supported,
        } => format!(
            "the server speaks none of the protocol revisions asked for (it offers {}; asked: {})",
            versions(server_supported),
            versions(client_supported)
        ),
        other => other.to_string(),
    }
}

/// Why a session whose server answered with `answered` cannot go on, when it cannot: a
/// revision this client does not speak (MCP lets a server answer `initialize` with another
/// revision than asked; the client then decides, and it speaks only those it knows). Found
/// by the hostile review: a server answering `initialize` with 2099-01-01 was spoken to as if
/// it spoke the revision asked for.
pub(super) fn unspoken(answered: &ProtocolVersion) -> Option<String> {
    parse(answered.as_str()).err().map(|_| {
        format!(
            "the server answered with protocol revision {:?}, which this client does not speak: disconnected",
            common::clip(answered.as_str(), 40)
        )
    })
}

/// The revision `text` names, when this client speaks it.
///
/// # Errors
/// Not a revision this client knows: the message lists those it does.
pub fn parse(text: &str) -> Result<ProtocolVersion, String> {
    ProtocolVersion::KNOWN_VERSIONS
        .iter()
        .find(|known| known.as_str() == text)
        .cloned()
        .ok_or_else(|| {
            let known: Vec<&str> = ProtocolVersion::KNOWN_VERSIONS
                .iter()
                .map(ProtocolVersion::as_str)
                .collect();
            format!(
                "`{text}` is not an MCP revision this client speaks: use one of {}, or leave it out to speak the newest the server offers",
                known.join(", ")
            )
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_revision_answered_must_be_one_this_client_speaks() {
        let future: ProtocolVersion =
            serde_json::from_value(serde_json::json!("2099-01-01")).unwrap();
        assert_eq!(
            unspoken(&future).unwrap(),
            "the server answered with protocol revision \"2099-01-01\", which this client does not speak: disconnected"
        );
        assert_eq!(unspoken(&ProtocolVersion::V_2025_06_18), None);
        assert_eq!(unspoken(&ProtocolVersion::V_2024_11_05), None);
    }

    #[test]
    fn unpinned_sessions_discover_first_and_fall_back_to_initialize() {
        assert_eq!(
            start(None),
            ClientLifecycleMode::Auto {
                preferred_versions: vec![ProtocolVersion::V_2026_07_28],
                legacy_version: Some(ProtocolVersion::V_2025_11_25),
            }
        );
    }

    #[test]
    fn a_pinned_revision_decides_the_start_alone() {
        assert_eq!(
            start(Some(&ProtocolVersion::V_2026_07_28)),
            ClientLifecycleMode::Discover {
                preferred_versions: vec![ProtocolVersion::V_2026_07_28]
            }
        );
        for old in [
            ProtocolVersion::V_2025_11_25,
            ProtocolVersion::V_2025_06_18,
            ProtocolVersion::V_2024_11_05,
        ] {
            assert_eq!(start(Some(&old)), ClientLifecycleMode::Initialize, "{old}");
        }
    }

    #[test]
    fn revisions_are_read_exactly_and_an_unknown_one_lists_the_known() {
        assert_eq!(parse("2025-06-18"), Ok(ProtocolVersion::V_2025_06_18));
        let refused = parse("2025-13-01").unwrap_err();
        assert!(
            refused.starts_with("`2025-13-01` is not an MCP revision this client speaks: use one of 2024-11-05, 2025-03-26, 2025-06-18, 2025-11-25, 2026-07-28"),
            "{refused}"
        );
        assert!(parse(" 2025-11-25").is_err());
    }
}
