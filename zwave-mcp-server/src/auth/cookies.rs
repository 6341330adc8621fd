//! The pages' cookies, both `HttpOnly; SameSite=Strict; Path=/oauth` (and `Secure` behind an
//! https issuer): the CSRF value every form repeats (`zmcp_csrf`), and the owner's session on
//! the grants page (`zmcp_owner`: its expiry, signed, so that any process on the state
//! directory takes it, and none needs to keep it).

use bytes::Bytes;
use http_body_util::Full;
use hyper::{
    Response,
    header::{COOKIE, HeaderValue, SET_COOKIE},
    http::request::Parts,
};

use super::{AuthServer, secret};

/// The CSRF cookie.
const CSRF: &str = "zmcp_csrf";
/// The owner's session cookie.
const OWNER: &str = "zmcp_owner";
/// What the CSRF value is signed for.
const CSRF_PURPOSE: &str = "csrf";
/// What the owner's session is signed for.
const OWNER_PURPOSE: &str = "owner-session";
/// How long the owner stays signed in on the grants page.
pub const OWNER_SESSION_SECS: u64 = 3600;

/// The value of the cookie `name` the browser sent, when it has `shape`.
fn cookie<'a>(parts: &'a Parts, name: &str, shape: impl Fn(&str) -> bool) -> Option<&'a str> {
    parts
        .headers
        .get_all(COOKIE)
        .iter()
        .filter_map(|value| value.to_str().ok())
        .flat_map(|value| value.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .find(|(found, value)| *found == name && shape(value))
        .map(|(_, value)| value)
}

/// The CSRF value of the browser's cookie, if it sent one of ours: a random value and this
/// server's tag of it (found by the hostile review: a bare random value was taken from any
/// cookie, and a page on another port of the same host can set one, as cookies are not kept
/// apart by port).
pub fn csrf(auth: &AuthServer, parts: &Parts) -> Option<String> {
    // The first of ours among all the browser sent: one planted before it (another port's
    // page can set `zmcp_csrf=x` on a longer path, which browsers send first) is passed over.
    cookie(parts, CSRF, |value| {
        value.len() <= 160
            && value.split_once('.').is_some_and(|(random, tag)| {
                random.len() == 64
                    && random.bytes().all(|b| b.is_ascii_hexdigit())
                    && auth.key.tagged(CSRF_PURPOSE, random, tag)
            })
    })
    .map(str::to_owned)
}

/// The browser's CSRF value, or a new one (set on `response` by [`keep_csrf`]).
pub fn csrf_or_new(auth: &AuthServer, parts: &Parts) -> String {
    csrf(auth, parts).unwrap_or_else(|| {
        let random = secret::random_hex(32);
        let tag = auth.key.tag(CSRF_PURPOSE, &random);
        format!("{random}.{tag}")
    })
}

fn attributes(auth: &AuthServer, max_age: Option<u64>) -> String {
    let secure = if auth.issuer.starts_with("https:") {
        "; Secure"
    } else {
        ""
    };
    let age = max_age
        .map(|secs| format!("; Max-Age={secs}"))
        .unwrap_or_default();
    format!("Path=/oauth; HttpOnly; SameSite=Strict{secure}{age}")
}

/// Sets the CSRF cookie to `value` on `response`.
pub fn keep_csrf(auth: &AuthServer, response: &mut Response<Full<Bytes>>, value: &str) {
    if let Ok(cookie) =
        HeaderValue::from_str(&format!("{CSRF}={value}; {}", attributes(auth, None)))
    {
        response.headers_mut().append(SET_COOKIE, cookie);
    }
}

/// Whether the browser holds a live owner's session: the first `zmcp_owner` cookie whose tag
/// is this server's (found by the hostile review: a cookie planted by a page on another port,
/// sent first for a longer path, hid the owner's own), not expired, and of the owner's sessions
/// as they are now (a sign-out begins new ones, whatever the clocks say).
pub fn is_owner(auth: &AuthServer, parts: &Parts) -> bool {
    let generation = auth.book.owner_generation();
    let now = secret::now_ms();
    cookie(parts, OWNER, |value| {
        value.len() < 160
            && value.split_once('.').is_some_and(|(expires, tag)| {
                expires.parse::<u64>().is_ok_and(|at| at > now)
                    && auth
                        .key
                        .tagged(OWNER_PURPOSE, &format!("{expires}.{generation}"), tag)
            })
    })
    .is_some()
}

/// Starts the owner's session on `response`: its expiry (milliseconds), signed with the
/// owner's sessions' generation.
pub fn start_owner_session(auth: &AuthServer, response: &mut Response<Full<Bytes>>) {
    let expires = (secret::now_ms() + OWNER_SESSION_SECS * 1000).to_string();
    let generation = auth.book.owner_generation();
    let tag = auth
        .key
        .tag(OWNER_PURPOSE, &format!("{expires}.{generation}"));
    if let Ok(cookie) = HeaderValue::from_str(&format!(
        "{OWNER}={expires}.{tag}; {}",
        attributes(auth, Some(OWNER_SESSION_SECS))
    )) {
        response.headers_mut().append(SET_COOKIE, cookie);
    }
}

/// Ends the owner's session in this browser (the book ends it in every other).
pub fn end_owner_session(auth: &AuthServer, response: &mut Response<Full<Bytes>>) {
    if let Ok(cookie) = HeaderValue::from_str(&format!("{OWNER}=; {}", attributes(auth, Some(0)))) {
        response.headers_mut().append(SET_COOKIE, cookie);
    }
}
