//! [`Retry`]: how a person's yes reaches a call on MCP 2026-07-28, where a server sends no
//! request to its client. The first call is answered with an `InputRequiredResult` (the
//! question, as the elicitation form of older revisions asks it, and a sealed request state);
//! the client calls again with the person's answer under [`ANSWER_KEY`] and that state. Only
//! an explicit accept with `confirm: true`, on a state that [`QuestionSeal`] redeems for this
//! same call, lets the write through.

use std::{collections::BTreeMap, time::Duration};

use rmcp::{
    Peer, RoleServer,
    model::{
        ElicitRequest, ElicitRequestParams, ElicitResult, ElicitationAction, ErrorData,
        InputRequest, InputRequiredResult, InputResponses, ProtocolVersion,
    },
    service::RequestContext,
};
use tracing::{info, warn};

use super::{
    error::ToolError,
    seal::{AskedCall, QuestionSeal, Unsealed},
    sensitive::{Confirmation, Question},
};

/// The key of the question in `inputRequests`, and of its answer in `inputResponses`.
pub(super) const ANSWER_KEY: &str = "confirmation";

/// How a person is asked about a sensitive action on this call.
pub(super) enum Asking<'a> {
    /// Up to 2025-11-25: an elicitation request to the client, whose answer is awaited.
    Elicit(&'a Peer<RoleServer>),
    /// From 2026-07-28: the question is the call's answer; the call comes back with the yes.
    Retry(Retry),
}

/// What a call of protocol 2026-07-28 or later brings for a question: whether its client can
/// ask its user, and the answer and state of a retried call.
#[derive(Debug, Default)]
pub(super) struct Retry {
    /// The client declared form elicitation on this request.
    pub can_ask: bool,
    /// The `requestState` the client sent back, if any.
    pub state: Option<String>,
    /// The `inputResponses` the client sent, if any.
    pub responses: Option<InputResponses>,
    /// Who asks, as the client names itself: its share of the open questions is its own.
    pub client: String,
}

impl Retry {
    /// What the request in `context` brings, when its revision forbids server-to-client
    /// requests (2026-07-28 or later); `None` for older ones, which are asked by elicitation.
    pub fn of(
        context: &RequestContext<RoleServer>,
        state: Option<String>,
        responses: Option<InputResponses>,
    ) -> Option<Self> {
        let version = context.protocol_version()?;
        if version < ProtocolVersion::V_2026_07_28 {
            return None;
        }
        // As rmcp reads the capability of older revisions: an empty `elicitation` is a form.
        let can_ask = context
            .client_capabilities()
            .and_then(|capabilities| capabilities.elicitation)
            .is_some_and(|elicitation| elicitation.form.is_some() || elicitation.url.is_none());
        Some(Self {
            can_ask,
            state,
            responses,
            client: client_label(context.client_info()),
        })
    }

    /// The person's yes to `question` about `call`, carried by this call: `Ok(None)` lets the
    /// write through; `Ok(Some(_))` is the question to answer the call with (its first round).
    ///
    /// # Errors
    /// [`ToolError::Sensitive`] for everything but a yes on a state that verifies, has not
    /// expired, was never redeemed and names this same call.
    pub fn confirm(
        self,
        question: &Question,
        call: AskedCall,
        seal: &QuestionSeal,
        ttl: Duration,
    ) -> Result<Option<InputRequiredResult>, ToolError> {
        if !self.can_ask {
            return Err(question.missing_capability());
        }
        let answer = self
            .responses
            .as_ref()
            .and_then(|responses| responses.get(ANSWER_KEY));
        let Some(state) = self.state else {
            if answer.is_some() {
                warn!(device = %call.name, node = call.node, "an answer came without the question's request state");
                return Err(question.refused(
                    "the answer came without the request state of its question (call again without an answer to be asked)",
                ));
            }
            info!(device = %call.name, node = call.node, "asking the user to confirm a sensitive action (input required)");
            return ask(question, call, seal, ttl, &self.client).map(Some);
        };
        if let Err(unsealed) = seal.redeem(&state, &call) {
            warn!(device = %call.name, node = call.node, reason = ?unsealed, "a retried call's request state was refused");
            let why = match unsealed {
                Unsealed::Tampered => {
                    // Not the person's answer: the request itself is not valid (-32602).
                    let refused = question.refused("the request state sent back does not verify (it was altered, or sealed by another server process: a replica, or this server before a restart; call again without it to be asked again)");
                    return Err(ToolError::Protocol(ErrorData::invalid_params(
                        refused.to_string(),
                        None,
                    )));
                }
                Unsealed::Expired => format!("nobody answered within {ttl:?}"),
                Unsealed::OtherCall => "the answer was given to another call (another device, action or arguments, or the device was renamed or moved since)".to_owned(),
                Unsealed::Replayed => "that answer was used already: one yes allows one command (call again without it to be asked again)".to_owned(),
            };
            return Err(question.refused(&why));
        }
        let Some(answer) = answer else {
            return Err(question.refused("the retried call carried no answer to the question"));
        };
        match serde_json::from_value::<ElicitResult>(answer.clone()) {
            Ok(ElicitResult {
                action: ElicitationAction::Accept,
                content: Some(content),
                ..
            }) => match serde_json::from_value::<Confirmation>(content) {
                Ok(Confirmation { confirm: true }) => {
                    info!(device = %call.name, node = call.node, "the user confirmed the sensitive action");
                    Ok(None)
                }
                Ok(Confirmation { confirm: false }) => {
                    Err(question.refused("the user answered no"))
                }
                Err(_) => Err(question.refused("the answer did not say yes")),
            },
            Ok(ElicitResult {
                action: ElicitationAction::Decline,
                ..
            }) => Err(question.refused("the user declined")),
            Ok(ElicitResult {
                action: ElicitationAction::Cancel,
                ..
            }) => Err(question.refused("the user dismissed the question")),
            Ok(_) | Err(_) => Err(question.refused("the answer did not say yes")),
        }
    }
}

/// The answer that asks `question`: the form of older revisions' elicitation, with the
/// sealed state of `call`.
fn ask(
    question: &Question,
    call: AskedCall,
    seal: &QuestionSeal,
    ttl: Duration,
    client: &str,
) -> Result<InputRequiredResult, ToolError> {
    let state = seal.seal(call, ttl, client).map_err(|crowded| {
        warn!(%client, ?crowded, "not asking: too many questions are open");
        question.refused(&crowded.why(ttl))
    })?;
    let form = ElicitRequest::new(ElicitRequestParams::FormElicitationParams {
        meta: None,
        message: question.message.clone(),
        requested_schema: Question::schema()?,
    });
    let requests = BTreeMap::from([(ANSWER_KEY.to_owned(), InputRequest::Elicitation(form))]);
    Ok(InputRequiredResult::new(Some(requests), Some(state)))
}

/// The longest client name or version kept for telling clients apart.
const MAX_CLIENT_CHARS: usize = 64;

/// A client as it names itself, in words: `the client "Claude" 1.2`. Self-declared, so it
/// tells apart clients that behave, not a client that lies; the bound on all clients together
/// holds whatever they say.
fn client_label(info: Option<rmcp::model::Implementation>) -> String {
    let Some(info) = info else {
        return "a client that gave no name".to_owned();
    };
    let clip = |text: &str| crate::network::text::clean(text, MAX_CLIENT_CHARS).into_owned();
    format!(
        "the client {} {}",
        serde_json::Value::from(clip(&info.name)),
        clip(&info.version)
    )
}
