//! OAuth 2.1 with this server as its own authorization server (`--oauth-issuer`): the hosts
//! that sign in only with OAuth (Claude's and ChatGPT's connectors, Home Assistant) reach the
//! home with a grant the owner gave on a page this server serves, and only within it.
//!
//! | part | what it owns |
//! |---|---|
//! | [`AuthServer`] (here) | the issuer, the resource URL, the signing key, the book; who a request's bearer token names ([`Principal`]) |
//! | `owner` | [`Token`]: the owner's key, never printed, compared in constant time |
//! | `scope` | [`Scope`], [`Scopes`]: read, control, sensitive, maintenance; which one each tool needs |
//! | `secret` | random values, signed access tokens, hashed refresh tokens and codes, PKCE S256 |
//! | `book` | the clients and grants (`oauth.json`), shared by every process on the directory |
//! | `endpoints` | RFC 9728 and RFC 8414 metadata, tokens, revocation (RFC 7009) |
//! | `register` | dynamic registration (RFC 7591) within bounds; redirect URIs checked and matched |
//! | `client_doc` | Client ID Metadata Documents: an `https://` client_id's document, fetched within bounds, never from a private address unless allowed |
//! | `consent` | the owner's approval page (`/oauth/authorize`) |
//! | `grants` | the owner's page of grants (`/oauth/grants`): who may do what, since when, revoke |
//! | `cookies` | the pages' cookies: the CSRF value, the owner's signed session |
//! | `form`, `html` | parameters read as OAuth says; pages escaped, unframeable, without script |
//! | `counts` | [`Counts`]: a minute's wrong keys, registrations and denials by sender (an address, all of loopback, an IPv6 /64) |
//!
//! The owner proves who they are with the owner's key (`--http-token-file`): it exists
//! already, is long and random, and holding it gives everything anyway; a passphrase would be
//! one more secret to choose well, keep and rotate. It is typed into the page (a password
//! field, posted, never in a URL) and compared in constant time; wrong keys are counted by
//! the address they came from and, past [`MAX_WRONG_KEYS`] a minute from one address, refused
//! without being compared.

mod book;
mod client_doc;
mod consent;
mod cookies;
mod counts;
mod endpoints;
mod form;
mod grants;
mod html;
mod owner;
mod register;
mod scope;
mod secret;

use std::{
    path::PathBuf,
    sync::{Arc, Mutex, PoisonError},
    time::Duration,
};

use bytes::Bytes;
use http_body_util::Full;
use hyper::{Method, Response, http::request::Parts};

pub use crate::state::StateError;
pub use client_doc::DocumentPolicy;
pub use counts::Counts;
pub use owner::{MIN_TOKEN_CHARS, Token};
pub use scope::{Scope, Scopes, for_tool};

use crate::{audit::AuditTrail, state::StateDir};
use book::Book;
use secret::{Rejected, SigningKey};

/// Where the metadata of the protected resource is (RFC 9728, for the resource `/mcp`).
pub const RESOURCE_METADATA_PATH: &str = "/.well-known/oauth-protected-resource/mcp";

/// How long an access token lasts: a revoked grant's tokens are refused at once anyway (the
/// grant is looked up on each request), so this bounds only a stolen token's life.
pub const ACCESS_LIFETIME: Duration = Duration::from_secs(600);

/// Denials from one address told to the audit trail a minute.
pub const MAX_DENIALS_TOLD: u32 = 10;

/// Wrong owner's keys accepted a minute before the page refuses to compare more.
pub const MAX_WRONG_KEYS: u32 = 10;

/// The file of the signing key in the state directory.
const KEY_FILE: &str = "oauth-signing-key";

/// What the owner configured.
#[derive(Debug, Clone)]
pub struct AuthSettings {
    /// The public origin the server is reached at (`https://home.example`), as hosts see it.
    pub issuer: String,
    /// Where grants and the signing key are kept.
    pub state_dir: PathBuf,
    /// How long an access token lasts.
    pub access_lifetime: Duration,
    /// What the owner allows of fetching clients' metadata documents.
    pub documents: DocumentPolicy,
}

