//! The owner's key (`--http-token-file`): the bearer token that gives everything the owner's
//! flags allow, and proves the owner on the approval page. It never prints, and is compared
//! in constant time.

use std::fmt;

use subtle::ConstantTimeEq as _;

/// The shortest token accepted: 16 characters (e.g. 8 random bytes in hex) is the floor; the
/// README suggests 32 random bytes.
pub const MIN_TOKEN_CHARS: usize = 16;

/// A bearer token. Its `Debug` hides it; it is compared in constant time.
#[derive(Clone)]
pub struct Token(String);

impl Token {
    /// The token `text` (its first line, trimmed), if it is long enough; else its length.
    ///
    /// # Errors
    /// The number of characters it has, when fewer than [`MIN_TOKEN_CHARS`].
    pub fn new(text: &str) -> Result<Self, usize> {
        let token = text.lines().next().unwrap_or_default().trim();
        let chars = token.chars().count();
        if chars < MIN_TOKEN_CHARS {
            return Err(chars);
        }
        Ok(Self(token.to_owned()))
    }

    /// Whether it has the shape of the access tokens this server issues (`zat1.`): with
    /// `--oauth-issuer` such a key would be taken for one of them.
    pub fn looks_issued(&self) -> bool {
        super::looks_issued(&self.0)
    }

    /// Whether an `Authorization` header's value carries this token (scheme `Bearer`, in any
    /// case). The comparison takes as long whatever prefix of the token is right.
    pub fn admits(&self, authorization: &[u8]) -> bool {
        let Some(credentials) = authorization
            .get(..7)
            .filter(|scheme| scheme.eq_ignore_ascii_case(b"bearer "))
            .and_then(|_| authorization.get(7..))
        else {
            return false;
        };
        bool::from(credentials.ct_eq(self.0.as_bytes()))
    }
}

impl fmt::Debug for Token {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Token(***)")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_token_admits_only_its_own_bearer_header() {
        let token = Token::new("0123456789abcdef0123\n").unwrap();
        assert!(token.admits(b"Bearer 0123456789abcdef0123"));
        assert!(token.admits(b"bearer 0123456789abcdef0123"));
        assert!(!token.admits(b"Bearer 0123456789abcdef012"));
        assert!(!token.admits(b"Bearer 0123456789abcdef01234"));
        assert!(!token.admits(b"Basic 0123456789abcdef0123"));
        assert!(!token.admits(b"0123456789abcdef0123"));
        assert!(!token.admits(b"Bearer"));
        assert!(!token.admits(b""));
        assert_eq!(format!("{token:?}"), "Token(***)");
    }

    #[test]
    fn a_short_token_is_refused_with_its_length() {
        assert_eq!(Token::new("secret").err(), Some(6));
        assert_eq!(Token::new("  \n0123456789abcdef").err(), Some(0));
    }
}
