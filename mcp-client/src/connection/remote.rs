//! A session with a remote server over Streamable HTTP (feature `http`): connecting once
//! (signed in with OAuth when the server asks, feature `oauth`, see [`RemoteAuth`]), and
//! what the HTTP client's errors mean as ours. The rest of a session (requests, timeouts,
//! cancellation, `tools/list_changed`, close) is the same as over stdio (`live`).

use std::sync::{Arc, atomic::AtomicU64};

use rmcp::service::ServiceError;

use super::{
    config::ServerConfig,
    error::{ClientError, Failure},
    handler::Elicitor,
    session::{AttemptFailure, Live},
};
use crate::transport::HttpEndpoint;

/// The longest a TCP (and TLS) connection to a remote server may take to open.
#[cfg(feature = "http")]
const CONNECT_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(30);

/// What to check when the server refuses the tokens signing in gave.
#[cfg(feature = "http")]
const SIGNED_IN_REFUSED: &str = "the server refused the tokens signing in with OAuth gave (signed in up to 3 times): does the account you signed in with have access to this server? check the entry's `oauth` settings (clientId, scopes)";

/// What signing in to a remote server keeps from one session to the next (feature `oauth`):
/// the host's OAuth options, and the server's [`SignIn`](crate::transport::http::oauth::SignIn)
/// once made (its tokens, its count of sign-ins).
#[derive(Default)]
pub(super) struct RemoteAuth {
    #[cfg(feature = "oauth")]
    options: crate::transport::http::oauth::OAuthOptions,
    #[cfg(feature = "oauth")]
    sign_in: tokio::sync::OnceCell<Arc<crate::transport::http::oauth::SignIn>>,
}

impl RemoteAuth {
    /// Signing in with `options`.
    #[cfg(feature = "oauth")]
    pub(super) fn new(options: crate::transport::http::oauth::OAuthOptions) -> Self {
        Self {
            options,
            sign_in: tokio::sync::OnceCell::new(),
        }
    }

    /// The host connects anew: sign-ins are allowed again.
    pub(super) async fn allow_again(&self) {
        #[cfg(feature = "oauth")]
        if let Some(sign_in) = self.sign_in.get() {
            sign_in.allow_again().await;
        }
    }

    /// Whether sessions are signed in with OAuth (a sign-in was set up).
    #[cfg(feature = "http")]
    fn signs_in(&self) -> bool {
        #[cfg(feature = "oauth")]
        return self.sign_in.initialized();
        #[cfg(not(feature = "oauth"))]
        false
    }

    /// Time sign-ins of this server waited for a person.
    #[cfg(feature = "http")]
    fn person_time(&self) -> std::time::Duration {
        #[cfg(feature = "oauth")]
        if let Some(sign_in) = self.sign_in.get() {
            return sign_in.person_time();
        }
        std::time::Duration::ZERO
    }

    /// The signed-in client of a session with `endpoint` (feature `oauth`), unless the entry
    /// has an `Authorization` header of its own; `None`: requests go as they are.
    #[cfg(feature = "oauth")]
    async fn signed_in(
        &self,
        endpoint: &HttpEndpoint,
        http: &reqwest::Client,
    ) -> Result<Option<crate::transport::http::oauth::SignedInClient>, String> {
        use crate::transport::http::oauth::{SignIn, SignedInClient};
        if endpoint.has_static_authorization() {
            return Ok(None);
        }
        let sign_in = self
            .sign_in
            .get_or_try_init(|| async {
                SignIn::new(endpoint, self.options.clone(), http.clone())
                    .await
                    .map(Arc::new)
            })
            .await?;
        Ok(Some(SignedInClient::new(Arc::clone(sign_in))))
    }
}