/// Who sent a request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Principal {
    /// The holder of the owner's key (or anyone, on loopback without a key): everything the
    /// owner's flags allow.
    Owner,
    /// A client the owner granted.
    Client {
        /// The grant.
        grant: String,
        /// The client's name (its own claim).
        client: Arc<str>,
        /// The client's id: what a session it opened is bound to (a step-up's new grant
        /// keeps the session).
        client_id: Arc<str>,
        /// What it may do now.
        scopes: Scopes,
    },
}

impl Principal {
    /// Who it is, in the audit trail's words.
    pub fn label(&self) -> String {
        match self {
            Self::Owner => "the owner's key (or loopback without one)".to_owned(),
            Self::Client { client, grant, .. } => {
                format!("the client {:?} (grant {grant})", &**client)
            }
        }
    }

    /// What it may do.
    pub fn scopes(&self) -> Scopes {
        match self {
            Self::Owner => Scopes::ALL,
            Self::Client { scopes, .. } => *scopes,
        }
    }
}

/// Why a bearer token was not taken.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refused {
    /// Not a token of this server (or altered, or for another resource).
    Invalid,
    /// Expired: the client refreshes it.
    Expired,
    /// Its grant was revoked.
    Revoked,
}

/// The authorization server.
#[derive(Debug)]
pub struct AuthServer {
    issuer: String,
    resource: String,
    key: SigningKey,
    book: Book,
    owner: Token,
    access_lifetime: Duration,
    /// The hosts the pages answer, as `/mcp` does.
    hosts: Vec<String>,
    /// Where sign-ins, grants and revocations are told.
    audit: Option<Arc<AuditTrail>>,
    /// Wrong owner's keys in the current minute, by the address they came from.
    wrong_keys: Mutex<Counts>,
    /// Registrations in the current minute, by address, and all together.
    registrations: Mutex<Counts>,
    /// Denials told to the audit trail this minute, by address.
    denials: Mutex<Counts>,
    /// The fetcher of clients' metadata documents (`None`: TLS could not be set up, said on
    /// the page; the flags were checked at start).
    documents: Option<client_doc::Documents>,
    /// Approval forms answered already (their tags): each is answered once.
    answered: Mutex<std::collections::HashSet<String>>,
}

/// Whether `token` has the shape of an access token this server issues (checked or not).
pub fn looks_issued(token: &str) -> bool {
    token.starts_with(secret::ACCESS_PREFIX)
}

impl AuthServer {
    /// The authorization server `settings` describe, for the resource at `resource_path`
    /// (`/mcp`), the owner proving who they are with `owner`; its pages answer the `hosts` the
    /// resource answers (the issuer's host among them), and take forms from the issuer's own
    /// origin only.
    ///
    /// # Errors
    /// The state directory or a file in it cannot be used.
    pub fn open(
        settings: &AuthSettings,
        resource_path: &str,
        owner: Token,
        hosts: Vec<String>,
        audit: Option<Arc<AuditTrail>>,
    ) -> Result<Self, StateError> {
        let state = StateDir::open(&settings.state_dir)?;
        let key = signing_key(&state)?;
        let book = Book::open(state)?;
        let issuer = settings.issuer.trim_end_matches('/').to_owned();
        Ok(Self {
            resource: format!("{issuer}{resource_path}"),
            issuer,
            key,
            book,
            owner,
            access_lifetime: settings.access_lifetime,
            hosts,
            audit,
            wrong_keys: Mutex::new(Counts::new()),
            registrations: Mutex::new(Counts::new()),
            answered: Mutex::default(),
            denials: Mutex::new(Counts::new()),
            documents: client_doc::Documents::new(&settings.documents)
                .inspect_err(|err| {
                    tracing::error!("clients' metadata documents cannot be fetched: {err}")
                })
                .ok(),
        })
    }

