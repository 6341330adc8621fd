//! [`check`]: which addresses signing in may use. OAuth 2.1 (section 1.5) and MCP authorization
//! ("Communication Security") want every authorization-server endpoint, and the protected
//! resource a token goes to, served over https; http only to this machine, where nothing
//! crosses a network (a loopback redirect, a server under test). And a person is sent only to
//! a web page: an authorization address of `javascript:`, `file:` or `data:` is never shown
//! as one to open.

/// What is said instead of an address too long or too odd to show whole.
const SHOWN_CHARS: usize = 120;

/// Whether `address`, the `what` of a sign-in (such as "the token endpoint"), may carry it:
/// https anywhere, http to a loopback host (127.0.0.0/8, ::1, `localhost`).
///
/// # Errors
/// A message naming `what`, the address (clipped), its scheme or host, and what is accepted.
pub(super) fn check(what: &str, address: &str) -> Result<(), String> {
    let shown = common::printable(&common::clip(address, SHOWN_CHARS)).into_owned();
    let parsed = reqwest::Url::parse(address)
        .map_err(|err| format!("{what} `{shown}` is not an address ({err})"))?;
    match parsed.scheme() {
        "https" => Ok(()),
        "http" if is_loopback(&parsed) => Ok(()),
        "http" => Err(format!(
            "{what} `{shown}` is plain http to another machine ({host}): OAuth 2.1 and MCP authorization send tokens, codes and client secrets only over https, where nobody on the way can read them; use its https:// address (plain http is accepted only to this machine: 127.0.0.1, ::1 or localhost)",
            host = parsed.host_str().unwrap_or_default()
        )),
        scheme => Err(format!(
            "{what} `{shown}` has the scheme `{scheme}`, not a web address: signing in uses only https:// addresses (and http:// to this machine: 127.0.0.1, ::1 or localhost)"
        )),
    }
}

/// Whether `url`'s host is this machine.
fn is_loopback(url: &reqwest::Url) -> bool {
    // The URL parser has lowercased the name and written an IPv4 address out in full.
    let Some(host) = url.host_str() else {
        return false;
    };
    let bare = host.trim_start_matches('[').trim_end_matches(']');
    match bare.parse::<std::net::IpAddr>() {
        Ok(ip) => ip.is_loopback(),
        Err(_) => matches!(host, "localhost" | "localhost."),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn https_anywhere_and_http_to_this_machine_are_accepted() {
        for address in [
            "https://auth.example/authorize?x=1",
            "http://127.0.0.1:8080/token",
            "http://127.9.9.9/token",
            "http://127.1/token",
            "http://[::1]:9/token",
            "http://localhost:3000/mcp",
            "HTTP://LOCALHOST/mcp",
        ] {
            assert_eq!(check("the token endpoint", address), Ok(()), "{address}");
        }
    }

    #[test]
    fn an_address_that_is_not_a_web_page_is_refused_naming_its_scheme() {
        for (address, scheme) in [
            ("javascript:alert(document.cookie)", "javascript"),
            ("file:///etc/passwd", "file"),
            ("data:text/html,<script>x</script>", "data"),
            ("ftp://auth.example/authorize", "ftp"),
        ] {
            assert_eq!(
                check("the authorization address", address).unwrap_err(),
                format!(
                    "the authorization address `{address}` has the scheme `{scheme}`, not a web address: signing in uses only https:// addresses (and http:// to this machine: 127.0.0.1, ::1 or localhost)"
                )
            );
        }
    }

    #[test]
    fn plain_http_to_another_machine_is_refused_saying_why() {
        assert_eq!(
            check("the server's `url`", "http://home.example/mcp").unwrap_err(),
            "the server's `url` `http://home.example/mcp` is plain http to another machine (home.example): OAuth 2.1 and MCP authorization send tokens, codes and client secrets only over https, where nobody on the way can read them; use its https:// address (plain http is accepted only to this machine: 127.0.0.1, ::1 or localhost)"
        );
        // A loopback address as the user part of another host is that other host.
        let err = check("the token endpoint", "http://127.0.0.1@evil.example/token").unwrap_err();
        assert!(err.contains("(evil.example)"), "{err}");
        assert!(check("the token endpoint", "http://192.168.1.5/token").is_err());
    }

    #[test]
    fn an_unreadable_or_endless_address_is_refused_and_shown_clipped_and_printable() {
        let err = check("the token endpoint", "not an address").unwrap_err();
        assert_eq!(
            err,
            "the token endpoint `not an address` is not an address (relative URL without a base)"
        );
        let long = format!("javascript:\u{1b}[2J{}", "a".repeat(500));
        let err = check("the authorization address", &long).unwrap_err();
        assert!(!err.contains('\u{1b}'), "{err}");
        assert!(err.len() < 400, "{err}");
    }
}
