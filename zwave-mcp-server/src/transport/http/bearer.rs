//! Who sent a request, by its bearer token: the holder of the owner's key
//! (`--http-token-file`), a client the owner granted (a token this server issued, with
//! `--oauth-issuer`), or anyone, on loopback without a key. A request without one of those
//! gets 401 saying where to sign in (RFC 6750, RFC 9728); a granted client's request beyond
//! its grant gets 403 `insufficient_scope` naming the scope it needs, so that it can ask for
//! more.

use std::sync::{Arc, Mutex, PoisonError};

use hyper::{
    Request, StatusCode,
    header::{AUTHORIZATION, HeaderValue, RETRY_AFTER, WWW_AUTHENTICATE},
};

use super::{
    Token,
    reply::{HttpResponse, json_refusal, refusal},
};
use crate::auth::{
    AuthServer, Counts, MAX_WRONG_KEYS, Principal, Refused, Scope, Scopes, for_tool, looks_issued,
};

/// Tells who sent a request.
#[derive(Debug, Clone, Default)]
pub struct Doorman {
    /// The owner's key, when there is one.
    pub owner: Option<Arc<Token>>,
    /// This server's authorization server, when it is one.
    pub auth: Option<Arc<AuthServer>>,
    /// Wrong keys this minute, by address.
    pub guesses: Arc<Mutex<Counts>>,
}

impl Doorman {
    /// Who sent `request` (from the address `peer`), or the 401 it gets. A token this server
    /// issued is checked by its signature; anything else sent as a token is the owner's key
    /// or a guess at it, and past [`MAX_WRONG_KEYS`] wrong ones a minute from one address,
    /// that address gets 429 without its key being looked at (found by the hostile review:
    /// the pages counted wrong keys, `/mcp` let the same key be guessed without end).
    /// Nothing of the request is logged (a wrong token may be a right one mistyped).
    pub fn principal<B>(
        &self,
        request: &Request<B>,
        peer: Option<&str>,
    ) -> Result<Principal, Box<HttpResponse>> {
        let Some(owner) = &self.owner else {
            return Ok(Principal::Owner);
        };
        let Some(header) = request.headers().get(AUTHORIZATION) else {
            return Err(Box::new(self.unauthorized(request, None)));
        };
        let bearer = Some(header.as_bytes())
            .and_then(|value| value.get(..7).zip(value.get(7..)))
            .filter(|(scheme, _)| scheme.eq_ignore_ascii_case(b"bearer "))
            .and_then(|(_, token)| std::str::from_utf8(token).ok());
        if let (Some(auth), Some(token)) = (&self.auth, bearer) {
            match auth.principal(token) {
                Ok(principal) => return Ok(principal),
                Err(Refused::Invalid) if !looks_issued(token) => {}
                // A token of this server's shape, spent or not (any more) this server's: the
                // client is told to sign in again, never held back (found by the hostile
                // review: a host whose state was lost got 429 and no challenge).
                // (The owner's key never has that shape with `--oauth-issuer`.)
                Err(refused) => return Err(Box::new(self.unauthorized(request, Some(refused)))),
            }
        }
        let source = peer.unwrap_or("?");
        let mut guesses = self.guesses.lock().unwrap_or_else(PoisonError::into_inner);
        let guesses = guesses.now();
        if guesses.of(source) >= MAX_WRONG_KEYS {
            let mut refused = refusal(
                StatusCode::TOO_MANY_REQUESTS,
                &format!(
                    "{MAX_WRONG_KEYS} wrong keys came from this address in the last minute: wait a minute, then try again (nothing was done)"
                ),
            );
            refused
                .headers_mut()
                .insert(RETRY_AFTER, HeaderValue::from_static("60"));
            return Err(Box::new(refused));
        }
        if owner.admits(header.as_bytes()) {
            return Ok(Principal::Owner);
        }
        guesses.count(source);
        Err(Box::new(self.unauthorized(request, Some(Refused::Invalid))))
    }

    /// The 401 for `request`, whose token, if any, was `refused`.
    fn unauthorized<B>(&self, request: &Request<B>, refused: Option<Refused>) -> HttpResponse {
        let in_url = request.uri().query().is_some_and(|query| {
            query
                .split('&')
                .any(|pair| pair.starts_with("token=") || pair.starts_with("access_token="))
        });
        let why = match refused {
            _ if in_url => {
                "a token in the URL is not accepted (URLs are logged along the way): send it as `Authorization: Bearer TOKEN`"
            }
            Some(Refused::Expired) => "the access token expired: refresh it (nothing was done)",
            Some(Refused::Revoked) => {
                "the access token's grant was revoked by the owner: sign in again (nothing was done)"
            }
            _ if request.headers().contains_key(AUTHORIZATION) => {
                "the bearer token is not this server's: nothing was done"
            }
            _ if self.auth.is_some() => {
                "this server needs `Authorization: Bearer TOKEN`: a token from signing in with OAuth (see the WWW-Authenticate header), or the owner's key: nothing was done"
            }
            _ => {
                "this server needs `Authorization: Bearer TOKEN` (the token of --http-token-file): nothing was done"
            }
        };
        let challenge = match &self.auth {
            None => "Bearer realm=\"zwave-mcp-server\"".to_owned(),
            Some(auth) => {
                let error = if request.headers().contains_key(AUTHORIZATION) {
                    ", error=\"invalid_token\""
                } else {
                    ""
                };
                format!(
                    "Bearer resource_metadata=\"{}\", scope=\"{}\"{error}",
                    auth.resource_metadata_url(),
                    Scopes::of([Scope::Read, Scope::Control])
                )
            }
        };
        let mut refused = refusal(StatusCode::UNAUTHORIZED, why);
        if let Ok(challenge) = HeaderValue::from_str(&challenge) {
            refused.headers_mut().insert(WWW_AUTHENTICATE, challenge);
        }
        refused
    }

