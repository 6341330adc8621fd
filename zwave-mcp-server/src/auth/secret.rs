//! The secrets the authorization server makes and checks: random values, the signing key,
//! access tokens (signed, so that checking one reads no file), refresh tokens and codes (kept
//! only as their SHA-256), and PKCE's S256.
//!
//! An access token is `zat1.GRANT.SCOPES.EXPIRES.MAC`: the grant's id, its scopes as a
//! number, when it expires (Unix seconds), and HMAC-SHA256 over those and the resource URL
//! it is for (RFC 8707's audience: a token for another server, or from a server with another
//! URL or key, never checks out here).

use base64::Engine as _;
use hmac::{KeyInit as _, Mac as _};
use sha2::{Digest as _, Sha256};
use subtle::ConstantTimeEq as _;

use super::scope::Scopes;

type HmacSha256 = hmac::Hmac<Sha256>;

/// What an access token starts with.
pub const ACCESS_PREFIX: &str = "zat1.";

/// `bytes` random bytes, as lowercase hex.
///
/// # Panics
/// The system has no randomness to give (getrandom fails only where no source exists).
pub fn random_hex(bytes: usize) -> String {
    let mut buffer = vec![0_u8; bytes];
    getrandom::fill(&mut buffer).expect("the system's random source");
    hex(&buffer)
}

/// Lowercase hex of `bytes`.
pub fn hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut text = String::with_capacity(bytes.len() * 2);
    for byte in bytes {
        text.push(char::from(DIGITS[usize::from(byte >> 4)]));
        text.push(char::from(DIGITS[usize::from(byte & 0xf)]));
    }
    text
}

/// SHA-256 of `text`, hex: how refresh tokens and codes are kept.
pub fn digest(text: &str) -> String {
    hex(&Sha256::digest(text.as_bytes()))
}

/// Whether two strings are equal, in time that does not depend on where they differ.
pub fn same(a: &str, b: &str) -> bool {
    bool::from(a.as_bytes().ct_eq(b.as_bytes()))
}

/// Whether `verifier` is PKCE's: 43 to 128 unreserved characters (RFC 7636 §4.1).
pub fn is_verifier(verifier: &str) -> bool {
    (43..=128).contains(&verifier.len())
        && verifier
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~'))
}

/// Whether `challenge` is an S256 challenge's shape: 43 BASE64URL characters, no padding.
pub fn is_challenge(challenge: &str) -> bool {
    challenge.len() == 43
        && challenge
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_'))
}

/// Whether `verifier` answers `challenge` (S256: BASE64URL(SHA-256(verifier)) == challenge).
pub fn pkce_matches(verifier: &str, challenge: &str) -> bool {
    let computed = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .encode(Sha256::digest(verifier.as_bytes()));
    same(&computed, challenge)
}

/// The key access tokens are signed with (32 bytes).
#[derive(Clone)]
pub struct SigningKey([u8; 32]);

impl std::fmt::Debug for SigningKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SigningKey(***)")
    }
}

/// An access token's claims, once checked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Claims {
    /// The grant it was issued under.
    pub grant: String,
    /// What it allows (at most the grant's, at the time it was issued).
    pub scopes: Scopes,
    /// When it expires, Unix seconds.
    pub expires: u64,
}

/// Why an access token was not taken.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rejected {
    /// Not one of ours, or altered, or for another resource.
    Invalid,
    /// Ours, but expired.
    Expired,
}

impl SigningKey {
    /// The key whose hex is `text` (64 hex digits, surrounding white space ignored).
    pub fn from_hex(text: &str) -> Option<Self> {
        let text = text.trim();
        if text.len() != 64 {
            return None;
        }
        let mut key = [0_u8; 32];
        for (i, byte) in key.iter_mut().enumerate() {
            *byte = u8::from_str_radix(text.get(2 * i..2 * i + 2)?, 16).ok()?;
        }
        Some(Self(key))
    }

    /// A new random key, as hex.
    pub fn new_hex() -> String {
        random_hex(32)
    }

    fn mac(&self, resource: &str, body: &str) -> HmacSha256 {
        let mut mac = HmacSha256::new_from_slice(&self.0).expect("HMAC takes a key of any length");
        mac.update(resource.as_bytes());
        mac.update(b"\n");
        mac.update(body.as_bytes());
        mac
    }

    /// A tag over `text` for `purpose` (a page's form, signed so that any process on the
    /// same state directory can check what it posts back).
    pub fn tag(&self, purpose: &str, text: &str) -> String {
        hex(&self.mac(purpose, text).finalize().into_bytes())
    }

    /// Whether `tag` is [`tag`](Self::tag)'s for `purpose` and `text`.
    pub fn tagged(&self, purpose: &str, text: &str, tag: &str) -> bool {
        same(&self.tag(purpose, text), tag)
    }

    /// An access token for `claims`, to be used at `resource` only.
    pub fn sign(&self, resource: &str, claims: &Claims) -> String {
        let body = format!(
            "{ACCESS_PREFIX}{}.{}.{}",
            claims.grant,
            claims.scopes.bits(),
            claims.expires
        );
        let tag = hex(&self.mac(resource, &body).finalize().into_bytes());
        format!("{body}.{tag}")
    }

