//! The authorization server's machine endpoints: RFC 9728 and RFC 8414 metadata, the token
//! endpoint (the code with PKCE S256;
//! refresh tokens rotated at each use, a reused one ending its grant), and revocation
//! (RFC 7009).

use bytes::Bytes;
use http_body_util::Full;
use hyper::{
    Response, StatusCode,
    header::{CACHE_CONTROL, CONTENT_TYPE, HeaderValue, PRAGMA},
};
use serde_json::{Value, json};

use crate::state::StateError;

use super::{
    AuthServer,
    book::{self, Grant, Records},
    form::Params,
    html,
    scope::{Scope, Scopes},
    secret::{self, Claims},
};

/// How long a refresh token used already is remembered (a reuse then ends the grant).
const RETIRED_KEPT: usize = 8;

/// A JSON answer.
pub(super) fn json(status: StatusCode, value: &Value) -> Response<Full<Bytes>> {
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
    pub(super) status: StatusCode,
    pub(super) code: &'static str,
    pub(super) why: String,
}

impl OAuthError {
    pub(super) fn new(code: &'static str, why: impl Into<String>) -> Self {
        Self {
            status: StatusCode::BAD_REQUEST,
            code,
            why: why.into(),
        }
    }

    pub(super) fn answer(&self) -> Response<Full<Bytes>> {
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
            "client_id_metadata_document_supported": true,
        }),
    )
}

impl AuthServer {
    /// Tokens for `grant` with `scopes`: an access token and a new refresh token, whose
    /// digest the grant keeps, with when and from where (`peer`) they were issued.
    fn issue(&self, grant: &mut Grant, scopes: Scopes, peer: Option<&str>) -> Value {
        let refresh = format!("zrt1.{}.{}", grant.id, secret::random_hex(32));
        let lifetime = self.access_lifetime.as_secs();
        let access = self.key.sign(
            &self.resource,
            &Claims {
                grant: grant.id.clone(),
                scopes,
                expires: secret::now() + lifetime,
            },
        );
        grant.refresh = Some(secret::digest(&refresh));
        grant.last_used_at = secret::now();
        grant.last_from = peer.map(str::to_owned);
        json!({
            "access_token": access,
            "token_type": "Bearer",
            "expires_in": lifetime,
            "refresh_token": refresh,
            "scope": scopes.to_string(),
        })
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
                why: "client_id is missing: this server's clients are public and name themselves"
                    .into(),
            })?;
            // Claude's documented signal to register again (RFC 6749 §5.2): a client this
            // server no longer keeps gets 401 `invalid_client`, not a dead end.
            if !book::is_document_url(client_id) && !auth.book.knows_client(client_id) {
                return Err(OAuthError {
                    status: StatusCode::UNAUTHORIZED,
                    code: "invalid_client",
                    why: format!(
                        "the client {:?} is not registered here (or no longer is): register again",
                        common::clip(client_id, 80)
                    ),
                });
            }
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
    let id =
        grant_in(code, "zac1.").ok_or_else(|| invalid("the code is not one of this server's"))?;
    let digest = secret::digest(code);
    if !auth.book.has_grant_now(id) {
        return Err(invalid("the code is unknown, or its grant was revoked"));
    }
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
            auth.record(
                &format!("the client {client_id}"),
                "redeemed a code a second time",
                &format!("refused: the grant {id} it made is revoked"),
            );
            records.revoke(id);
            tracing::warn!(
                grant = id,
                "an authorization code was used twice: its grant is revoked"
            );
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
        let scopes = grant.scopes;
        let tokens = auth.issue(grant, scopes, peer);
        let who = format!("the client {:?} (grant {id})", grant.client_name);
        auth.record(
            &who,
            &format!("signed in from {}", peer.unwrap_or("?")),
            &format!("tokens issued for {}", grant.scopes),
        );
        replace_earlier_grants(auth, records, client_id, id, &who);
        Ok::<_, OAuthError>((true, Ok(tokens)))
    })?
}

/// The grants `client_id` held before `id`, ended now that it holds `id`'s tokens: one app
/// holds one grant, so the page of grants shows it once and one revocation cuts it off (a
/// step-up would otherwise leave its earlier, narrower grant alive beside the new one).
fn replace_earlier_grants(
    auth: &AuthServer,
    records: &mut Records,
    client_id: &str,
    id: &str,
    who: &str,
) {
    let earlier: Vec<String> = records
        .grants
        .iter()
        .filter(|grant| grant.client_id == client_id && grant.id != id)
        .map(|grant| grant.id.clone())
        .collect();
    for old in earlier {
        records.revoke(&old);
        auth.record(
            who,
            &format!("replaced the client's earlier grant {old}"),
            "revoked: an app holds one grant",
        );
    }
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
                format!(
                    "{:?} is not a scope of this server",
                    common::clip(&word, 40)
                ),
            )
        })?;
    let id = grant_in(token, "zrt1.")
        .ok_or_else(|| invalid("the refresh token is not one of this server's"))?;
    let digest = secret::digest(token);
    if !auth.book.has_grant_now(id) {
        return Err(invalid(
            "the refresh token is unknown, or its grant was revoked",
        ));
    }
    auth.book.change(|records: &mut Records| {
        let Some(grant) = records.grant_mut(id) else {
            return Ok((false, Err(invalid("the refresh token is unknown, or its grant was revoked"))));
        };
        if grant.client_id != client_id {
            return Ok((false, Err(invalid("the refresh token was issued to another client"))));
        }
        if grant.retired.iter().any(|old| secret::same(old, &digest)) {
            auth.record(
                &format!("the client {:?} (grant {id})", grant.client_name),
                "used a refresh token a second time",
                "refused: the grant is revoked",
            );
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
        grant.retired.push(digest);
        if grant.retired.len() > RETIRED_KEPT {
            grant.retired.remove(0);
        }
        Ok::<_, OAuthError>((true, Ok(auth.issue(grant, scopes, peer))))
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
                grant
                    .refresh
                    .as_deref()
                    .is_some_and(|now| secret::same(now, digest))
                    || grant.retired.iter().any(|old| secret::same(old, digest))
            });
            if !holds || client_id.is_some_and(|client| client != grant.client_id) {
                return Ok((false, false));
            }
            Ok::<_, StateError>((records.revoke(&id), true))
        });
        match revoked {
            Ok(true) => {
                tracing::info!(grant = %id, "a client revoked its grant");
                auth.record(
                    &format!("a client (grant {id})"),
                    "revoked its own grant",
                    "revoked",
                );
            }
            Ok(false) => {}
            Err(err) => return OAuthError::from(err).answer(),
        }
    }
    let mut answer = json(StatusCode::OK, &json!({}));
    html::secure(answer.headers_mut());
    answer
}