    /// The issuer (the public origin).
    pub fn issuer(&self) -> &str {
        &self.issuer
    }

    /// The URL of the protected resource (`…/mcp`), the audience of every token.
    pub fn resource(&self) -> &str {
        &self.resource
    }

    /// The URL of the protected resource's metadata, for `WWW-Authenticate`.
    pub fn resource_metadata_url(&self) -> String {
        format!("{}{RESOURCE_METADATA_PATH}", self.issuer)
    }

    /// Who the bearer token `token` names.
    ///
    /// # Errors
    /// Why it is not taken.
    pub fn principal(&self, token: &str) -> Result<Principal, Refused> {
        let claims = self
            .key
            .check(&self.resource, token, secret::now())
            .map_err(|rejected| match rejected {
                Rejected::Invalid => Refused::Invalid,
                Rejected::Expired => Refused::Expired,
            })?;
        let granted = self.book.live(&claims.grant).ok_or(Refused::Revoked)?;
        Ok(Principal::Client {
            client: granted.client,
            client_id: granted.client_id,
            scopes: claims.scopes.and(granted.scopes),
            grant: claims.grant,
        })
    }

    /// Whether the grant `id` still stands (not revoked, here or by another process on the
    /// same state directory within a second).
    pub fn grant_stands(&self, id: &str) -> bool {
        self.book.live(id).is_some()
    }

    /// Whether the client `client_id` holds a grant now.
    pub fn client_holds_grant(&self, client_id: &str) -> bool {
        self.book.client_holds_grant(client_id)
    }

    /// Tells the audit trail that `who` did `what`, and what came of it.
    pub fn record(&self, who: &str, what: &str, outcome: &str) {
        if let Some(audit) = &self.audit {
            audit.record(who, what, outcome);
        }
    }

    /// Whether `path` is one this server answers (its metadata and `/oauth/…`).
    pub fn serves(path: &str) -> bool {
        path.starts_with("/.well-known/oauth-") || path.starts_with("/oauth/")
    }

    /// The answer to a request for one of its paths, with `body` read already; `peer` is
    /// the address it came from.
    pub fn answer(&self, parts: &Parts, body: &[u8], peer: Option<&str>) -> Response<Full<Bytes>> {
        if let Some(refused) = self.foreign_host(parts) {
            return refused;
        }
        let path = parts.uri.path();
        match (&parts.method, path) {
            (&Method::GET, RESOURCE_METADATA_PATH | "/.well-known/oauth-protected-resource") => {
                endpoints::resource_metadata(self)
            }
            (&Method::GET, "/.well-known/oauth-authorization-server") => {
                endpoints::server_metadata(self)
            }
            (&Method::POST, "/oauth/register") => register::register(self, body, peer),
            (&Method::POST, "/oauth/token") => endpoints::token(self, body, peer),
            (&Method::POST, "/oauth/revoke") => endpoints::revoke(self, body),
            (&Method::GET, "/oauth/authorize") => consent::ask(self, parts),
            (&Method::POST, "/oauth/authorize") => consent::decide(self, parts, body, peer),
            (&Method::GET, "/oauth/grants") => grants::page(self, parts),
            (&Method::POST, "/oauth/grants/sign-in") => grants::sign_in(self, parts, body, peer),
            (&Method::POST, "/oauth/grants/revoke") => grants::revoke(self, parts, body),
            (&Method::POST, "/oauth/grants/sign-out") => grants::sign_out(self, parts, body),
            _ => endpoints::not_found(path),
        }
    }

