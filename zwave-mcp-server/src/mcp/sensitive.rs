//! Actions that open a home or silence an alarm (unlock, open a garage door, silence a
//! siren): refused unless the owner allowed them, and then carried out only after a person
//! said yes through MCP elicitation, or without asking when the owner chose so
//! (`--sensitive-without-confirmation`, documented with its risk).

use std::{collections::BTreeSet, time::Duration};

use rmcp::{Peer, RoleServer, service::ElicitationError};
use schemars::JsonSchema;
use serde::Deserialize;
use tracing::{info, warn};

use super::error::ToolError;
use crate::{
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
#[derive(Debug, Deserialize, JsonSchema)]
struct Confirmation {
    /// Carry it out now?
    confirm: bool,
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

impl SensitivePolicy {
    /// Whether `plan` may be carried out: at once when it is not sensitive; else only when
    /// the owner allowed its class and a person said yes through `peer` (or the owner chose
    /// to do without asking).
    ///
    /// # Errors
    /// [`ToolError::Sensitive`] saying why nothing was sent and what would allow it.
    pub(super) async fn check(
        &self,
        plan: &WritePlan,
        node: &NodeInfo,
        device: &str,
        peer: &Peer<RoleServer>,
    ) -> Result<(), ToolError> {
        // Both rules apply, each only ever adding to what is needed: an action of a sensitive
        // class needs the owner's leave for its class, marked device or not; a device the
        // owner marked needs a person's yes for any action, whatever
        // --sensitive-without-confirmation says.
        let marked = self.devices.iter().any(|rule| rule.matches(node));
        let Some(sensitive) = plan.sensitive.or(marked.then_some(Sensitive::Marked)) else {
            return Ok(());
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
        if self.without_confirmation && !marked {
            warn!(%device, action = %plan.words.infinitive, "sensitive action carried out without asking anyone (--sensitive-without-confirmation)");
            return Ok(());
        }
        let reasons = match (sensitive, marked) {
            (Sensitive::Marked, _) | (_, false) => because(sensitive).to_owned(),
            (class_rule, true) => {
                format!("{}; {}", because(class_rule), because(Sensitive::Marked))
            }
        };
        let question = format!(
            "{} {device}? An AI agent asks for it ({reasons}).",
            capitalized(&plan.words.infinitive),
        );
        info!(%device, action = %plan.words.infinitive, "asking the user to confirm a sensitive action");
        let answer = peer
            .elicit_with_timeout::<Confirmation>(question, Some(self.ask_timeout))
            .await;
        let refused = |why: String| {
            Err(ToolError::Sensitive(format!(
                "{what} needs a person's yes, and {why}: nothing was sent."
            )))
        };
        match answer {
            Ok(Some(Confirmation { confirm: true })) => {
                info!(%device, action = %plan.words.infinitive, "the user confirmed the sensitive action");
                Ok(())
            }
            Ok(Some(Confirmation { confirm: false })) => {
                refused("the user answered no".to_owned())
            }
            Err(ElicitationError::UserDeclined) => refused("the user declined".to_owned()),
            Err(ElicitationError::UserCancelled) => {
                refused("the user dismissed the question".to_owned())
            }
            Err(ElicitationError::CapabilityNotSupported) if marked => refused(
                "this client cannot ask its user (it did not declare MCP elicitation). Use a client that can: the owner marked this device sensitive, so a person is asked even under --sensitive-without-confirmation"
                    .to_owned(),
            ),
            Err(ElicitationError::CapabilityNotSupported) => refused(
                "this client cannot ask its user (it did not declare MCP elicitation). Use a client that can, or the owner can start the server with --sensitive-without-confirmation, which lets any agent do it unasked"
                    .to_owned(),
            ),
            Err(ElicitationError::Service(rmcp::ServiceError::Timeout { .. })) => {
                refused(format!("nobody answered within {:?}", self.ask_timeout))
            }
            Ok(None) | Err(ElicitationError::NoContent) => {
                refused("the answer did not say yes".to_owned())
            }
            // What the client sent back is echoed cut, as every argument is.
            Err(other) => refused(format!(
                "the question could not be asked ({})",
                crate::network::text::echoed(&other.to_string())
            )),
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
