//! Parameters of an authorization request (the query) or of a form (the body), read as OAuth
//! says: each at most once (RFC 6749 §3.1), an empty one as absent, and bounded.

use std::collections::BTreeMap;

/// The most parameters read.
const MAX_PARAMS: usize = 32;
/// The longest value kept, in bytes.
const MAX_VALUE_BYTES: usize = 4096;

/// Parameters by name.
#[derive(Debug, Default)]
pub struct Params(BTreeMap<String, String>);

impl Params {
    /// `text` (`a=1&b=2`, percent- and `+`-encoded) read.
    ///
    /// # Errors
    /// A parameter given twice, too many, or one too long: the words to show.
    pub fn parse(text: &[u8]) -> Result<Self, String> {
        let mut params = BTreeMap::new();
        for (name, value) in form_urlencoded::parse(text) {
            if value.is_empty() {
                continue;
            }
            if params.len() == MAX_PARAMS {
                return Err(format!("more than {MAX_PARAMS} parameters"));
            }
            if value.len() > MAX_VALUE_BYTES {
                return Err(format!(
                    "the parameter {:?} is longer than {MAX_VALUE_BYTES} bytes",
                    common::clip(&name, 40)
                ));
            }
            if params
                .insert(name.clone().into_owned(), value.into_owned())
                .is_some()
            {
                return Err(format!(
                    "the parameter {:?} is given more than once (RFC 6749 §3.1)",
                    common::clip(&name, 40)
                ));
            }
        }
        Ok(Self(params))
    }

    /// The value of `name`.
    pub fn get(&self, name: &str) -> Option<&str> {
        self.0.get(name).map(String::as_str)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parameters_are_read_once_each_and_bounded() {
        let params = Params::parse(b"client_id=abc&scope=read+control&state=&x=%3Cb%3E").unwrap();
        assert_eq!(params.get("scope"), Some("read control"));
        assert_eq!(params.get("x"), Some("<b>"));
        assert_eq!(params.get("state"), None);
        assert_eq!(
            Params::parse(b"code=1&code=2").unwrap_err(),
            "the parameter \"code\" is given more than once (RFC 6749 §3.1)"
        );
        let long = format!("state={}", "a".repeat(5000));
        assert_eq!(
            Params::parse(long.as_bytes()).unwrap_err(),
            "the parameter \"state\" is longer than 4096 bytes"
        );
        let many: Vec<String> = (0..40).map(|n| format!("p{n}=1")).collect();
        assert_eq!(
            Params::parse(many.join("&").as_bytes()).unwrap_err(),
            "more than 32 parameters"
        );
    }
}
