//! [`SignIn`]: signing in to one remote server with rmcp's OAuth (`auth`), and staying signed
//! in: the token store, the authorization client that puts the token on every request and
//! refreshes it, and a new sign-in when the server refuses it (401: discovery from its
//! challenge, registration, PKCE, the host's [`Authorizer`]) or asks for more (403
//! `insufficient_scope`: the union of the scopes held and those it names).
//!
//! Sign-ins are serialised (one prompt at a time, however many requests were refused at
//! once) and bounded: after [`MAX_FRUITLESS_SIGN_INS`] sign-ins that no request succeeded
//! with, the server's refusal stands until the host connects again.

use std::{
    sync::atomic::{AtomicU64, Ordering},
    time::{Duration, Instant},
};

use rmcp::transport::{
    AuthClient,
    auth::{
        AuthError, AuthorizationManager, AuthorizationMetadata, AuthorizationRequest,
        AuthorizationSession, ClientCredentialsConfig, OAuthClientConfig, WWWAuthenticateParams,
    },
};
use tracing::{info, warn};

use super::{
    AuthorizationPrompt, OAuthGrant, OAuthOptions, OAuthSettings,
    store::{ClientRecord, TokenStore},
};
use crate::transport::{HttpEndpoint, http::secrets::LiveSecrets};

/// Sign-ins in a row that no request succeeded with before the refusal stands (the MCP
/// spec asks clients to bound re-authorization; the conformance suite allows 3).
pub const MAX_FRUITLESS_SIGN_INS: u32 = 3;

/// The client name given at dynamic registration.
const CLIENT_NAME: &str = "mcp-client";

/// Signing in to one server, shared by its sessions.
pub struct SignIn {
    server: String,
    url: String,
    settings: OAuthSettings,
    /// The entry asked for OAuth: a 401 without a pointer to metadata is reason enough.
    configured: bool,
    options: OAuthOptions,
    store: TokenStore,
    client: AuthClient<reqwest::Client>,
    /// Sign-ins since a request last succeeded after one; held across a sign-in, so that
    /// sign-ins never overlap.
    fruitless: tokio::sync::Mutex<u32>,
    /// Grows with each sign-in: a request refused before the latest one is sent again
    /// with its token rather than signing in once more.
    generation: AtomicU64,
    /// Time spent waiting for a person (the host's authorizer), and since when one is.
    person: std::sync::Mutex<(Duration, Option<Instant>)>,
}

impl std::fmt::Debug for SignIn {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SignIn")
            .field("server", &self.server)
            .field("url", &self.url)
            .field("settings", &self.settings)
            .field("store", &self.store)
            .finish_non_exhaustive()
    }
}

/// Why a refusal was not answered with a sign-in.
pub(super) enum Declined {
    /// Not an OAuth challenge this client answers: the refusal stands as it is.
    NotOAuth,
    /// [`MAX_FRUITLESS_SIGN_INS`] were made already.
    Exhausted,
    /// The sign-in failed.
    Failed(AuthError),
}

impl SignIn {
    /// Signing in to `endpoint` (tokens from the store when a previous run left some), its
    /// requests sent with `http`.
    ///
    /// # Errors
    /// The token file cannot be read, or rmcp's OAuth client cannot be set up.
    pub async fn new(
        endpoint: &HttpEndpoint,
        options: OAuthOptions,
        http: reqwest::Client,
    ) -> Result<Self, String> {
        let settings = endpoint.oauth.clone().unwrap_or_default();
        let store = TokenStore::open(options.token_dir.as_deref(), &endpoint.url, &settings)?;
        let mut manager = manager(&endpoint.url, &store)
            .await
            .map_err(|err| format!("cannot set up OAuth: {err}"))?;
        if let Some((metadata, client)) = store.restorable() {
            let same_client = settings
                .client_id
                .as_ref()
                .is_none_or(|id| *id == client.id);
            if same_client {
                manager.set_metadata(metadata);
                let mut config = OAuthClientConfig::new(client.id, client.redirect_uri);
                if let Some(secret) = settings.client_secret.clone().or(client.secret) {
                    config = config.with_client_secret(secret);
                }
                // Without it the stored tokens are still used; only a refresh fails.
                if let Err(err) = manager.configure_client(config) {
                    warn!(server = endpoint.name, error = %err, "stored OAuth client unusable; the next refresh signs in again");
                }
            }
        }
        Ok(Self {
            server: endpoint.name.clone(),
            url: endpoint.url.clone(),
            configured: endpoint.oauth.is_some(),
            settings,
            options,
            store,
            client: AuthClient::new(http, manager),
            fruitless: tokio::sync::Mutex::new(0),
            generation: AtomicU64::new(0),
            person: std::sync::Mutex::default(),
        })
    }

