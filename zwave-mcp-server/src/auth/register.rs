//! Dynamic client registration (RFC 7591) within bounds: public clients only, redirect URIs a
//! browser hands back to an app, at most [`MAX_CLIENTS`] kept and
//! [`MAX_REGISTRATIONS_A_MINUTE`] taken; and how a redirect URI given later matches one
//! registered.

use std::time::Duration;

use bytes::Bytes;
use http_body_util::Full;
use hyper::{Response, StatusCode};
use serde_json::{Value, json};

use super::{
    AuthServer,
    book::{Client, Records},
    endpoints::{OAuthError, json},
    secret,
};

/// The most clients registered at once.
pub const MAX_CLIENTS: usize = 256;
/// A client registered this long ago that was never granted anything makes room for a new one.
pub const UNUSED_CLIENT_AGE: Duration = Duration::from_secs(3600);
/// The most registrations a minute from one address.
pub const MAX_REGISTRATIONS_A_MINUTE: u32 = 10;
/// The most registrations a minute from all addresses together.
pub const MAX_REGISTRATIONS_A_MINUTE_IN_ALL: u32 = 60;
/// The most redirect URIs one client registers.
pub const MAX_REDIRECT_URIS: usize = 8;
/// The longest redirect URI, in bytes.
pub const MAX_REDIRECT_URI_BYTES: usize = 512;
/// The longest client name kept, in characters.
pub const MAX_CLIENT_NAME_CHARS: usize = 80;

/// Why `uri` cannot be a redirect URI: absolute, no fragment, https, http to loopback only,
/// or an app's own scheme (RFC 8252 §7.1); none of the schemes that run or read something.
pub fn bad_redirect_uri(uri: &str) -> Option<String> {
    let shown = || format!("{:?}", common::clip(uri, 80));
    if uri.len() > MAX_REDIRECT_URI_BYTES {
        return Some(format!(
            "the redirect URI {} is longer than {MAX_REDIRECT_URI_BYTES} bytes",
            shown()
        ));
    }
    // A backslash reads as `/` to browsers: `https://evil.example\.claude.ai` goes to
    // evil.example (found by the hostile review).
    if uri.chars().any(|c| c.is_control() || c.is_whitespace()) || uri.contains(['#', '\\']) {
        return Some(format!(
            "the redirect URI {} holds a space, a control character, a backslash or a fragment (#)",
            shown()
        ));
    }
    let Some((scheme, rest)) = uri.split_once(':') else {
        return Some(format!("the redirect URI {} is not absolute", shown()));
    };
    let scheme = scheme.to_ascii_lowercase();
    let valid_scheme = scheme.starts_with(|c: char| c.is_ascii_alphabetic())
        && scheme
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'+' | b'-' | b'.'));
    if !valid_scheme {
        return Some(format!("the redirect URI {} is not absolute", shown()));
    }
    let authority = rest
        .strip_prefix("//")
        .map(|after| after.split(['/', '?']).next().unwrap_or_default());
    if authority.is_some_and(|authority| authority.contains('@') || authority.contains('%')) {
        return Some(format!(
            "the redirect URI {} has a user or an escaped character before its host: a person could not tell where it leads",
            shown()
        ));
    }
    match scheme.as_str() {
        "https" if authority.is_some_and(|authority| !authority.is_empty()) => None,
        "http" if loopback_authority(rest).is_some() => None,
        "http" => Some(format!(
            "the redirect URI {} is plain http to another machine: use https (plain http only to 127.0.0.1, [::1] or localhost)",
            shown()
        )),
        "javascript" | "data" | "file" | "vbscript" | "blob" | "about" | "ws" | "wss" | "ftp"
        | "https" | "view-source" | "filesystem" | "chrome" | "chrome-extension" | "intent"
        | "mailto" | "tel" | "sms" | "edge" | "chrome-untrusted" | "moz-extension" | "resource"
        | "jar" => Some(format!(
            "the redirect URI {} has a scheme a browser would not hand back to an app",
            shown()
        )),
        _ => None,
    }
}

/// The host of an `http:` URI's rest (`//127.0.0.1:8080/cb`) when it is a loopback one.
fn loopback_authority(rest: &str) -> Option<&str> {
    let authority = rest.strip_prefix("//")?;
    let authority = authority.split(['/', '?']).next().unwrap_or_default();
    if authority.contains('@') {
        return None;
    }
    let (host, port) = if let Some(v6) = authority.strip_prefix('[') {
        let (host, after) = v6.split_once(']')?;
        (host, after.strip_prefix(':'))
    } else {
        match authority.split_once(':') {
            Some((host, port)) => (host, Some(port)),
            None => (authority, None),
        }
    };
    // Found by the hostile review: a port that is no number (`:5\x`) moved the path.
    if port.is_some_and(|port| port.is_empty() || !port.bytes().all(|b| b.is_ascii_digit())) {
        return None;
    }
    matches!(host, "127.0.0.1" | "::1" | "localhost").then_some(host)
}