/// One attempt: `initialize` over HTTP (bounded by the init timeout, not counting the time a
/// person took to sign in), then `tools/list`.
#[cfg(feature = "http")]
pub(super) async fn connect_once(
    config: &ServerConfig,
    endpoint: &HttpEndpoint,
    changes: &Arc<AtomicU64>,
    updates: &super::ResourceUpdates,
    elicitor: Option<&Elicitor>,
    auth: &RemoteAuth,
) -> Result<Live, AttemptFailure> {
    use super::handler::HostHandler;

    let name = config.name().to_owned();
    let started = std::time::Instant::now();
    let failure = |reason: String, hint: Option<String>| Failure {
        server: name.clone(),
        reason,
        exit: None,
        stderr: Vec::new(),
        hint,
    };
    let lasting = |reason: String| AttemptFailure {
        failure: failure(reason, None),
        retryable: false,
        authorization: false,
    };
    let handler = HostHandler::new(&name, Arc::clone(changes))
        .with_resource_updates(updates.clone())
        .with_elicitor(elicitor.cloned())
        .with_protocol_version(config.protocol_version.clone());
    let http =
        crate::transport::http::http_client(endpoint, CONNECT_TIMEOUT.min(config.init_timeout))
            .map_err(lasting)?;
    #[cfg(feature = "oauth")]
    let signed_in = auth.signed_in(endpoint, &http).await.map_err(lasting)?;
    #[cfg(feature = "oauth")]
    let served = if let Some(client) = signed_in {
        let transport = crate::transport::http::connect(endpoint, client).map_err(lasting)?;
        serve(config, endpoint, handler, auth, transport, started).await?
    } else {
        let transport = crate::transport::http::connect(endpoint, http).map_err(lasting)?;
        serve(config, endpoint, handler, auth, transport, started).await?
    };
    #[cfg(not(feature = "oauth"))]
    let served = {
        let transport = crate::transport::http::connect(endpoint, http).map_err(lasting)?;
        serve(config, endpoint, handler, auth, transport, started).await?
    };
    if let Some(live) = served {
        return Ok(live);
    }
    // Found by the third hostile review (on stdio, and so here): a `server/discover` answer
    // naming only revisions this client does not know ended the attempt. As with a server
    // that does not know the method, the session starts again with `initialize`.
    let mut legacy = config.clone();
    legacy.protocol_version = Some(super::PINNED_PROTOCOL_VERSION);
    Box::pin(connect_once(
        &legacy, endpoint, changes, updates, elicitor, auth,
    ))
    .await
}

/// The session `handler` serves over `transport` to `endpoint` (`started` when the attempt
/// began): `initialize` (or `server/discover`) within the init timeout, not counting the time a
/// person took to sign in, then the first `tools/list`. `None` when `server/discover` named
/// no revision this client speaks and none was pinned: the attempt starts again with
/// `initialize`.
#[cfg(feature = "http")]
async fn serve<C: crate::transport::http::SessionClient>(
    config: &ServerConfig,
    endpoint: &HttpEndpoint,
    handler: super::handler::HostHandler,
    auth: &RemoteAuth,
    mut transport: crate::transport::http::HttpTransport<C>,
    started: std::time::Instant,
) -> Result<Option<Live>, AttemptFailure> {
    use rmcp::{ClientServiceExt as _, service::ClientInitializeError};

    use super::session::Remote;

    let failure = |reason: String, hint: Option<String>| Failure {
        server: config.name().to_owned(),
        reason,
        exit: None,
        stderr: Vec::new(),
        hint,
    };
    let cut = transport.cut_events();
    transport.set_notification_tap(handler.tap());
    let waited_before = auth.person_time();
    let initialized = within(
        config.init_timeout,
        || auth.person_time().saturating_sub(waited_before),
        handler.clone().serve_with_lifecycle(
            transport,
            super::lifecycle::start(config.protocol_version.as_ref()),
        ),
    )
    .await;
    let service = match initialized {
        Some(Ok(service)) => {
            if let Some(why) = service
                .peer_info()
                .and_then(|info| super::lifecycle::unspoken(&info.protocol_version))
            {
                drop(service);
                return Err(failure(format!("initialize failed: {why}"), None).into());
            }
            service
        }
        Some(Err(ClientInitializeError::NoCompatibleProtocolVersion {
            server_supported, ..
        })) if config.protocol_version.is_none() => {
            tracing::info!(server = %config.name(), offered = ?server_supported, "server/discover named no revision this client speaks: starting again with initialize");
            return Ok(None);
        }
        Some(Err(err)) => {
            // A cut SSE event shows only as a closed stream.
            let problem = http_problem(&err, &endpoint.shown_url())
                .or_else(|| crate::transport::http::cut_event(&cut));
            return Err(match problem {
                Some(problem) => AttemptFailure {
                    failure: failure(
                        format!("initialize failed: {}", problem.reason),
                        if problem.authorization
                            && auth.signs_in()
                            && problem.reason.contains("HTTP 40")
                        {
                            Some(SIGNED_IN_REFUSED.to_owned())
                        } else {
                            problem.hint
                        },
                    ),
                    retryable: problem.retryable,
                    authorization: problem.authorization,
                },
                None => failure(
                    format!("initialize failed: {}", super::lifecycle::failure(&err)),
                    Some(format!(
                        "does {} serve MCP Streamable HTTP?",
                        endpoint.shown_url()
                    )),
                )
                .into(),
            });
        }
        None => {
            return Err(failure(
                format!("no answer to initialize within {:?}", config.init_timeout),
                Some(format!(
                    "is the server at {} overloaded, or a proxy holding the request? raise timeouts.initialize if it is just slow",
                    endpoint.shown_url()
                )),
            )
            .into());
        }
    };
    Ok(Some(
        super::session::session(
            config,
            service,
            handler,
            started,
            None,
            None,
            Some(Remote {
                url: endpoint.shown_url(),
                cut,
            }),
        )
        .await,
    ))
}