    /// rmcp's client that puts the token on each request (refreshing it when it expired).
    pub(super) fn client(&self) -> &AuthClient<reqwest::Client> {
        &self.client
    }

    /// The tokens held now and after every sign-in and refresh.
    pub(in crate::transport::http) fn live_secrets(&self) -> LiveSecrets {
        self.store.live_secrets()
    }

    /// The number of sign-ins so far.
    pub(super) fn generation(&self) -> u64 {
        self.generation.load(Ordering::Acquire)
    }

    /// A request succeeded after a sign-in: the count of fruitless ones starts again.
    pub(super) async fn succeeded(&self) {
        *self.fruitless.lock().await = 0;
    }

    /// Allows [`MAX_FRUITLESS_SIGN_INS`] sign-ins again (the host connects anew).
    pub async fn allow_again(&self) {
        *self.fruitless.lock().await = 0;
    }

    /// How long, in all, sign-ins waited for a person (the host's authorizer): time a
    /// request's deadline should not count.
    pub fn person_time(&self) -> Duration {
        let person = self
            .person
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        person.0 + person.1.map_or(Duration::ZERO, |since| since.elapsed())
    }

    /// Answers the server's refusal `challenge` (`WWW-Authenticate` of a 401, or of a 403
    /// when `insufficient` is true) of a request sent at sign-in generation `seen`.
    pub(super) async fn answer(
        &self,
        challenge: &str,
        insufficient: bool,
        seen: u64,
    ) -> Result<(), Declined> {
        let base = reqwest::Url::parse(&self.url).map_err(|_| Declined::NotOAuth)?;
        let params = WWWAuthenticateParams::parse(challenge, &base);
        if insufficient && !params.is_insufficient_scope() {
            return Err(Declined::NotOAuth);
        }
        if !insufficient && !self.configured && params.resource_metadata_url.is_none() {
            return Err(Declined::NotOAuth);
        }
        let mut fruitless = self.fruitless.lock().await;
        if self.generation() != seen {
            return Ok(());
        }
        if *fruitless >= MAX_FRUITLESS_SIGN_INS {
            return Err(Declined::Exhausted);
        }
        *fruitless += 1;
        let more = if insufficient {
            params.scope.as_deref()
        } else {
            None
        };
        match self.sign_in(challenge, more).await {
            Ok(()) => {
                self.generation.fetch_add(1, Ordering::AcqRel);
                info!(server = self.server, "signed in with OAuth");
                Ok(())
            }
            Err(err) => Err(Declined::Failed(err)),
        }
    }

    /// Signs in anew: discovery from `challenge`, then the configured grant.
    async fn sign_in(&self, challenge: &str, more_scopes: Option<&str>) -> Result<(), AuthError> {
        super::secure_url::check("the server's `url`", &self.url)
            .map_err(AuthError::AuthorizationFailed)?;
        let mut manager = manager(&self.url, &self.store).await?;
        let resolution = manager
            .resolve_metadata_from_challenge(Some(challenge))
            .await?;
        if !resolution.source.is_discovered() {
            return Err(AuthError::AuthorizationFailed(
                "the server asks for a token but publishes no OAuth metadata (RFC 9728 or RFC 8414): give its token in the entry's `headers` (\"Authorization\": \"Bearer ${TOKEN}\")".into(),
            ));
        }
        let metadata = resolution.metadata;
        secure(
            "the authorization server's token endpoint",
            &metadata.token_endpoint,
        )?;
        if let Some(registration) = &metadata.registration_endpoint {
            secure(
                "the authorization server's registration endpoint",
                registration,
            )?;
        }
        manager.set_metadata(metadata.clone());
        let manager = match self.settings.grant {
            OAuthGrant::ClientCredentials => self.client_credentials(manager, metadata).await?,
            OAuthGrant::AuthorizationCode => {
                self.authorization_code(manager, metadata, more_scopes)
                    .await?
            }
        };
        *self.client.auth_manager.lock().await = manager;
        Ok(())
    }

