//! Micro benchmarks (divan) of telling who sent an HTTP request, side by side: the owner's
//! key (`--http-token-file`, the static-token path) compared in constant time, and an access
//! token this server issued as its own OAuth authorization server (`--oauth-issuer`): its
//! HMAC checked, then its grant looked up in the book (which also looks, at most once a
//! second, whether another process changed the book's file).
//! Run: `cargo bench -p zwave-mcp-server --bench bearer`.
//!
//! The token is issued the way a client gets one: registration, the owner's approval on the
//! page, the code exchanged with PKCE, each through the authorization server's own handler.
#![expect(
    clippy::unwrap_used,
    reason = "a benchmark: a failed setup should stop it loudly"
)]

use std::{hint::black_box, path::PathBuf, sync::LazyLock, time::Duration};

use base64::Engine as _;
use hyper::{Request, http::request::Parts};
use serde_json::Value;
use sha2::Digest as _;
use zwave_mcp_server::auth::{AuthServer, AuthSettings, DocumentPolicy, Token};

const OWNER_KEY: &str = "bench-owner-key-0123456789abcdef";
const ISSUER: &str = "https://home.example";
const REDIRECT: &str = "http://127.0.0.1:45871/callback";
const VERIFIER: &str = "bench-verifier-0123456789abcdefghijklmnopqrstuvwxyz";

fn main() {
    divan::main();
}

/// The authorization server and an access token it issued for `read`.
static SIGNED_IN: LazyLock<(AuthServer, String)> = LazyLock::new(signed_in);

#[divan::bench]
fn owner_key(bencher: divan::Bencher) {
    let owner = Token::new(OWNER_KEY).unwrap();
    let header = format!("Bearer {OWNER_KEY}");
    bencher.bench(|| owner.admits(black_box(header.as_bytes())));
}

#[divan::bench]
fn issued_token(bencher: divan::Bencher) {
    let (auth, access) = &*SIGNED_IN;
    bencher.bench(|| auth.principal(black_box(access)).unwrap());
}

fn signed_in() -> (AuthServer, String) {
    let dir: PathBuf =
        std::env::temp_dir().join(format!("zwave-bench-bearer-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let settings = AuthSettings {
        issuer: ISSUER.into(),
        state_dir: dir,
        access_lifetime: Duration::from_secs(600),
        documents: DocumentPolicy::default(),
    };
    let owner = Token::new(OWNER_KEY).unwrap();
    let auth =
        AuthServer::open(&settings, "/mcp", owner, vec!["home.example".into()], None).unwrap();
    let registered = answer(
        &auth,
        "POST",
        "/oauth/register",
        &[("content-type", "application/json")],
        &serde_json::json!({"client_name": "Bench", "redirect_uris": [REDIRECT]}).to_string(),
    );
    let client = serde_json::from_str::<Value>(&registered.1).unwrap()["client_id"]
        .as_str()
        .unwrap()
        .to_owned();
    let challenge = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .encode(sha2::Sha256::digest(VERIFIER.as_bytes()));
    let query = form_urlencoded::Serializer::new(String::new())
        .append_pair("response_type", "code")
        .append_pair("client_id", &client)
        .append_pair("redirect_uri", REDIRECT)
        .append_pair("state", "s")
        .append_pair("code_challenge", &challenge)
        .append_pair("code_challenge_method", "S256")
        .append_pair("scope", "read")
        .finish();
    let (cookie, page) = answer(&auth, "GET", &format!("/oauth/authorize?{query}"), &[], "");
    let mut form = form_urlencoded::Serializer::new(String::new());
    let fields = page.split("</form>").next().unwrap();
    for input in fields.split("<input type=\"hidden\" ").skip(1) {
        let value_of = |attribute: &str| {
            input
                .split(&format!("{attribute}=\""))
                .nth(1)
                .unwrap()
                .split('"')
                .next()
                .unwrap()
                .replace("&quot;", "\"")
                .replace("&amp;", "&")
        };
        form.append_pair(&value_of("name"), &value_of("value"));
    }
    let body = form
        .append_pair("scope.read", "on")
        .append_pair("owner_key", OWNER_KEY)
        .append_pair("decision", "approve")
        .finish();
    let (location, _) = answer(
        &auth,
        "POST",
        "/oauth/authorize",
        &[
            ("content-type", "application/x-www-form-urlencoded"),
            ("cookie", &cookie),
            ("origin", ISSUER),
        ],
        &body,
    );
    let code = form_urlencoded::parse(location.split_once('?').unwrap().1.as_bytes())
        .find(|(name, _)| name == "code")
        .unwrap()
        .1
        .into_owned();
    let body = form_urlencoded::Serializer::new(String::new())
        .append_pair("grant_type", "authorization_code")
        .append_pair("client_id", &client)
        .append_pair("code", &code)
        .append_pair("redirect_uri", REDIRECT)
        .append_pair("code_verifier", VERIFIER)
        .finish();
    let (_, tokens) = answer(
        &auth,
        "POST",
        "/oauth/token",
        &[("content-type", "application/x-www-form-urlencoded")],
        &body,
    );
    let access = serde_json::from_str::<Value>(&tokens).unwrap()["access_token"]
        .as_str()
        .unwrap()
        .to_owned();
    (auth, access)
}

/// The authorization server's answer to one request: its `Set-Cookie` (the first, as
/// `name=value`) or `Location`, and its body.
fn answer(
    auth: &AuthServer,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &str,
) -> (String, String) {
    let mut request = Request::builder()
        .method(method)
        .uri(path)
        .header("host", "home.example");
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    let parts: Parts = request.body(()).unwrap().into_parts().0;
    let response = auth.answer(&parts, body.as_bytes(), Some("127.0.0.1"));
    let header = |name| {
        response.headers().get(name).map(|value| {
            value
                .to_str()
                .unwrap()
                .split(';')
                .next()
                .unwrap()
                .to_owned()
        })
    };
    let kept = header("set-cookie")
        .or_else(|| header("location"))
        .unwrap_or_default();
    let body = futures_util::FutureExt::now_or_never(http_body_util::BodyExt::collect(
        response.into_body(),
    ))
    .unwrap()
    .unwrap()
    .to_bytes();
    (kept, String::from_utf8(body.to_vec()).unwrap())
}
