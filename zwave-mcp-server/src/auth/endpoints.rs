//! The authorization server's machine endpoints: RFC 9728 and RFC 8414 metadata, dynamic
//! registration (RFC 7591) within bounds, the token endpoint (the code with PKCE S256;
//! refresh tokens rotated at each use, a reused one ending its grant), and revocation
//! (RFC 7009).

use std::time::{Duration, Instant};

use bytes::Bytes;
use http_body_util::Full;
use hyper::{
    Response, StatusCode,
    header::{CACHE_CONTROL, CONTENT_TYPE, HeaderValue, PRAGMA},
};
use serde_json::{Value, json};

use super::{
    AuthServer,
    book::{Client, Records},
    form::Params,
    html,
    scope::{Scope, Scopes},
    secret::{self, Claims},
    state::StateError,
};

/// The most clients registered at once.
pub const MAX_CLIENTS: usize = 256;
/// A client registered this long ago that was never granted anything makes room for a new one.
pub const UNUSED_CLIENT_AGE: Duration = Duration::from_secs(3600);
/// The most registrations a minute.
pub const MAX_REGISTRATIONS_A_MINUTE: u32 = 30;
/// The most redirect URIs one client registers.
pub const MAX_REDIRECT_URIS: usize = 8;
/// The longest redirect URI, in bytes.
pub const MAX_REDIRECT_URI_BYTES: usize = 512;
/// The longest client name kept, in characters.
pub const MAX_CLIENT_NAME_CHARS: usize = 80;
/// How long a refresh token used already is remembered (a reuse then ends the grant).
const RETIRED_KEPT: usize = 8;

/// A JSON answer.
fn json(status: StatusCode, value: &Value) -> Response<Full<Bytes>> {
    let mut response = Response::new(Full::new(Bytes::from(value.to_string())));
    *response.status_mut() = status;
    let headers = response.headers_mut();
    headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    headers.insert(CACHE_CONTROL, HeaderValue::from_static("no-store"));
    headers.insert(PRAGMA, HeaderValue::from_static("no-cache"));
    response
}

/// An OAuth error (RFC 6749 §5.2): its code and the words saying why.
#[derive(Debug)]
pub struct OAuthError {
    status: StatusCode,
    code: &'static str,
    why: String,
}

impl OAuthError {
    fn new(code: &'static str, why: impl Into<String>) -> Self {
        Self {
            status: StatusCode::BAD_REQUEST,
            code,
            why: why.into(),
        }
    }

    fn answer(&self) -> Response<Full<Bytes>> {
        json(
            self.status,
            &json!({"error": self.code, "error_description": self.why}),
        )
    }
}

impl From<StateError> for OAuthError {
    fn from(err: StateError) -> Self {
        tracing::error!(error = %err, "the OAuth state could not be used");
        Self {
            status: StatusCode::INTERNAL_SERVER_ERROR,
            code: "server_error",
            why: "the server's grants could not be read or written: its log says why".into(),
        }
    }
}

/// 404 for a path under `/oauth/` or `/.well-known/` this server does not serve.
pub fn not_found(path: &str) -> Response<Full<Bytes>> {
    json(
        StatusCode::NOT_FOUND,
        &json!({"error": "not_found", "error_description": format!("nothing is served at {:?}", common::clip(path, 80))}),
    )
}

/// RFC 9728: what the resource is, and who issues its tokens.
pub fn resource_metadata(auth: &AuthServer) -> Response<Full<Bytes>> {
    json(
        StatusCode::OK,
        &json!({
            "resource": auth.resource,
            "authorization_servers": [auth.issuer],
            "scopes_supported": Scope::ALL.map(Scope::name),
            "bearer_methods_supported": ["header"],
            "resource_name": "Z-Wave home (zwave-mcp-server)",
        }),
    )
}