    /// The 403 for a message in `body` that `principal`'s grant does not cover: a tool call
    /// needs its tool's scope, anything but the handshake, `ping`, notifications and
    /// `tools/list` (answered within the grant) needs `read`.
    pub fn beyond_grant(&self, principal: &Principal, body: &[u8]) -> Option<HttpResponse> {
        /// The fields looked at.
        #[derive(serde::Deserialize)]
        struct Message {
            id: Option<serde_json::Value>,
            method: Option<String>,
            params: Option<Params>,
        }
        #[derive(serde::Deserialize)]
        struct Params {
            name: Option<String>,
            arguments: Option<serde_json::Value>,
        }
        let Principal::Client { scopes, .. } = principal else {
            return None;
        };
        let auth = self.auth.as_ref()?;
        let message: Message = serde_json::from_slice(body).ok()?;
        let method = message.method?;
        let needed = match method.as_str() {
            "tools/call" => for_tool(
                message
                    .params
                    .as_ref()
                    .and_then(|params| params.name.as_deref())
                    .unwrap_or_default(),
            ),
            "initialize" | "ping" | "server/discover" | "tools/list" => return None,
            notification if notification.starts_with("notifications/") => return None,
            _ => Scope::Read,
        };
        if scopes.has(needed) {
            return None;
        }
        let asked = match (method.as_str(), &message.params) {
            ("tools/call", Some(params)) => format!(
                "{} {}",
                params.name.as_deref().unwrap_or_default(),
                params
                    .arguments
                    .as_ref()
                    .map(ToString::to_string)
                    .unwrap_or_default()
            ),
            _ => method.clone(),
        };
        auth.record(
            &principal.label(),
            &asked,
            &format!(
                "refused: this client's grant does not include `{}`",
                needed.name()
            ),
        );
        let also = if needed == Scope::Maintenance {
            " (and upkeep runs only where the server allows it: --allow-maintenance)"
        } else {
            ""
        };
        let why = format!(
            "this client's grant does not include `{}`, which {method} needs: the owner can grant it when the client signs in again asking for it{also} (nothing was done)",
            needed.name()
        );
        // Answered with the request's id, so that the client can tell which request it was.
        let body = serde_json::json!({
            "jsonrpc": "2.0",
            "id": message.id.unwrap_or_default(),
            "error": {"code": -32600, "message": why},
        });
        let mut refused = json_refusal(StatusCode::FORBIDDEN, body.to_string().into_bytes());
        let wanted = Scopes::of(scopes.iter().chain([needed]));
        if let Ok(challenge) = HeaderValue::from_str(&format!(
            "Bearer error=\"insufficient_scope\", scope=\"{wanted}\", resource_metadata=\"{}\"",
            auth.resource_metadata_url()
        )) {
            refused.headers_mut().insert(WWW_AUTHENTICATE, challenge);
        }
        Some(refused)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const KEY: &str = "owner-key-0123456789abcdef";

    fn sent(authorization: &str) -> Request<()> {
        Request::builder()
            .uri("/mcp")
            .header(AUTHORIZATION, authorization)
            .body(())
            .unwrap()
    }

    /// Wrong keys from one address hold that address back (its right key too), never
    /// another.
    #[test]
    fn wrong_keys_hold_back_their_address_only() {
        let doorman = Doorman {
            owner: Some(Arc::new(Token::new(KEY).unwrap())),
            ..Doorman::default()
        };
        let wrong = sent("Bearer not-the-owners-key-at-all");
        for _ in 0..MAX_WRONG_KEYS {
            let refused = doorman.principal(&wrong, Some("10.0.0.1")).unwrap_err();
            assert_eq!(refused.status(), StatusCode::UNAUTHORIZED);
        }
        let right = sent(&format!("Bearer {KEY}"));
        let held = doorman.principal(&right, Some("10.0.0.1")).unwrap_err();
        assert_eq!(held.status(), StatusCode::TOO_MANY_REQUESTS);
        assert_eq!(held.headers()[RETRY_AFTER], "60");
        assert!(matches!(
            doorman.principal(&right, Some("10.0.0.2")),
            Ok(Principal::Owner)
        ));
    }
}