    /// The 403 for a request whose `Host` is not one this server answers (as `/mcp`).
    fn foreign_host(&self, parts: &Parts) -> Option<Response<Full<Bytes>>> {
        let host = parts
            .headers
            .get(hyper::header::HOST)
            .and_then(|host| host.to_str().ok())
            .unwrap_or_default()
            .to_ascii_lowercase();
        let name = host
            .strip_prefix('[')
            .and_then(|rest| rest.split_once(']').map(|(name, _)| name))
            .unwrap_or_else(|| {
                host.rsplit_once(':')
                    .map_or(host.as_str(), |(name, _)| name)
            });
        let known = self.hosts.iter().any(|allowed| {
            let allowed = allowed.to_ascii_lowercase();
            allowed == host || allowed == name
        });
        (!known).then(|| {
            html::page(
                hyper::StatusCode::FORBIDDEN,
                "Not this server's name",
                &format!(
                    "<p>This server does not answer to the name {} (a guard against DNS rebinding). If it is reached by that name, start it with <code>--http-allowed-host</code>.</p>",
                    html::escape(&format!("{host:?}"))
                ),
            )
        })
    }

    /// Where a form posted to one of the pages came from, in words, when that is not this
    /// server's own page; `None` when it is. The issuer's own origin only, exactly (found by
    /// the hostile review: the `/mcp` origins let any loopback port post the forms, and
    /// cookies are not kept apart by port). A browser names the posting page's origin; where
    /// one leaves `Origin` out, its same-origin `Referer` (the pages send one) must be this
    /// server's; a POST naming neither is refused (found by the hostile review: accepted).
    fn foreign_poster(&self, headers: &hyper::HeaderMap) -> Option<String> {
        let shown = |from: &str| format!("a page at {:?}", common::clip(from, 80));
        if let Some(origin) = headers.get(hyper::header::ORIGIN) {
            let origin = origin.to_str().unwrap_or("null");
            return (origin != self.issuer).then(|| shown(origin));
        }
        match headers
            .get(hyper::header::REFERER)
            .map(|referer| referer.to_str())
        {
            Some(Ok(referer))
                if referer
                    .strip_prefix(&self.issuer)
                    .is_some_and(|path| path.starts_with('/')) =>
            {
                None
            }
            Some(referer) => Some(shown(referer.unwrap_or("?"))),
            None => {
                Some("a page that did not say where it was (no Origin or Referer header)".into())
            }
        }
    }

    /// Whether `key` is the owner's, counting wrong ones by the address they came from;
    /// `None` when that address sent too many wrong ones in the last minute (not compared).
    /// Found by the hostile review: one count for all let anyone lock the owner out.
    fn is_owner(&self, key: &str, source: Option<&str>) -> Option<bool> {
        let source = source.unwrap_or("?");
        let mut wrong = self
            .wrong_keys
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        let wrong = wrong.now();
        if wrong.of(source) >= MAX_WRONG_KEYS {
            return None;
        }
        let right = self.owner.admits(format!("Bearer {key}").as_bytes());
        if right {
            wrong.forget(source);
        } else {
            wrong.count(source);
        }
        Some(right)
    }

    /// Whether a denial from `source` goes to the audit trail: at most
    /// [`MAX_DENIALS_TOLD`] a minute from one address (anyone may deny, no key needed: found by
    /// the hostile review, fresh forms denied in a loop filled the trail).
    fn tell_denial(&self, source: Option<&str>) -> bool {
        let source = source.unwrap_or("?");
        let mut denials = self.denials.lock().unwrap_or_else(PoisonError::into_inner);
        let denials = denials.now();
        if denials.of(source) >= MAX_DENIALS_TOLD {
            return false;
        }
        denials.count(source);
        true
    }

    /// Whether the approval form tagged `tag` was answered already; marks it answered.
    fn answered_before(&self, tag: &str) -> bool {
        let mut answered = self.answered.lock().unwrap_or_else(PoisonError::into_inner);
        if answered.len() >= 4096 {
            answered.clear();
        }
        !answered.insert(tag.to_owned())
    }
}