/// Whether `given` names the registered `registered`: exactly, or, for a loopback http one,
/// on another port (RFC 8252 §7.3: a native app listens on whichever port is free).
pub fn redirect_matches(registered: &str, given: &str) -> bool {
    if registered == given {
        return true;
    }
    let without_port = |uri: &str| -> Option<String> {
        let rest = uri.strip_prefix("http:")?;
        let host = loopback_authority(rest)?;
        let after = rest.strip_prefix("//")?;
        let path_at = after.find(['/', '?']).unwrap_or(after.len());
        // The authority checked by `loopback_authority`: host and a numeric port.
        Some(format!("http://{host}{}", &after[path_at..]))
    };
    matches!((without_port(registered), without_port(given)), (Some(a), Some(b)) if a == b)
}

/// `POST /oauth/register`: a client registers itself (RFC 7591). Only public clients
/// (`token_endpoint_auth_method: none`) with the code and refresh grants.
pub fn register(auth: &AuthServer, body: &[u8], peer: Option<&str>) -> Response<Full<Bytes>> {
    match registered(auth, body, peer) {
        Ok(client) => json(
            StatusCode::CREATED,
            &json!({
                "client_id": client.id,
                "client_id_issued_at": client.registered_at,
                "client_name": client.name,
                "redirect_uris": client.redirect_uris,
                "grant_types": ["authorization_code", "refresh_token"],
                "response_types": ["code"],
                "token_endpoint_auth_method": "none",
            }),
        ),
        Err(err) => err.answer(),
    }
}

fn registered(auth: &AuthServer, body: &[u8], peer: Option<&str>) -> Result<Client, OAuthError> {
    let invalid = |why: String| OAuthError::new("invalid_client_metadata", why);
    let asked: Value = serde_json::from_slice(body)
        .map_err(|err| invalid(format!("the registration is not a JSON object: {err}")))?;
    let asked = asked
        .as_object()
        .ok_or_else(|| invalid("the registration is not a JSON object".into()))?;
    let (name, redirect_uris) = described(asked)?;
    auth.count_registration(peer.unwrap_or("?"))?;
    let now = secret::now();
    let client = Client {
        id: format!("zc1.{}", secret::random_hex(16)),
        name,
        redirect_uris,
        registered_at: now,
    };
    let kept = client.clone();
    auth.book.change(move |records: &mut Records| {
        make_room(records, now)?;
        records.clients.push(kept);
        Ok::<_, OAuthError>((true, ()))
    })?;
    tracing::info!(client = %client.name, id = %client.id, "an OAuth client registered");
    Ok(client)
}

/// What a client says of itself (a registration, or a Client ID Metadata Document), checked:
/// its name (cleaned) and its redirect URIs. A public client only: PKCE, no secret.
pub(super) fn described(
    asked: &serde_json::Map<String, Value>,
) -> Result<(String, Vec<String>), OAuthError> {
    let invalid = |why: String| OAuthError::new("invalid_client_metadata", why);
    let uris = asked
        .get("redirect_uris")
        .and_then(Value::as_array)
        .filter(|uris| !uris.is_empty())
        .ok_or_else(|| {
            OAuthError::new(
                "invalid_redirect_uri",
                "redirect_uris must list at least one URI",
            )
        })?;
    if uris.len() > MAX_REDIRECT_URIS {
        return Err(OAuthError::new(
            "invalid_redirect_uri",
            format!(
                "redirect_uris lists {} URIs; at most {MAX_REDIRECT_URIS}",
                uris.len()
            ),
        ));
    }
    let mut redirect_uris = Vec::with_capacity(uris.len());
    for uri in uris {
        let uri = uri.as_str().ok_or_else(|| {
            OAuthError::new("invalid_redirect_uri", "each redirect URI must be a string")
        })?;
        if let Some(why) = bad_redirect_uri(uri) {
            return Err(OAuthError::new("invalid_redirect_uri", why));
        }
        redirect_uris.push(uri.to_owned());
    }
    let method = asked
        .get("token_endpoint_auth_method")
        .and_then(Value::as_str)
        .unwrap_or("none");
    if method != "none" {
        return Err(invalid(format!(
            "token_endpoint_auth_method {:?} is not supported: this server registers public clients only (\"none\", with PKCE)",
            common::clip(method, 40)
        )));
    }
    for (field, allowed) in [
        ("grant_types", &["authorization_code", "refresh_token"][..]),
        ("response_types", &["code"][..]),
    ] {
        if let Some(list) = asked.get(field).and_then(Value::as_array)
            && let Some(other) = list
                .iter()
                .find(|item| item.as_str().is_none_or(|item| !allowed.contains(&item)))
        {
            return Err(invalid(format!(
                "{field} may hold only {allowed:?}, not {}",
                common::clip(&other.to_string(), 40)
            )));
        }
    }
    let name = asked
        .get("client_name")
        .and_then(Value::as_str)
        .map(|name| crate::network::text::clean(name.trim(), MAX_CLIENT_NAME_CHARS).into_owned())
        .filter(|name| !name.is_empty())
        .unwrap_or_else(|| "(a client that gave no name)".to_owned());
    Ok((name, redirect_uris))
}

