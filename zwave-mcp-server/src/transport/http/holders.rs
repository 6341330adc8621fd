//! Who holds each MCP session, and answers that end with a grant.
//!
//! A session is bound to who opened it: the owner's key, or one client (by its id, so that a
//! step-up's new grant keeps the session). A request naming a session someone else opened
//! is answered 404, as for a session that is not there: a client then starts its own, and
//! learns nothing of the other's. A granted client's answers — its listen stream above all —
//! end within a second of its grant's revocation, and no event is sent after it.

use std::{
    collections::HashMap,
    convert::Infallible,
    pin::Pin,
    sync::{Arc, Mutex, PoisonError},
    task::{Context, Poll},
    time::Duration,
};

use bytes::Bytes;
use http_body_util::{BodyExt as _, combinators::BoxBody};
use hyper::{
    Method, StatusCode,
    body::{Body, Frame, SizeHint},
    http::request::Parts,
};
use rmcp::transport::streamable_http_server::SessionManager as _;

use super::{
    Sessions,
    reply::{HttpResponse, refusal},
};
use crate::auth::{AuthServer, Principal};

/// How many more holders than open sessions are kept before those of ended sessions are
/// looked for and forgotten.
const SLACK: usize = 16;

/// The most sessions one granted client may hold alive (the owner's key: up to the cap on
/// all sessions).
pub const MAX_SESSIONS_A_CLIENT: usize = 16;

/// The owner's key keeps one in this many of all sessions: granted clients together hold
/// the rest at most (found by the hostile review: two clients at 16 filled a cap of 30).
const OWNERS_SHARE: usize = 4;

/// How often an open answer of a client looks whether its grant still stands.
const LOOK_EVERY: Duration = Duration::from_secs(1);

/// Who opened a session.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Holder {
    Owner,
    Client(Arc<str>),
}

impl Holder {
    fn of(principal: &Principal) -> Self {
        match principal {
            Principal::Owner => Self::Owner,
            Principal::Client { client_id, .. } => Self::Client(Arc::clone(client_id)),
        }
    }
}

/// The holder of each session opened here, and the sessions each client is opening now.
#[derive(Debug, Default)]
pub struct Holders(
    Mutex<HashMap<String, Holder>>,
    Mutex<HashMap<Arc<str>, usize>>,
);

/// A place a client's session holds while rmcp opens it: counted against the client's
/// [`MAX_SESSIONS_A_CLIENT`] until dropped (by then the session is recorded, or was not made).
#[derive(Debug)]
pub struct Opening {
    holders: Arc<Holders>,
    client_id: Arc<str>,
}

impl Drop for Opening {
    fn drop(&mut self) {
        let mut opening = self
            .holders
            .1
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if let Some(count) = opening.get_mut(&self.client_id) {
            *count = count.saturating_sub(1);
            if *count == 0 {
                opening.remove(&self.client_id);
            }
        }
    }
}

impl Holders {
    /// The 404 for a request (`parts`) naming a session that `principal` did not open, or
    /// one not open at all: answered the same, before rmcp looks at the request's headers
    /// (found by the hostile review: a session of another's got 404 while an unknown one,
    /// asked with a wrong `Accept`, got rmcp's 406, which told which sessions exist).
    pub fn refuse(&self, parts: &Parts, principal: &Principal) -> Option<HttpResponse> {
        let id = parts.headers.get("mcp-session-id")?;
        let id = String::from_utf8_lossy(id.as_bytes());
        let holders = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        (holders.get(&*id) != Some(&Holder::of(principal)))
            .then(|| no_session(&id, parts.method == Method::DELETE))
    }