/// RFC 8414: the authorization server's endpoints and what it supports.
pub fn server_metadata(auth: &AuthServer) -> Response<Full<Bytes>> {
    let at = |path: &str| format!("{}{path}", auth.issuer);
    json(
        StatusCode::OK,
        &json!({
            "issuer": auth.issuer,
            "authorization_endpoint": at("/oauth/authorize"),
            "token_endpoint": at("/oauth/token"),
            "registration_endpoint": at("/oauth/register"),
            "revocation_endpoint": at("/oauth/revoke"),
            "scopes_supported": Scope::ALL.map(Scope::name),
            "response_types_supported": ["code"],
            "response_modes_supported": ["query"],
            "grant_types_supported": ["authorization_code", "refresh_token"],
            "code_challenge_methods_supported": ["S256"],
            "token_endpoint_auth_methods_supported": ["none"],
            "revocation_endpoint_auth_methods_supported": ["none"],
            "authorization_response_iss_parameter_supported": true,
            "client_id_metadata_document_supported": false,
        }),
    )
}

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
    if uri.chars().any(|c| c.is_control() || c.is_whitespace()) || uri.contains('#') {
        return Some(format!(
            "the redirect URI {} holds a space, a control character or a fragment (#)",
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
    match scheme.as_str() {
        "https" if rest.starts_with("//") && rest.len() > 2 => None,
        "http" if loopback_authority(rest).is_some() => None,
        "http" => Some(format!(
            "the redirect URI {} is plain http to another machine: use https (plain http only to 127.0.0.1, [::1] or localhost)",
            shown()
        )),
        "javascript" | "data" | "file" | "vbscript" | "blob" | "about" | "ws" | "wss" | "ftp"
        | "https" => Some(format!(
            "the redirect URI {} has a scheme a browser would not hand back to an app",
            shown()
        )),
        _ => None,
    }
}

/// The host of an `http:` URI's rest (`//127.0.0.1:8080/cb`) when it is a loopback one.
fn loopback_authority(rest: &str) -> Option<&str> {
    let authority = rest.strip_prefix("//")?;
    let authority = authority
        .split(['/', '?'])
        .next()
        .unwrap_or_default();
    if authority.contains('@') {
        return None;
    }
    let host = if let Some(v6) = authority.strip_prefix('[') {
        v6.split_once(']').map(|(host, _)| host)?
    } else {
        authority.split(':').next().unwrap_or_default()
    };
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
        Some(format!("http://{host}{}", &after[path_at..]))
    };
    matches!((without_port(registered), without_port(given)), (Some(a), Some(b)) if a == b)
}

/// `POST /oauth/register`: a client registers itself (RFC 7591). Only public clients
/// (`token_endpoint_auth_method: none`) with the code and refresh grants.
pub fn register(auth: &AuthServer, body: &[u8]) -> Response<Full<Bytes>> {
    match registered(auth, body) {
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

fn registered(auth: &AuthServer, body: &[u8]) -> Result<Client, OAuthError> {
    let invalid = |why: String| OAuthError::new("invalid_client_metadata", why);
    let asked: Value = serde_json::from_slice(body)
        .map_err(|err| invalid(format!("the registration is not a JSON object: {err}")))?;
    let asked = asked
        .as_object()
        .ok_or_else(|| invalid("the registration is not a JSON object".into()))?;
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
            format!("redirect_uris lists {} URIs; at most {MAX_REDIRECT_URIS}", uris.len()),
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
    auth.count_registration()?;
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

/// Room for one more client: those never granted anything, registered over
/// [`UNUSED_CLIENT_AGE`] ago, go first; a book full of others refuses.
fn make_room(records: &mut Records, now: u64) -> Result<(), OAuthError> {
    if records.clients.len() < MAX_CLIENTS {
        return Ok(());
    }
    let granted: std::collections::HashSet<String> = records
        .grants
        .iter()
        .map(|grant| grant.client_id.clone())
        .collect();
    records.clients.retain(|client| {
        granted.contains(&client.id)
            || now.saturating_sub(client.registered_at) < UNUSED_CLIENT_AGE.as_secs()
    });
    if records.clients.len() < MAX_CLIENTS {
        return Ok(());
    }
    Err(OAuthError {
        status: StatusCode::SERVICE_UNAVAILABLE,
        code: "temporarily_unavailable",
        why: format!(
            "{MAX_CLIENTS} clients are registered, the most this server keeps: the owner can revoke unused ones, or try again in an hour"
        ),
    })
}

impl AuthServer {
    /// Counts a registration; refused past [`MAX_REGISTRATIONS_A_MINUTE`].
    fn count_registration(&self) -> Result<(), OAuthError> {
        let mut counted = self
            .registrations
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if counted.0.elapsed() > Duration::from_secs(60) {
            *counted = (Instant::now(), 0);
        }
        if counted.1 >= MAX_REGISTRATIONS_A_MINUTE {
            return Err(OAuthError {
                status: StatusCode::TOO_MANY_REQUESTS,
                code: "temporarily_unavailable",
                why: format!(
                    "more than {MAX_REGISTRATIONS_A_MINUTE} clients registered in the last minute: try again in a minute"
                ),
            });
        }
        counted.1 += 1;
        Ok(())
    }

    /// Tokens for the grant `id` with `scopes`: an access token and a new refresh token
    /// (whose digest the caller keeps).
    fn issue(&self, id: &str, scopes: Scopes) -> (Value, String) {
        let refresh = format!("zrt1.{id}.{}", secret::random_hex(32));
        let lifetime = self.access_lifetime.as_secs();
        let access = self.key.sign(
            &self.resource,
            &Claims {
                grant: id.to_owned(),
                scopes,
                expires: secret::now() + lifetime,
            },
        );
        let digest = secret::digest(&refresh);
        (
            json!({
                "access_token": access,
                "token_type": "Bearer",
                "expires_in": lifetime,
                "refresh_token": refresh,
                "scope": scopes.to_string(),
            }),
            digest,
        )
    }
}

/// The grant id inside a code or refresh token (`zac1.GRANT.SECRET`, `zrt1.GRANT.SECRET`).
fn grant_in<'a>(token: &'a str, prefix: &str) -> Option<&'a str> {
    let (grant, secret) = token.strip_prefix(prefix)?.split_once('.')?;
    (!grant.is_empty() && !secret.is_empty()).then_some(grant)
}

/// `POST /oauth/token`.
pub fn token(auth: &AuthServer, body: &[u8], peer: Option<&str>) -> Response<Full<Bytes>> {
    let answered = Params::parse(body)
        .map_err(|why| OAuthError::new("invalid_request", why))
        .and_then(|params| {
            let client_id = params.get("client_id").ok_or_else(|| OAuthError {
                status: StatusCode::UNAUTHORIZED,
                code: "invalid_client",
                why: "client_id is missing: this server's clients are public and name themselves".into(),
            })?;
            if let Some(resource) = params.get("resource")
                && resource != auth.resource
            {
                return Err(OAuthError::new(
                    "invalid_target",
                    format!("this server issues tokens for {} only", auth.resource),
                ));
            }
            match params.get("grant_type") {
                Some("authorization_code") => exchange(auth, &params, client_id, peer),
                Some("refresh_token") => refresh(auth, &params, client_id, peer),
                Some(other) => Err(OAuthError::new(
                    "unsupported_grant_type",
                    format!(
                        "grant_type {:?} is not supported (authorization_code, refresh_token)",
                        common::clip(other, 40)
                    ),
                )),
                None => Err(OAuthError::new("invalid_request", "grant_type is missing")),
            }
        });
    match answered {
        Ok(tokens) => json(StatusCode::OK, &tokens),
        Err(err) => err.answer(),
    }
}

/// The code for tokens, once (a second time ends the grant it made: RFC 6749 §4.1.2).
fn exchange(
    auth: &AuthServer,
    params: &Params,
    client_id: &str,
    peer: Option<&str>,
) -> Result<Value, OAuthError> {
    let invalid = |why: &str| OAuthError::new("invalid_grant", why);
    let code = params
        .get("code")
        .ok_or_else(|| OAuthError::new("invalid_request", "code is missing"))?;
    let verifier = params.get("code_verifier").ok_or_else(|| {
        OAuthError::new(
            "invalid_request",
            "code_verifier is missing: this server requires PKCE (S256)",
        )
    })?;
    let id = grant_in(code, "zac1.").ok_or_else(|| invalid("the code is not one of this server's"))?;
    let digest = secret::digest(code);
    auth.book.change(|records: &mut Records| {
        let refused = |why: &str| Ok((false, Err(invalid(why))));
        let Some(grant) = records.grant_mut(id) else {
            return refused("the code is unknown, or its grant was revoked");
        };
        let Some(pending) = grant
            .code
            .as_mut()
            .filter(|code| secret::same(&code.digest, &digest))
        else {
            return refused("the code is unknown, or its grant was revoked");
        };
        if pending.redeemed {
            records.revoke(id);
            tracing::warn!(grant = id, "an authorization code was used twice: its grant is revoked");
            return Ok((
                true,
                Err(invalid(
                    "the code was used already: the grant it made is revoked, sign in again",
                )),
            ));
        }
        if grant.client_id != client_id {
            return refused("the code was issued to another client");
        }
        if pending.expires_at <= secret::now() {
            return refused("the code expired (a code lasts a minute): sign in again");
        }
        if params
            .get("redirect_uri")
            .is_some_and(|given| given != pending.redirect_uri)
        {
            return refused("redirect_uri is not the one the code was issued for");
        }
        if !secret::is_verifier(verifier) || !secret::pkce_matches(verifier, &pending.challenge) {
            return refused("code_verifier does not match the code_challenge (PKCE S256)");
        }
        pending.redeemed = true;
        let (tokens, refresh) = auth.issue(id, grant.scopes);
        grant.refresh = Some(refresh);
        grant.last_used_at = secret::now();
        grant.last_from = peer.map(str::to_owned);
        Ok::<_, OAuthError>((true, Ok(tokens)))
    })?
}

/// A refresh token for new tokens, rotated (a used one, presented again, ends the grant).
fn refresh(
    auth: &AuthServer,
    params: &Params,
    client_id: &str,
    peer: Option<&str>,
) -> Result<Value, OAuthError> {
    let invalid = |why: &str| OAuthError::new("invalid_grant", why);
    let token = params
        .get("refresh_token")
        .ok_or_else(|| OAuthError::new("invalid_request", "refresh_token is missing"))?;
    let narrowed = params
        .get("scope")
        .map(Scopes::parse)
        .transpose()
        .map_err(|word| {
            OAuthError::new(
                "invalid_scope",
                format!("{:?} is not a scope of this server", common::clip(&word, 40)),
            )
        })?;
    let id = grant_in(token, "zrt1.").ok_or_else(|| invalid("the refresh token is not one of this server's"))?;
    let digest = secret::digest(token);
    auth.book.change(|records: &mut Records| {
        let Some(grant) = records.grant_mut(id) else {
            return Ok((false, Err(invalid("the refresh token is unknown, or its grant was revoked"))));
        };
        if grant.client_id != client_id {
            return Ok((false, Err(invalid("the refresh token was issued to another client"))));
        }
        if grant.retired.iter().any(|old| secret::same(old, &digest)) {
            records.revoke(id);
            tracing::warn!(grant = id, "a refresh token was used twice: its grant is revoked");
            return Ok((true, Err(invalid("the refresh token was used already (each is used once): the grant is revoked, sign in again"))));
        }
        if !grant.refresh.as_deref().is_some_and(|now| secret::same(now, &digest)) {
            return Ok((false, Err(invalid("the refresh token is unknown, or its grant was revoked"))));
        }
        let scopes = match narrowed {
            Some(asked) if asked.and(grant.scopes) != asked => {
                return Ok((false, Err(OAuthError::new("invalid_scope", format!("the grant does not include {asked}; it has {}", grant.scopes)))));
            }
            Some(asked) => asked,
            None => grant.scopes,
        };
        let (tokens, refresh) = auth.issue(id, scopes);
        grant.retired.push(digest);
        if grant.retired.len() > RETIRED_KEPT {
            grant.retired.remove(0);
        }
        grant.refresh = Some(refresh);
        grant.last_used_at = secret::now();
        grant.last_from = peer.map(str::to_owned);
        Ok::<_, OAuthError>((true, Ok(tokens)))
    })?
}

/// `POST /oauth/revoke` (RFC 7009): any token of a grant ends the grant (an access token is
/// checked without its expiry; an unknown token is answered 200 too, as the RFC says).
pub fn revoke(auth: &AuthServer, body: &[u8]) -> Response<Full<Bytes>> {
    let params = match Params::parse(body) {
        Ok(params) => params,
        Err(why) => return OAuthError::new("invalid_request", why).answer(),
    };
    let Some(token) = params.get("token") else {
        return OAuthError::new("invalid_request", "token is missing").answer();
    };
    let grant = if token.starts_with(super::secret::ACCESS_PREFIX) {
        auth.key
            .check(&auth.resource, token, 0)
            .ok()
            .map(|claims| (claims.grant, None))
    } else {
        grant_in(token, "zrt1.").map(|id| (id.to_owned(), Some(secret::digest(token))))
    };
    if let Some((id, digest)) = grant {
        let client_id = params.get("client_id");
        let revoked = auth.book.change(|records: &mut Records| {
            let Some(grant) = records.grant_mut(&id) else {
                return Ok((false, false));
            };
            let holds = digest.as_ref().is_none_or(|digest| {
                grant.refresh.as_deref().is_some_and(|now| secret::same(now, digest))
                    || grant.retired.iter().any(|old| secret::same(old, digest))
            });
            if !holds || client_id.is_some_and(|client| client != grant.client_id) {
                return Ok((false, false));
            }
            Ok::<_, StateError>((records.revoke(&id), true))
        });
        match revoked {
            Ok(true) => tracing::info!(grant = %id, "a client revoked its grant"),
            Ok(false) => {}
            Err(err) => return OAuthError::from(err).answer(),
        }
    }
    let mut answer = json(StatusCode::OK, &json!({}));
    html::secure(answer.headers_mut());
    answer
}

#[cfg(test)]
mod tests {
    use super::*;

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
            ("http://home.example/cb", "is plain http to another machine: use https"),
            ("http://127.0.0.1.evil.example/cb", "is plain http to another machine"),
            ("http://127.0.0.1@evil.example/cb", "is plain http to another machine"),
            ("javascript:alert(1)", "has a scheme a browser would not hand back"),
            ("https:relative", "has a scheme a browser would not hand back"),
            ("https://a.example/cb#frag", "holds a space, a control character or a fragment"),
            ("/relative", "is not absolute"),
            ("1http://x", "is not absolute"),
        ] {
            let why = bad_redirect_uri(bad).unwrap_or_else(|| panic!("{bad} taken"));
            assert!(why.contains(words), "{bad}: {why}");
        }
        let long = format!("https://a.example/{}", "a".repeat(600));
        assert!(bad_redirect_uri(&long).unwrap().contains("longer than 512 bytes"));
    }

    #[test]
    fn a_redirect_uri_matches_exactly_or_on_another_loopback_port() {
        assert!(redirect_matches("https://a.example/cb", "https://a.example/cb"));
        assert!(!redirect_matches("https://a.example/cb", "https://a.example/cb/"));
        assert!(!redirect_matches("https://a.example/cb", "https://a.example/cB"));
        assert!(!redirect_matches("https://a.example:443/cb", "https://a.example:444/cb"));
        assert!(redirect_matches("http://127.0.0.1:1000/cb", "http://127.0.0.1:2000/cb"));
        assert!(redirect_matches("http://127.0.0.1/cb", "http://127.0.0.1:2000/cb"));
        assert!(!redirect_matches("http://127.0.0.1:1000/cb", "http://127.0.0.1:2000/other"));
        assert!(!redirect_matches("http://127.0.0.1:1000/cb", "http://localhost:1000/cb"));
    }
}
