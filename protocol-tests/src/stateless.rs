//! [`Stateless`]: protocol 2026-07-28 over a raw [`Session`]. There is no handshake: every
//! request carries the revision's `_meta` (protocol version, client capabilities, client
//! info), and every result is kept for the checks that judge them all. It judges nothing.

use std::time::Duration;

use rmcp::model::{
    ClientCapabilities, ElicitationCapability, FormElicitationCapability, Implementation,
    ProtocolVersion, RequestMetaObject,
};
use serde_json::{Value, json};

use crate::session::{ANSWER_TIMEOUT, Session};

/// The revision without the `initialize` handshake.
pub const REVISION: &str = "2026-07-28";

/// A result the server answered, with the method that asked for it.
#[derive(Debug, Clone)]
pub struct Answered {
    /// The request's method.
    pub method: String,
    /// The response's `result`.
    pub result: Value,
}

/// A server spoken to at 2026-07-28.
pub struct Stateless {
    session: Session,
    /// The `_meta` every request carries.
    meta: Value,
    /// Every result of a request sent with [`Stateless::request`], in order.
    answered: Vec<Answered>,
    /// How long a request waits for its answer.
    answer_timeout: Duration,
}

impl Stateless {
    /// Speaks 2026-07-28 over `session`, as a client that can show forms to its user and can
    /// do nothing else the server might ask of it (no sampling, no roots).
    pub fn new(session: Session) -> Self {
        let mut capabilities = ClientCapabilities::default();
        capabilities.elicitation =
            Some(ElicitationCapability::new().with_form(FormElicitationCapability::new()));
        let meta = RequestMetaObject::with_client_context(
            ProtocolVersion::V_2026_07_28,
            Implementation::new("mcp-conformance", env!("CARGO_PKG_VERSION")),
            capabilities,
        );
        Self {
            session,
            meta: serde_json::to_value(meta).unwrap_or_else(|_| json!({})),
            answered: Vec::new(),
            answer_timeout: ANSWER_TIMEOUT,
        }
    }

    /// Waits `timeout` for each answer instead of [`ANSWER_TIMEOUT`].
    #[must_use]
    pub fn with_answer_timeout(mut self, timeout: Duration) -> Self {
        self.answer_timeout = timeout;
        self
    }

    /// How long a request waits for its answer.
    pub fn answer_timeout(&self) -> Duration {
        self.answer_timeout
    }

    /// The `_meta` every request carries.
    pub fn meta(&self) -> &Value {
        &self.meta
    }

    /// Sends `method` with `params` (an object) and the revision's `_meta`, and waits for its
    /// response, at most [`Stateless::answer_timeout`].
    pub async fn request(&mut self, method: &str, mut params: Value) -> Option<Value> {
        if let Some(object) = params.as_object_mut() {
            object.insert("_meta".to_owned(), self.meta.clone());
        }
        let response = self
            .session
            .request(method, Some(params), self.answer_timeout)
            .await?;
        if let Some(result) = response.get("result") {
            self.answered.push(Answered {
                method: method.to_owned(),
                result: result.clone(),
            });
        }
        Some(response)
    }

    /// Every result answered to [`Stateless::request`] so far.
    pub fn answered(&self) -> &[Answered] {
        &self.answered
    }

    /// The raw session: requests sent through it carry nothing added and are not kept.
    pub fn session(&mut self) -> &mut Session {
        &mut self.session
    }
}