    /// After rmcp answered: the holder of a session `principal` opened with `answered`
    /// recorded, a session it ended (`ended`) forgotten, and when more are recorded than
    /// `sessions` holds, those gone since forgotten.
    pub async fn answered(
        &self,
        answered: &HttpResponse,
        principal: &Principal,
        ended: Option<&str>,
        sessions: &Sessions,
    ) {
        if let Some(id) = ended {
            self.lock().remove(id);
        }
        let Some(id) = answered
            .headers()
            .get("mcp-session-id")
            .and_then(|id| id.to_str().ok())
        else {
            return;
        };
        let recorded = {
            let mut holders = self.lock();
            holders
                .entry(id.to_owned())
                .or_insert_with(|| Holder::of(principal));
            holders.len()
        };
        if recorded > sessions.count().await + SLACK {
            let ids: Vec<String> = self.lock().keys().cloned().collect();
            for id in ids {
                if !sessions
                    .has_session(&id.as_str().into())
                    .await
                    .unwrap_or(true)
                {
                    self.lock().remove(&id);
                }
            }
        }
    }

    /// The sessions of clients that no longer hold a grant, closed (found by the hostile
    /// review: a revoked client's sessions kept their places until they expired, and one
    /// client could fill them all and keep the owner out).
    pub async fn close_revoked(&self, auth: &AuthServer, sessions: &Sessions) {
        let revoked: Vec<String> = self
            .lock()
            .iter()
            .filter(|(_, holder)| match holder {
                Holder::Owner => false,
                Holder::Client(client_id) => !auth.client_holds_grant(client_id),
            })
            .map(|(id, _)| id.clone())
            .collect();
        for id in revoked {
            let _ = sessions.close_session(&id.as_str().into()).await;
            self.lock().remove(&id);
            tracing::info!(session = %id, "closed a session of a client whose grant was revoked");
        }
    }

    /// A place for a session `principal` opens ([`reserve`](Self::reserve)d); when there is
    /// no room, the sessions of clients whose grant was revoked are closed first: when the
    /// clients' share is full (found by the hostile review: a revoked client's sessions kept
    /// it full until they expired), or every place is taken.
    pub async fn place(
        self: &Arc<Self>,
        principal: &Principal,
        sessions: &Sessions,
        auth: Option<&AuthServer>,
    ) -> Result<Option<Opening>, HttpResponse> {
        let opening = match self.reserve(principal, sessions).await {
            Ok(opening) => opening,
            Err(refused) => {
                let Some(auth) = auth else {
                    return Err(refused);
                };
                self.close_revoked(auth, sessions).await;
                self.reserve(principal, sessions).await?
            }
        };
        if sessions.full().await
            && let Some(auth) = auth
        {
            self.close_revoked(auth, sessions).await;
        }
        Ok(opening)
    }

    /// A place for a session `principal` opens, or the 503 when it would hold more than
    /// [`MAX_SESSIONS_A_CLIENT`], or granted clients together more than all but the owner's
    /// share ([`OWNERS_SHARE`]) (the owner's key: no place needed). The count and the place
    /// are taken under one lock, with the sessions being opened counted too (found by the
    /// hostile review: 30 `initialize`s sent at once all passed a count of those recorded).
    async fn reserve(
        self: &Arc<Self>,
        principal: &Principal,
        sessions: &Sessions,
    ) -> Result<Option<Opening>, HttpResponse> {
        let Principal::Client { client_id, .. } = principal else {
            return Ok(None);
        };
        let client = Holder::Client(Arc::clone(client_id));
        self.forget_ended(sessions, |holder| *holder == client)
            .await;
        // At least one (found by the hostile review: a cap below 4 kept the owner nothing):
        // with one place, it is the owner's.
        let kept = sessions.max().div_ceil(OWNERS_SHARE);
        let clients_may = sessions.max() - kept;
        if self.held_by_clients() >= clients_may {
            self.forget_ended(sessions, |holder| matches!(holder, Holder::Client(_)))
                .await;
        }
        let holders = self.lock();
        let mut opening = self.1.lock().unwrap_or_else(PoisonError::into_inner);
        let alive = holders.values().filter(|holder| **holder == client).count()
            + opening.get(client_id).copied().unwrap_or(0);
        let together = clients_in(&holders, &opening);
        let full = if alive >= MAX_SESSIONS_A_CLIENT {
            format!(
                "this client holds {alive} MCP sessions, the most one client may: end one (DELETE) or let one expire, then try again"
            )
        } else if together >= clients_may {
            format!(
                "granted apps hold {together} MCP sessions together, the most they may (the owner's key keeps {kept} more): try again when one has ended or expired"
            )
        } else {
            *opening.entry(Arc::clone(client_id)).or_default() += 1;
            return Ok(Some(Opening {
                holders: Arc::clone(self),
                client_id: Arc::clone(client_id),
            }));
        };
        let mut refused = refusal(StatusCode::SERVICE_UNAVAILABLE, &full);
        refused.headers_mut().insert(
            hyper::header::RETRY_AFTER,
            hyper::header::HeaderValue::from_static("30"),
        );
        Err(refused)
    }