    /// The client-credentials grant: the client signs in as itself.
    async fn client_credentials(
        &self,
        mut manager: AuthorizationManager,
        metadata: AuthorizationMetadata,
    ) -> Result<AuthorizationManager, AuthError> {
        let (Some(client_id), Some(client_secret)) = (
            self.settings.client_id.clone(),
            self.settings.client_secret.clone(),
        ) else {
            return Err(AuthError::ClientCredentialsError(
                "`oauth.grant` \"client_credentials\" needs `oauth.clientId` and `oauth.clientSecret`".into(),
            ));
        };
        let config = ClientCredentialsConfig::ClientSecret {
            client_id: client_id.clone(),
            client_secret,
            scopes: self.settings.scopes.clone(),
            resource: Some(self.url.clone()),
        };
        manager.validate_client_credentials_metadata(&config)?;
        manager.configure_client_credentials(&config)?;
        self.store.remember(
            metadata,
            ClientRecord {
                id: client_id,
                secret: None,
                redirect_uri: self.url.clone(),
            },
        );
        manager.exchange_client_credentials(&config).await?;
        Ok(manager)
    }

    /// The authorization-code grant with PKCE: registration if needed, then the person.
    async fn authorization_code(
        &self,
        mut manager: AuthorizationManager,
        metadata: AuthorizationMetadata,
        more_scopes: Option<&str>,
    ) -> Result<AuthorizationManager, AuthError> {
        let Some(authorizer) = &self.options.authorizer else {
            return Err(AuthError::AuthorizationFailed(
                "signing in needs a person, and this host has no one to ask (no authorizer): sign in with `mcp-client servers` at a terminal, or set `oauth.grant` to \"client_credentials\"".into(),
            ));
        };
        secure(
            "the authorization server's authorization endpoint",
            &metadata.authorization_endpoint,
        )?;
        pkce_s256(&metadata)?;
        let listener = std::net::TcpListener::bind(("127.0.0.1", self.settings.redirect_port.unwrap_or(0)))
            .map_err(|err| {
                AuthError::AuthorizationFailed(format!(
                    "cannot listen on 127.0.0.1 port {} for the browser's redirect ({err}): free the port, or set another `oauth.redirectPort`",
                    self.settings.redirect_port.unwrap_or(0)
                ))
            })?;
        let port = listener
            .local_addr()
            .map_err(|err| AuthError::InternalError(err.to_string()))?
            .port();
        let redirect_uri = format!("http://127.0.0.1:{port}/callback");
        let scopes = self.scopes(&manager, more_scopes).await;
        let cimd = metadata
            .additional_fields
            .get("client_id_metadata_document_supported")
            .and_then(serde_json::Value::as_bool)
            .unwrap_or(false);
        let (client_id, secret, issued) =
            match (&self.settings.client_id, &self.settings.client_metadata_url) {
                (Some(id), _) => (id.clone(), self.settings.client_secret.clone(), false),
                (None, Some(url)) if cimd => (url.clone(), None, false),
                (None, _) => {
                    let scope_refs: Vec<&str> = scopes.iter().map(String::as_str).collect();
                    let registered = manager
                        .register_client(CLIENT_NAME, &redirect_uri, &scope_refs)
                        .await?;
                    (registered.client_id, registered.client_secret, true)
                }
            };
        let mut request = AuthorizationRequest::new(redirect_uri.clone())
            .with_preregistered_client(client_id.clone());
        request = if scopes.is_empty() {
            request.with_initial_scope_selection()
        } else {
            request.with_scopes(scopes)
        };
        if let Some(secret) = secret.clone() {
            request = request.with_client_secret(secret);
        }
        let session = AuthorizationSession::new(manager, request)
            .await
            .map_err(|(_, err)| err)?;
        secure(
            "the authorization address to open",
            session.get_authorization_url(),
        )?;
        let prompt = AuthorizationPrompt {
            server: self.server.clone(),
            url: session.get_authorization_url().to_owned(),
            redirect_uri: redirect_uri.clone(),
            listener: Some(listener),
        };
        let redirect = self.ask(authorizer, prompt).await.map_err(|err| {
            AuthError::AuthorizationFailed(format!(
                "signing in to `{}` did not finish: {err}",
                self.server
            ))
        })?;
        self.store.remember(
            metadata,
            ClientRecord {
                id: client_id,
                secret: secret.filter(|_| issued),
                redirect_uri,
            },
        );
        session
            .handle_callback_with_issuer(
                &redirect.code,
                &redirect.state,
                redirect.issuer.as_deref(),
            )
            .await?;
        Ok(session.auth_manager)
    }

