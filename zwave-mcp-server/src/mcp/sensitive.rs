//! Actions that open a home or silence an alarm (unlock, open a garage door, silence a
//! siren): refused unless the owner allowed them, and then carried out only after a person
//! said yes through MCP elicitation, or without asking when the owner chose so
//! (`--sensitive-without-confirmation`, documented with its risk).

use std::{collections::BTreeSet, time::Duration};

use rmcp::{
    Peer, RoleServer,
    model::{ElicitationSchema, ErrorCode, ErrorData},
    service::ElicitationError,
};
use schemars::JsonSchema;
use serde::Deserialize;
use tracing::{info, warn};

use super::error::ToolError;
use crate::{
    auth::{Scope, Scopes},
    devices::{Rule, Sensitive, SensitiveClass, WritePlan},
    network::NodeInfo,
};

/// What the owner allows of sensitive actions.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SensitivePolicy {
    /// The classes allowed: `lock` (unlock), `garage` (open a garage door or gate), `siren`
    /// (silence).
    pub allowed: BTreeSet<SensitiveClass>,
    /// Carry an allowed action out without asking anyone.
    pub without_confirmation: bool,
    /// How long a person has to answer.
    pub ask_timeout: Duration,
    /// Devices the owner marked sensitive: every action on them needs a person's yes.
    pub devices: Vec<Rule>,
    /// Whether anyone who can reach the server is a client (HTTP without a token): then no
    /// yes can be told from the agent's own, and every sensitive action is refused.
    pub unauthenticated_clients: bool,
}

impl Default for SensitivePolicy {
    fn default() -> Self {
        Self {
            allowed: BTreeSet::new(),
            without_confirmation: false,
            ask_timeout: Duration::from_secs(60),
            devices: Vec::new(),
            unauthenticated_clients: false,
        }
    }
}

/// What a person is asked to confirm: one yes/no field.
#[derive(Debug, JsonSchema)]
pub(super) struct Confirmation {
    /// Carry it out now?
    pub confirm: bool,
}

/// Only the form's own shape is an answer: an object with `confirm` a boolean. serde's derived
/// reading of a struct also takes a list (`[true]`), which no form returns.
impl<'de> Deserialize<'de> for Confirmation {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        struct Fields {
            confirm: bool,
        }
        let object = serde_json::Map::<String, serde_json::Value>::deserialize(deserializer)?;
        let Fields { confirm } = Fields::deserialize(serde_json::Value::Object(object))
            .map_err(serde::de::Error::custom)?;
        Ok(Self { confirm })
    }
}

rmcp::elicit_safe!(Confirmation);

/// "Unlocking", "Opening", "Silencing", "Commanding".
fn gerund(sensitive: Sensitive) -> &'static str {
    match sensitive {
        Sensitive::Unlock => "Unlocking",
        Sensitive::OpenBarrier => "Opening",
        Sensitive::Silence => "Silencing",
        Sensitive::ReplaceTone => "Changing the tone of",
        Sensitive::Marked => "Commanding",
    }
}

/// Why it is sensitive.
fn because(sensitive: Sensitive) -> &'static str {
    match sensitive {
        Sensitive::Unlock | Sensitive::OpenBarrier => "it opens the home",
        Sensitive::Silence => "it can silence an alarm",
        Sensitive::ReplaceTone => "a tone is sounding, and a new one ends it: it may be an alarm",
        Sensitive::Marked => "the owner marked this device sensitive",
    }
}

/// A question a person must answer yes to before a sensitive action is carried out.
#[derive(Debug, Clone)]
pub(super) struct Question {
    /// "Unlocking \"Front Door Lock\" (node 8, Entrance)": what the refusals are about.
    pub what: String,
    /// What the person reads.
    pub message: String,
    /// The owner marked the device sensitive: no flag lets it through unasked.
    pub marked: bool,
}

impl Question {
    /// The refusal when the person's yes did not come, `why`.
    pub fn refused(&self, why: &str) -> ToolError {
        ToolError::Sensitive(format!(
            "{} needs a person's yes, and {why}: nothing was sent.",
            self.what
        ))
    }