/// The key in `state`, made (once, holding the directory) when there is none.
fn signing_key(state: &StateDir) -> Result<SigningKey, StateError> {
    let read = |state: &StateDir| -> Result<Option<SigningKey>, StateError> {
        let Some(bytes) = state.read(KEY_FILE)? else {
            return Ok(None);
        };
        let text = String::from_utf8_lossy(&bytes);
        SigningKey::from_hex(&text)
            .map(Some)
            .ok_or_else(|| StateError::Corrupt {
                path: state.path().join(KEY_FILE),
                why: "it does not hold 64 hex digits".to_owned(),
            })
    };
    if let Some(key) = read(state)? {
        return Ok(key);
    }
    let _held = state.hold()?;
    if let Some(key) = read(state)? {
        return Ok(key);
    }
    state.write(KEY_FILE, SigningKey::new_hex().as_bytes())?;
    read(state)?.ok_or_else(|| StateError::Corrupt {
        path: state.path().join(KEY_FILE),
        why: "it was not there after it was written".to_owned(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An authorization server on a state directory of its own; the directory.
    pub(super) fn server(name: &str) -> (AuthServer, PathBuf) {
        let dir = std::env::temp_dir().join(format!("zwave-auth-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let settings = AuthSettings {
            issuer: "https://home.example".into(),
            state_dir: dir.clone(),
            access_lifetime: ACCESS_LIFETIME,
            documents: DocumentPolicy::default(),
        };
        let owner = Token::new("the-owners-key-0123456789").unwrap();
        let server =
            AuthServer::open(&settings, "/mcp", owner, vec!["home.example".into()], None).unwrap();
        (server, dir)
    }

    /// Found by the hostile review: one count for every address let anyone lock the owner
    /// out of the approval and grants pages with ten wrong keys a minute.
    #[test]
    fn wrong_keys_from_one_address_do_not_lock_out_another() {
        let (auth, dir) = server("keys");
        for _ in 0..MAX_WRONG_KEYS {
            assert_eq!(auth.is_owner("wrong", Some("10.0.0.9")), Some(false));
        }
        assert_eq!(
            auth.is_owner("the-owners-key-0123456789", Some("10.0.0.9")),
            None
        );
        assert_eq!(
            auth.is_owner("the-owners-key-0123456789", Some("192.168.1.2")),
            Some(true)
        );
        // A right key from an address forgets its wrong ones.
        assert_eq!(auth.is_owner("wrong", Some("192.168.1.3")), Some(false));
        assert_eq!(
            auth.is_owner("the-owners-key-0123456789", Some("192.168.1.3")),
            Some(true)
        );
        assert_eq!(auth.wrong_keys.lock().unwrap().of("192.168.1.3"), 0);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// Found by the hostile review: once 1,024 addresses were counted the counts were
    /// cleared, so a thousand addresses wiped a locked-out one's.
    #[test]
    fn a_flood_of_addresses_shares_one_count_and_wipes_none() {
        let (auth, dir) = server("flood");
        for _ in 0..MAX_WRONG_KEYS {
            auth.is_owner("wrong", Some("10.0.0.9"));
        }
        for n in 0..(counts::MAX_SOURCES + 50) {
            auth.is_owner("wrong", Some(&format!("fd00::{n:x}")));
        }
        assert_eq!(
            auth.is_owner("the-owners-key-0123456789", Some("10.0.0.9")),
            None
        );
        assert_eq!(
            auth.is_owner("the-owners-key-0123456789", Some("fd00::ffff")),
            None
        );
        assert!(auth.wrong_keys.lock().unwrap().senders() <= counts::MAX_SOURCES + 1);
        for _ in 0..MAX_DENIALS_TOLD {
            assert!(auth.tell_denial(Some("10.0.0.9")));
        }
        assert!(!auth.tell_denial(Some("10.0.0.9")));
        assert!(auth.tell_denial(Some("10.0.0.10")));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn an_approval_form_is_answered_once() {
        let (auth, dir) = server("once");
        assert!(!auth.answered_before("tag-1"));
        assert!(auth.answered_before("tag-1"));
        assert!(!auth.answered_before("tag-2"));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