/// Room for one more client: those never granted anything go first, oldest first (found by
/// the hostile review: kept for an hour, they let a flood of registrations refuse everyone);
/// a book full of granted clients refuses.
pub(super) fn make_room(records: &mut Records, now: u64) -> Result<(), OAuthError> {
    let granted: std::collections::HashSet<String> = records
        .grants
        .iter()
        .filter(|grant| grant.refresh.is_some())
        .map(|grant| grant.client_id.clone())
        .collect();
    // Grants whose code lapsed unredeemed are nothing: gone with them.
    records.grants.retain(|grant| {
        grant.refresh.is_some()
            || grant
                .code
                .as_ref()
                .is_some_and(|code| code.expires_at + UNUSED_CLIENT_AGE.as_secs() > now)
    });
    while records.clients.len() >= MAX_CLIENTS {
        let Some(oldest) = records
            .clients
            .iter()
            .enumerate()
            .filter(|(_, client)| !granted.contains(&client.id))
            .min_by_key(|(_, client)| client.registered_at)
            .map(|(at, _)| at)
        else {
            return Err(OAuthError {
                status: StatusCode::SERVICE_UNAVAILABLE,
                code: "temporarily_unavailable",
                why: format!(
                    "{MAX_CLIENTS} clients hold grants, the most this server keeps: the owner can revoke unused ones on /oauth/grants"
                ),
            });
        };
        records.clients.remove(oldest);
    }
    Ok(())
}