    /// The refusal for a client that did not declare MCP elicitation.
    pub fn cannot_ask(&self) -> ToolError {
        self.refused(self.cannot_ask_why())
    }

    /// [`Question::cannot_ask`] on 2026-07-28, where the protocol has an error for it:
    /// -32021 (missing required client capability), naming form elicitation in its data.
    pub fn missing_capability(&self) -> ToolError {
        ToolError::Protocol(ErrorData::new(
            ErrorCode::MISSING_REQUIRED_CLIENT_CAPABILITY,
            self.refused(self.cannot_ask_why()).to_string(),
            Some(serde_json::json!({"requiredCapabilities": {"elicitation": {"form": {}}}})),
        ))
    }

    fn cannot_ask_why(&self) -> &'static str {
        if self.marked {
            "this client cannot ask its user (it did not declare MCP elicitation). Use a client that can: the owner marked this device sensitive, so a person is asked even under --sensitive-without-confirmation"
        } else {
            "this client cannot ask its user (it did not declare MCP elicitation). Use a client that can, or the owner can start the server with --sensitive-without-confirmation, which lets any agent do it unasked"
        }
    }

    /// What the form asks: one required yes/no field, `confirm`.
    pub fn schema() -> Result<ElicitationSchema, ToolError> {
        ElicitationSchema::from_type::<Confirmation>()
            .map_err(|err| ToolError::Encode(format!("the confirmation form: {err}")))
    }
}

impl SensitivePolicy {
    /// What a person must say yes to before `plan` is carried out on `node` (`device`,
    /// described): nothing when it is not sensitive, or when the owner chose to do without
    /// asking.
    ///
    /// # Errors
    /// [`ToolError::Sensitive`] when no yes can allow it: the owner did not allow its class,
    /// or anyone can be a client (HTTP without a token).
    pub(super) fn question(
        &self,
        plan: &WritePlan,
        node: &NodeInfo,
        device: &str,
        granted: Scopes,
    ) -> Result<Option<Question>, ToolError> {
        // Both rules apply, each only ever adding to what is needed: an action of a sensitive
        // class needs the owner's leave for its class, marked device or not; a device the
        // owner marked needs a person's yes for any action, whatever
        // --sensitive-without-confirmation says.
        let marked = self.devices.iter().any(|rule| rule.matches(node));
        let Some(sensitive) = plan.sensitive.or(marked.then_some(Sensitive::Marked)) else {
            return Ok(None);
        };
        let what = format!("{} {device}", gerund(sensitive));
        if self.unauthenticated_clients {
            return Err(ToolError::Sensitive(format!(
                "{what} is a sensitive action ({}), and this server is served over HTTP without a token: any program on its machine can be a client and answer its own question, so no sensitive action is carried out. Nothing was sent. The owner can set --http-token-file (or ZWAVE_MCP_HTTP_TOKEN) to allow them.",
                because(sensitive)
            )));
        }
        if let Some(class) = sensitive.class()
            && !self.allowed.contains(&class)
        {
            return Err(ToolError::Sensitive(format!(
                "{what} is a sensitive action ({}) and the owner of this server has not allowed it: nothing was sent. The owner can allow it with --allow-sensitive {class} (or ZWAVE_MCP_ALLOW_SENSITIVE={class}); a person will then be asked to confirm each time.",
                because(sensitive)
            )));
        }
        // Checked after the owner's own settings: a client told to sign in again for a scope
        // would still be refused by them (found against the real Z-Wave JS UI).
        if !granted.has(Scope::Sensitive) {
            return Err(ToolError::Sensitive(format!(
                "{what} is a sensitive action ({}), and the owner's grant to this client does not include `sensitive`: nothing was sent. The client can sign in again asking for it; the owner decides on the approval page (and a person is still asked each time).",
                because(sensitive)
            )));
        }
        if self.without_confirmation && !marked {
            warn!(%device, action = %plan.words.infinitive, "sensitive action carried out without asking anyone (--sensitive-without-confirmation)");
            return Ok(None);
        }
        let reasons = match (sensitive, marked) {
            (Sensitive::Marked, _) | (_, false) => because(sensitive).to_owned(),
            (class_rule, true) => {
                format!("{}; {}", because(class_rule), because(Sensitive::Marked))
            }
        };
        let message = format!(
            "{} {device}? An AI agent asks for it ({reasons}).",
            capitalized(&plan.words.infinitive),
        );
        Ok(Some(Question {
            what,
            message,
            marked,
        }))
    }

