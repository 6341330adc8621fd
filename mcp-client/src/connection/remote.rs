//! A session with a remote server over Streamable HTTP (feature `http`): connecting once, and
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

/// One attempt: `initialize` over HTTP (bounded by the init timeout), then `tools/list`.
#[cfg(feature = "http")]
pub(super) async fn connect_once(
    config: &ServerConfig,
    endpoint: &HttpEndpoint,
    changes: &Arc<AtomicU64>,
    elicitor: Option<&Elicitor>,
) -> Result<Live, AttemptFailure> {
    use rmcp::ClientServiceExt as _;

    use super::{handler::HostHandler, session::Remote};

    let name = config.name().to_owned();
    let started = std::time::Instant::now();
    let failure = |reason: String, hint: Option<String>| Failure {
        server: name.clone(),
        reason,
        exit: None,
        stderr: Vec::new(),
        hint,
    };
    let mut transport =
        crate::transport::http::connect(endpoint, CONNECT_TIMEOUT.min(config.init_timeout))
            .map_err(|reason| AttemptFailure {
                failure: failure(reason, None),
                retryable: false,
            })?;
    let cut = transport.cut_events();
    let handler = HostHandler::new(&name, Arc::clone(changes))
        .with_elicitor(elicitor.cloned())
        .with_protocol_version(config.protocol_version.clone());
    transport.set_notification_tap(handler.tap());
    let service = match tokio::time::timeout(
        config.init_timeout,
        handler.clone().serve_with_lifecycle(
            transport,
            super::lifecycle::start(config.protocol_version.as_ref()),
        ),
    )
    .await
    {
        Ok(Ok(service)) => service,
        Ok(Err(err)) => {
            // A cut SSE event shows only as a closed stream.
            let problem = http_problem(&err, &endpoint.url)
                .or_else(|| crate::transport::http::cut_event(&cut));
            return Err(match problem {
                Some(problem) => AttemptFailure {
                    failure: failure(
                        format!("initialize failed: {}", problem.reason),
                        problem.hint,
                    ),
                    retryable: problem.retryable,
                },
                None => failure(
                    format!("initialize failed: {}", super::lifecycle::failure(&err)),
                    Some(format!("does {} serve MCP Streamable HTTP?", endpoint.url)),
                )
                .into(),
            });
        }
        Err(_) => {
            return Err(failure(
                format!("no answer to initialize within {:?}", config.init_timeout),
                Some(format!(
                    "is the server at {} overloaded, or a proxy holding the request? raise timeouts.initialize if it is just slow",
                    endpoint.url
                )),
            )
            .into());
        }
    };
    Ok(super::session::session(
        config,
        service,
        handler,
        started,
        None,
        None,
        Some(Remote {
            url: endpoint.url.clone(),
            cut,
        }),
    )
    .await)
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
    _elicitor: Option<&Elicitor>,
) -> Result<Live, AttemptFailure> {
    Err(AttemptFailure {
        failure: Failure {
            server: config.name().to_owned(),
            reason: format!(
                "{} is a remote server, but this mcp-client was built without the `http` feature (Streamable HTTP)",
                endpoint.url
            ),
            exit: None,
            stderr: Vec::new(),
            hint: Some("build it with `--features http`".into()),
        },
        retryable: false,
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