    /// The claims of `token` if this key signed it for `resource` and it has not expired at
    /// `now` (Unix seconds).
    ///
    /// # Errors
    /// Why it was not taken.
    pub fn check(&self, resource: &str, token: &str, now: u64) -> Result<Claims, Rejected> {
        let (body, tag) = token.rsplit_once('.').ok_or(Rejected::Invalid)?;
        let rest = body.strip_prefix(ACCESS_PREFIX).ok_or(Rejected::Invalid)?;
        // One spelling per token: lowercase hex (found by the hostile review: uppercase was
        // taken too).
        if tag.len() != 64 || !tag.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f')) {
            return Err(Rejected::Invalid);
        }
        let mut expected = [0_u8; 32];
        for (i, byte) in expected.iter_mut().enumerate() {
            *byte = tag
                .get(2 * i..2 * i + 2)
                .and_then(|pair| u8::from_str_radix(pair, 16).ok())
                .ok_or(Rejected::Invalid)?;
        }
        self.mac(resource, body)
            .verify_slice(&expected)
            .map_err(|_| Rejected::Invalid)?;
        let mut parts = rest.split('.');
        let (Some(grant), Some(scopes), Some(expires), None) =
            (parts.next(), parts.next(), parts.next(), parts.next())
        else {
            return Err(Rejected::Invalid);
        };
        let scopes = scopes
            .parse()
            .ok()
            .and_then(Scopes::from_bits)
            .ok_or(Rejected::Invalid)?;
        let expires: u64 = expires.parse().map_err(|_| Rejected::Invalid)?;
        if expires <= now {
            return Err(Rejected::Expired);
        }
        Ok(Claims {
            grant: grant.to_owned(),
            scopes,
            expires,
        })
    }
}

/// Seconds since the Unix epoch now.
pub fn now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |since| since.as_secs())
}

/// Milliseconds since the Unix epoch.
pub fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |since| {
            u64::try_from(since.as_millis()).unwrap_or(u64::MAX)
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::auth::scope::Scope;

    const RESOURCE: &str = "https://home.example/mcp";

    fn key() -> SigningKey {
        SigningKey::from_hex(&"ab".repeat(32)).unwrap()
    }

    fn claims() -> Claims {
        Claims {
            grant: "g1234".into(),
            scopes: Scopes::of([Scope::Read, Scope::Control]),
            expires: 1_000,
        }
    }

    #[test]
    fn a_signed_token_checks_out_for_its_resource_only_until_it_expires() {
        let token = key().sign(RESOURCE, &claims());
        assert!(token.starts_with("zat1.g1234.3.1000."), "{token}");
        assert_eq!(key().check(RESOURCE, &token, 999), Ok(claims()));
        assert_eq!(key().check(RESOURCE, &token, 1_000), Err(Rejected::Expired));
        assert_eq!(
            key().check("https://other.example/mcp", &token, 999),
            Err(Rejected::Invalid)
        );
        let other = SigningKey::from_hex(&"cd".repeat(32)).unwrap();
        assert_eq!(other.check(RESOURCE, &token, 999), Err(Rejected::Invalid));
    }

    #[test]
    fn an_altered_token_is_invalid() {
        let token = key().sign(RESOURCE, &claims());
        let more_scopes = token.replacen(".3.", ".15.", 1);
        let later = token.replacen(".1000.", ".9999.", 1);
        let other_grant = token.replacen("g1234", "g1235", 1);
        for altered in [
            more_scopes,
            later,
            other_grant,
            format!("{token}0"),
            token[..token.len() - 1].to_owned(),
            token.replacen("zat1.", "zat2.", 1),
            String::new(),
            "zat1.".into(),
            "zat1.a.b.c.d.e".into(),
            format!("{}ü", &token[..token.len() - 2]),
            format!(
                "{}{}",
                &token[..token.len() - 64],
                token[token.len() - 64..].to_uppercase()
            ),
        ] {
            assert_eq!(
                key().check(RESOURCE, &altered, 999),
                Err(Rejected::Invalid),
                "{altered}"
            );
        }
    }

    #[test]
    fn pkce_s256_as_rfc_7636_appendix_b_has_it() {
        let verifier = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk";
        let challenge = "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM";
        assert!(is_verifier(verifier) && is_challenge(challenge));
        assert!(pkce_matches(verifier, challenge));
        assert!(!pkce_matches(
            "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXK",
            challenge
        ));
        assert!(!is_verifier("short"));
        assert!(!is_verifier(&"a".repeat(129)));
        assert!(!is_verifier(&format!("{}+", "a".repeat(43))));
        assert!(!is_challenge(&format!("{challenge}=")));
    }

    #[test]
    fn keys_read_from_hex_and_never_print() {
        assert!(SigningKey::from_hex(&format!(" {}\n", "0f".repeat(32))).is_some());
        assert!(SigningKey::from_hex("0f0f").is_none());
        assert!(SigningKey::from_hex(&"zz".repeat(32)).is_none());
        assert_eq!(format!("{:?}", key()), "SigningKey(***)");
        assert_eq!(SigningKey::new_hex().len(), 64);
        assert_ne!(random_hex(16), random_hex(16));
        assert_eq!(
            digest("abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }
}