    /// What a person must say yes to before `operation` runs on `node` (`device`, described):
    /// a question only when the owner marked the device sensitive, whatever
    /// --sensitive-without-confirmation says (as for any action on a marked device).
    pub(super) fn upkeep_question(
        &self,
        node: &NodeInfo,
        device: &str,
        operation: crate::network::health::upkeep::Upkeep,
    ) -> Option<Question> {
        if !self.devices.iter().any(|rule| rule.matches(node)) {
            return None;
        }
        Some(Question {
            what: format!("Starting {} of {device}", operation.with_article()),
            message: format!(
                "Start {} of {device}? An AI agent asks for it ({}; it keeps the device busy for up to minutes).",
                operation.with_article(),
                because(Sensitive::Marked)
            ),
            marked: true,
        })
    }

    /// Asks `question` through `peer` (MCP elicitation, up to 2025-11-25) and waits for the
    /// answer at most the ask timeout.
    ///
    /// # Errors
    /// [`ToolError::Sensitive`] for every answer but an explicit yes.
    pub(super) async fn elicit(
        &self,
        question: &Question,
        device: &str,
        peer: &Peer<RoleServer>,
    ) -> Result<(), ToolError> {
        info!(%device, "asking the user to confirm a sensitive action");
        let answer = peer
            .elicit_with_timeout::<Confirmation>(question.message.clone(), Some(self.ask_timeout))
            .await;
        let refused = |why: &str| Err(question.refused(why));
        match answer {
            Ok(Some(Confirmation { confirm: true })) => {
                info!(%device, "the user confirmed the sensitive action");
                Ok(())
            }
            Ok(Some(Confirmation { confirm: false })) => refused("the user answered no"),
            Err(ElicitationError::UserDeclined) => refused("the user declined"),
            Err(ElicitationError::UserCancelled) => refused("the user dismissed the question"),
            Err(ElicitationError::CapabilityNotSupported) => Err(question.cannot_ask()),
            Err(ElicitationError::Service(rmcp::ServiceError::Timeout { .. })) => {
                refused(&format!("nobody answered within {:?}", self.ask_timeout))
            }
            Ok(None) | Err(ElicitationError::NoContent) => refused("the answer did not say yes"),
            // rmcp's words ("Service error: Mcp error: -32600: …") are for the log; the model
            // reads ours.
            Err(other) => {
                warn!(%device, error = %other, "the question about a sensitive action could not be asked");
                refused("the question could not be asked (the client did not take it)")
            }
        }
    }
}

/// "Unlock", from "unlock".
fn capitalized(text: &str) -> String {
    let mut chars = text.chars();
    chars
        .next()
        .map(|first| first.to_uppercase().chain(chars).collect())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::Confirmation;

    #[test]
    fn only_an_object_with_a_boolean_confirm_is_an_answer() {
        let read = |value| serde_json::from_value::<Confirmation>(value).map(|c| c.confirm);
        assert_eq!(read(json!({"confirm": true})).ok(), Some(true));
        assert_eq!(read(json!({"confirm": false})).ok(), Some(false));
        for not_an_answer in [
            json!([true]),
            json!({"confirm": "true"}),
            json!({"confirm": 1}),
            json!({}),
            json!(true),
            json!(null),
        ] {
            assert!(read(not_an_answer.clone()).is_err(), "{not_an_answer}");
        }
    }
}