/// `work` within `timeout` plus the time `person` says a person took meanwhile (signing
/// in is not the server's time); `None` when it ran out.
#[cfg(feature = "http")]
async fn within<F: Future>(
    timeout: std::time::Duration,
    person: impl Fn() -> std::time::Duration,
    work: F,
) -> Option<F::Output> {
    let start = tokio::time::Instant::now();
    let mut work = std::pin::pin!(work);
    loop {
        let deadline = start + timeout + person();
        match tokio::time::timeout_at(deadline, &mut work).await {
            Ok(output) => return Some(output),
            Err(_) if start + timeout + person() > tokio::time::Instant::now() => {}
            Err(_) => return None,
        }
    }
}

/// What the HTTP client saw when the session could not start: after `server/discover` was
/// refused, the failure of the `initialize` that followed is the one that explains.
#[cfg(feature = "http")]
fn http_problem(
    err: &rmcp::service::ClientInitializeError,
    url: &str,
) -> Option<crate::transport::http::HttpProblem> {
    use rmcp::service::ClientInitializeError;
    match err {
        ClientInitializeError::TransportError { error, .. } => {
            crate::transport::http::explain(error.error.as_ref(), url)
        }
        ClientInitializeError::LegacyFallbackFailed { fallback, .. } => http_problem(fallback, url),
        _ => None,
    }
}

/// Without the `http` feature: a remote server cannot be reached (configuration files refuse
/// such entries already; this is for hosts that build a [`ServerConfig`] themselves).
#[cfg(not(feature = "http"))]
pub(super) async fn connect_once(
    config: &ServerConfig,
    endpoint: &HttpEndpoint,
    _changes: &Arc<AtomicU64>,
    _updates: &super::ResourceUpdates,
    _elicitor: Option<&Elicitor>,
    _auth: &RemoteAuth,
) -> Result<Live, AttemptFailure> {
    Err(AttemptFailure {
        failure: Failure {
            server: config.name().to_owned(),
            reason: format!(
                "{} is a remote server, but this mcp-client was built without the `http` feature (Streamable HTTP)",
                endpoint.shown_url()
            ),
            exit: None,
            stderr: Vec::new(),
            hint: Some("build it with `--features http`".into()),
        },
        retryable: false,
        authorization: false,
    })
}

/// rmcp's transport error `err` for `method` on the remote session `live`, as ours (a
/// timeout and the server's own error are `live::service_error`'s, as for stdio).
pub(super) fn transport_error(live: &Live, method: &str, err: ServiceError) -> ClientError {
    let server = live.name.clone();
    let url = live
        .remote
        .as_ref()
        .map(|remote| remote.url.as_str())
        .unwrap_or_default();
    let failure = |reason: String, hint: Option<String>| Failure {
        server: server.clone(),
        reason,
        exit: None,
        stderr: Vec::new(),
        hint,
    };
    match err {
        // rmcp ends the answer's stream when an event is over `maxLineBytes`, and says only
        // that it closed.
        #[cfg(feature = "http")]
        ServiceError::TransportClosed
            if let Some(problem) = live
                .remote
                .as_ref()
                .and_then(|remote| crate::transport::http::cut_event(&remote.cut)) =>
        {
            ClientError::Unreachable {
                method: method.to_owned(),
                failure: failure(problem.reason, problem.hint),
            }
        }
        // rmcp says so when the answer's event stream ended before the answer (and could not
        // be resumed): the server stopped or restarted while it ran the request.
        ServiceError::TransportClosed => ClientError::Unreachable {
            method: method.to_owned(),
            failure: failure(
                "the server's answer broke off (it stopped or restarted?); the request may have run, so it is not sent again".into(),
                None,
            ),
        },
        ServiceError::TransportSend(error) => {
            #[cfg(feature = "http")]
            if let Some(problem) = crate::transport::http::explain(error.error.as_ref(), url) {
                if problem.session_expired {
                    return ClientError::SessionExpired {
                        server,
                        method: method.to_owned(),
                    };
                }
                if problem.authorization {
                    return ClientError::NotAuthorized {
                        server,
                        last: format!("`{method}`: {}", problem.reason),
                    };
                }
                return ClientError::Unreachable {
                    method: method.to_owned(),
                    failure: failure(problem.reason, problem.hint),
                };
            }
            ClientError::Unreachable {
                method: method.to_owned(),
                failure: failure(format!("{url}: {}", error.error), None),
            }
        }
        other => ClientError::Unreachable {
            method: method.to_owned(),
            failure: failure(other.to_string(), None),
        },
    }
}