    /// The scopes to ask for: the entry's, else those the server names (its challenge, else
    /// its metadata's `scopes_supported`, else none); with those a 403 asked for added to
    /// what is held (step-up keeps what was granted).
    async fn scopes(&self, manager: &AuthorizationManager, more: Option<&str>) -> Vec<String> {
        let mut scopes = if !self.settings.scopes.is_empty() {
            self.settings.scopes.clone()
        } else if more.is_some() {
            self.store.granted_scopes()
        } else {
            manager.select_initial_scopes(&[]).await
        };
        for scope in more.into_iter().flat_map(str::split_whitespace) {
            if !scopes.iter().any(|held| held == scope) {
                scopes.push(scope.to_owned());
            }
        }
        scopes
    }

    /// The host's authorizer on `prompt`, its time counted as a person's.
    async fn ask(
        &self,
        authorizer: &super::Authorizer,
        prompt: AuthorizationPrompt,
    ) -> Result<super::AuthorizationRedirect, super::AuthorizeError> {
        let lock = || {
            self.person
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
        };
        lock().1 = Some(Instant::now());
        let answer = authorizer(prompt).await;
        let mut person = lock();
        if let Some(since) = person.1.take() {
            person.0 += since.elapsed();
        }
        answer
    }
}

/// Whether `address` may carry a sign-in (see [`secure_url::check`]); refused as a
/// `MetadataError`, which rmcp itself never raises.
fn secure(what: &str, address: &str) -> Result<(), AuthError> {
    super::secure_url::check(what, address).map_err(AuthError::MetadataError)
}

/// rmcp's OAuth manager for the server at `url`, its tokens in `store`.
async fn manager(url: &str, store: &TokenStore) -> Result<AuthorizationManager, AuthError> {
    super::super::tls::ready();
    let mut manager = AuthorizationManager::new(url).await?;
    manager.set_credential_store(store.clone());
    Ok(manager)
}

/// Refuses an authorization server whose metadata does not offer PKCE with S256: MCP
/// (2025-11-25) says a client must not go on without `code_challenge_methods_supported`, which
/// is how it knows the server checks the challenge at all.
fn pkce_s256(metadata: &AuthorizationMetadata) -> Result<(), AuthError> {
    match &metadata.code_challenge_methods_supported {
        Some(methods) if methods.iter().any(|method| method == "S256") => Ok(()),
        Some(methods) => Err(AuthError::AuthorizationFailed(format!(
            "the authorization server's metadata offers PKCE only as {} (`code_challenge_methods_supported`), not S256 as MCP requires: not signing in, nothing was sent to its authorization endpoint",
            common::clip(&methods.join(", "), 100)
        ))),
        None => Err(AuthError::AuthorizationFailed(
            "the authorization server's metadata has no `code_challenge_methods_supported`, so it may not check PKCE, which MCP requires: not signing in, nothing was sent to its authorization endpoint".into(),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn metadata(methods: Option<&[&str]>) -> AuthorizationMetadata {
        let mut value = serde_json::json!({
            "authorization_endpoint": "https://as.example/authorize",
            "token_endpoint": "https://as.example/token",
        });
        if let Some(methods) = methods {
            value["code_challenge_methods_supported"] = serde_json::json!(methods);
        }
        serde_json::from_value(value).unwrap()
    }

    #[test]
    fn pkce_must_be_offered_with_s256() {
        assert!(pkce_s256(&metadata(Some(&["plain", "S256"]))).is_ok());
        let plain = pkce_s256(&metadata(Some(&["plain"])))
            .unwrap_err()
            .to_string();
        assert!(
            plain.contains("the authorization server's metadata offers PKCE only as plain (`code_challenge_methods_supported`), not S256 as MCP requires: not signing in, nothing was sent to its authorization endpoint"),
            "{plain}"
        );
        let none = pkce_s256(&metadata(None)).unwrap_err().to_string();
        assert!(
            none.contains("has no `code_challenge_methods_supported`"),
            "{none}"
        );
    }
}