    /// How many sessions granted clients hold, with those being opened.
    fn held_by_clients(&self) -> usize {
        let holders = self.lock();
        clients_in(
            &holders,
            &self.1.lock().unwrap_or_else(PoisonError::into_inner),
        )
    }

    /// The sessions of holders `whose` that have ended since, forgotten.
    async fn forget_ended(&self, sessions: &Sessions, whose: impl Fn(&Holder) -> bool) {
        let held: Vec<String> = self
            .lock()
            .iter()
            .filter(|(_, holder)| whose(holder))
            .map(|(id, _)| id.clone())
            .collect();
        for id in held {
            if !sessions
                .has_session(&id.as_str().into())
                .await
                .unwrap_or(true)
            {
                self.lock().remove(&id);
            }
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Holder>> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// How many of `holders` are granted clients', with the sessions they are `opening`.
fn clients_in(holders: &HashMap<String, Holder>, opening: &HashMap<Arc<str>, usize>) -> usize {
    holders
        .values()
        .filter(|holder| matches!(holder, Holder::Client(_)))
        .count()
        + opening.values().sum::<usize>()
}

/// The 404 for a session that is not here: what rmcp answers (a DELETE: ours, which says
/// nothing was ended). A session someone else opened gets the same answer, so that its
/// existence is not told (found by the hostile review: the words differed).
pub fn no_session(id: &str, deleting: bool) -> HttpResponse {
    if deleting {
        return refusal(
            StatusCode::NOT_FOUND,
            &format!(
                "no MCP session {} is open here (it ended, expired, or was never opened): nothing was ended",
                serde_json::Value::from(&*crate::network::text::echoed(id))
            ),
        );
    }
    // rmcp's words, =3.11.0 (`tower.rs`, an unknown `Mcp-Session-Id`: no content type).
    let mut answer = hyper::Response::new(
        http_body_util::Full::new(Bytes::from_static(b"Not Found: Session not found")).boxed(),
    );
    *answer.status_mut() = StatusCode::NOT_FOUND;
    answer
}

/// `response` ending when `grant` is revoked: looked at before each part of it is sent and
/// every [`LOOK_EVERY`] while none is.
pub fn ending_with_grant(
    response: HttpResponse,
    auth: Arc<AuthServer>,
    grant: String,
) -> HttpResponse {
    response.map(|inner| {
        let mut look = tokio::time::interval(LOOK_EVERY);
        look.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        EndsWithGrant {
            inner,
            auth,
            grant,
            look,
            ended: false,
        }
        .boxed()
    })
}

/// A body that ends (without an error: the client sees its stream end) when its grant is
/// revoked.
struct EndsWithGrant {
    inner: BoxBody<Bytes, Infallible>,
    auth: Arc<AuthServer>,
    grant: String,
    look: tokio::time::Interval,
    ended: bool,
}

impl EndsWithGrant {
    fn revoked(&mut self) -> bool {
        if !self.ended && !self.auth.grant_stands(&self.grant) {
            tracing::info!(
                grant = %self.grant,
                "ended an answer to a client: its grant was revoked"
            );
            self.ended = true;
        }
        self.ended
    }
}

impl Body for EndsWithGrant {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        let this = &mut *self;
        while this.look.poll_tick(cx).is_ready() {
            if this.revoked() {
                return Poll::Ready(None);
            }
        }
        match Pin::new(&mut this.inner).poll_frame(cx) {
            Poll::Ready(Some(_)) if this.revoked() => Poll::Ready(None),
            other => other,
        }
    }

    fn is_end_stream(&self) -> bool {
        self.ended || self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}