impl AuthServer {
    /// Counts a registration; refused past [`MAX_REGISTRATIONS_A_MINUTE`].
    fn count_registration(&self, source: &str) -> Result<(), OAuthError> {
        let mut counted = self
            .registrations
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let counted = counted.now();
        let refused = if counted.of(source) >= MAX_REGISTRATIONS_A_MINUTE {
            format!(
                "more than {MAX_REGISTRATIONS_A_MINUTE} clients registered from this address in the last minute: try again in a minute"
            )
        } else if counted.all >= MAX_REGISTRATIONS_A_MINUTE_IN_ALL {
            format!(
                "more than {MAX_REGISTRATIONS_A_MINUTE_IN_ALL} clients registered in the last minute: try again in a minute"
            )
        } else {
            counted.count(source);
            return Ok(());
        };
        Err(OAuthError {
            status: StatusCode::TOO_MANY_REQUESTS,
            code: "temporarily_unavailable",
            why: refused,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Found by the hostile review: one count for all let one address refuse every
    /// registration (30 a minute, in 0.55 s).
    #[test]
    fn registrations_are_counted_by_address_and_in_all() {
        let (auth, dir) = crate::auth::tests::server("registrations");
        for _ in 0..MAX_REGISTRATIONS_A_MINUTE {
            auth.count_registration("10.0.0.9").unwrap();
        }
        let refused = auth.count_registration("10.0.0.9").unwrap_err();
        assert_eq!(
            refused.why,
            "more than 10 clients registered from this address in the last minute: try again in a minute"
        );
        let mut source = 0;
        while auth.count_registration(&format!("10.1.0.{source}")).is_ok() {
            source += 1;
        }
        assert_eq!(
            source,
            MAX_REGISTRATIONS_A_MINUTE_IN_ALL - MAX_REGISTRATIONS_A_MINUTE
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// A full book makes room by dropping the oldest client never granted anything.
    #[test]
    fn a_full_book_drops_the_oldest_client_never_granted() {
        let mut records = Records::default();
        for n in 0..MAX_CLIENTS {
            records.clients.push(Client {
                id: format!("c{n}"),
                name: String::new(),
                redirect_uris: Vec::new(),
                registered_at: 1_000 + n as u64,
            });
        }
        make_room(&mut records, 2_000).unwrap();
        assert_eq!(records.clients.len(), MAX_CLIENTS - 1);
        assert!(records.client("c0").is_none());
        assert!(records.client("c1").is_some());
        // Every client holding a grant: nothing to drop, refused saying what the owner can do.
        records.clients.push(records.clients[0].clone());
        records.grants = records
            .clients
            .iter()
            .map(|client| crate::auth::book::Grant {
                id: format!("g-{}", client.id),
                client_id: client.id.clone(),
                client_name: String::new(),
                scopes: crate::auth::Scopes::default(),
                granted_at: 0,
                last_used_at: 0,
                last_from: None,
                code: None,
                refresh: Some("digest".into()),
                retired: Vec::new(),
            })
            .collect();
        let refused = make_room(&mut records, 2_000).unwrap_err();
        assert_eq!(refused.status, StatusCode::SERVICE_UNAVAILABLE);
        assert_eq!(
            refused.why,
            "256 clients hold grants, the most this server keeps: the owner can revoke unused ones on /oauth/grants"
        );
    }

    #[test]
    fn redirect_uris_a_browser_hands_back_to_an_app() {
        for fine in [
            "https://claude.ai/api/mcp/auth_callback",
            "https://chatgpt.com/connector_platform_oauth_redirect",
            "http://127.0.0.1:33418/callback",
            "http://[::1]/cb",
            "http://localhost:6274/oauth/callback",
            "com.example.app:/oauth2redirect",
            "cursor://anysphere.cursor-retrieval/oauth/callback",
        ] {
            assert_eq!(bad_redirect_uri(fine), None, "{fine}");
        }
        for (bad, words) in [
            (
                "http://home.example/cb",
                "is plain http to another machine: use https",
            ),
            (
                "http://127.0.0.1.evil.example/cb",
                "is plain http to another machine",
            ),
            (
                "http://127.0.0.1@evil.example/cb",
                "has a user or an escaped character before its host",
            ),
            (
                "javascript:alert(1)",
                "has a scheme a browser would not hand back",
            ),
            (
                "https:relative",
                "has a scheme a browser would not hand back",
            ),
            (
                "https://a.example/cb#frag",
                "holds a space, a control character, a backslash or a fragment",
            ),
            ("/relative", "is not absolute"),
            ("1http://x", "is not absolute"),
            (
                "https://claude.ai%2Fapi@evil.example/",
                "has a user or an escaped character before its host",
            ),
            (
                "https://user@evil.example/cb",
                "has a user or an escaped character before its host",
            ),
            (
                "view-source:https://a.example/",
                "has a scheme a browser would not hand back",
            ),
            // Found by the hostile review of the fixes.
            ("https://evil.example\\.claude.ai/cb", "a backslash"),
            (
                "moz-extension://x/cb",
                "has a scheme a browser would not hand back",
            ),
            ("http://127.0.0.1:5\\x/cb", "a backslash"),
        ] {
            let why = bad_redirect_uri(bad).unwrap_or_else(|| panic!("{bad} taken"));
            assert!(why.contains(words), "{bad}: {why}");
        }
        let long = format!("https://a.example/{}", "a".repeat(600));
        assert!(
            bad_redirect_uri(&long)
                .unwrap()
                .contains("longer than 512 bytes")
        );
    }

    #[test]
    fn a_redirect_uri_matches_exactly_or_on_another_loopback_port() {
        assert!(redirect_matches(
            "https://a.example/cb",
            "https://a.example/cb"
        ));
        assert!(!redirect_matches(
            "https://a.example/cb",
            "https://a.example/cb/"
        ));
        assert!(!redirect_matches(
            "https://a.example/cb",
            "https://a.example/cB"
        ));
        assert!(!redirect_matches(
            "https://a.example:443/cb",
            "https://a.example:444/cb"
        ));
        assert!(redirect_matches(
            "http://127.0.0.1:1000/cb",
            "http://127.0.0.1:2000/cb"
        ));
        assert!(redirect_matches(
            "http://127.0.0.1/cb",
            "http://127.0.0.1:2000/cb"
        ));
        assert!(!redirect_matches(
            "http://127.0.0.1:1000/cb",
            "http://127.0.0.1:2000/other"
        ));
        assert!(!redirect_matches(
            "http://127.0.0.1:1000/cb",
            "http://localhost:1000/cb"
        ));
    }
}
