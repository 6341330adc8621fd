//! The prompts a person picks from a host's menu, each read-only: it asks the model to read and
//! report, never to switch anything (the control tool asks its own questions when a person
//! then wants something done). Each embeds what it is about, as the resource reads it now,
//! so a host that does not call tools still gets the facts.
//!
//! | prompt | for |
//! |---|---|
//! | `home_overview` | what is on, open, unlocked, low on battery, offline |
//! | `secured_for_night` | whether every lock is locked and every door, window and blind closed, and which are not |
//! | `device_help` | one device (`deviceName`): what it is, its state, what it takes and how to ask |
//! | `network_health` | which devices are dead or weak and why |

use rmcp::{
    ErrorData,
    handler::server::wrapper::Parameters,
    model::{GetPromptResult, PromptMessage, Role},
    prompt, prompt_router,
};
use schemars::JsonSchema;
use serde::Deserialize;

use super::{ZwaveServer, resources::ResourceUri};
use crate::{
    devices::{self, Purpose},
    network::now_ms,
};

/// The prompts' names.
pub(super) const PROMPTS: [&str; 4] = [
    "home_overview",
    "secured_for_night",
    "device_help",
    "network_health",
];

/// The longest prompt name a refusal quotes.
const MAX_QUOTED_NAME: usize = 64;

/// Arguments of `device_help`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct DeviceHelpArgs {
    /// The device: its name, "location name", or Node <id>.
    pub device_name: String,
}

#[prompt_router(vis = "pub(crate)")]
#[allow(
    missing_docs,
    reason = "rmcp's #[prompt] adds an undocumented public function per prompt"
)]
impl ZwaveServer {
    /// What is on, open, unlocked, low on battery or offline in the home now.
    #[prompt(
        name = "home_overview",
        description = "An overview of the home now: what is on, open, unlocked, low on battery or offline."
    )]
    async fn home_overview_prompt(&self) -> Result<GetPromptResult, ErrorData> {
        let home = self.embedded(ResourceUri::Home).await?;
        Ok(GetPromptResult::new(vec![
            home,
            PromptMessage::new_text(
                Role::User,
                "Give me an overview of my home from the Z-Wave devices above: what is on (lights, plugs, sirens), what is open (doors, windows, blinds, garage doors), what is unlocked, which batteries are low (below 20 %), and which devices are offline. Group them that way, name each device with its location, and say when a state may be out of date. Change nothing.",
            ),
        ])
        .with_description("An overview of the home now"))
    }

    /// Whether the home is secured for the night, and what is not.
    #[prompt(
        name = "secured_for_night",
        description = "Checks that the home is secured for the night: every lock locked, every door, window, blind and garage door closed, no siren sounding; lists what is not, without changing anything."
    )]
    async fn secured_for_night_prompt(&self) -> Result<GetPromptResult, ErrorData> {
        let home = self.embedded(ResourceUri::Home).await?;
        Ok(GetPromptResult::new(vec![
            home,
            PromptMessage::new_text(
                Role::User,
                "Is my home secured for the night? From the Z-Wave devices above, check that every lock is locked, every door, window, blind and garage door is closed, no siren is sounding, and no light is left on. List what is not, with its location; say which devices are offline or whose state may be out of date, since their state is not known. Do not change anything: if something should be locked or closed, tell me and let me decide.",
            ),
        ])
        .with_description("Whether the home is secured for the night"))
    }

    /// One device: what it is, its state, what it takes and how to ask for it.
    #[prompt(
        name = "device_help",
        description = "Explains one device: what it is, its state and readings, and what can be asked of it (actions, thermostat modes, siren tones)."
    )]
    async fn device_help_prompt(
        &self,
        Parameters(args): Parameters<DeviceHelpArgs>,
    ) -> Result<GetPromptResult, ErrorData> {
        let node = self
            .find_device(&args.device_name, Purpose::Read)
            .await
            .map_err(|err| ErrorData::invalid_params(err.to_string(), None))?;
        let device = self.embedded(ResourceUri::Device(node.id)).await?;
        // What the agent may ask of it: nothing when it may not control it (read-only, or the
        // owner's control rules), its modes and tones included.
        let mut takes = Vec::new();
        if self.exposure.can_control(&node) {
            let actions = devices::actions(&node);
            if !actions.is_empty() {
                takes.push(format!("actions: {}", devices::action_list(&actions)));
            }
            let modes = devices::modes(&node);
            if !modes.is_empty() {
                takes.push(format!("thermostat modes: {}", modes.join(", ")));
            }
            let tones = devices::tones(&node);
            if !tones.is_empty() {
                takes.push(format!("tones: {}", tones.join(", ")));
            }
        }
        let takes = if takes.is_empty() {
            "It takes no action from this assistant (it only reports).".to_owned()
        } else {
            format!("It takes {}.", takes.join("; "))
        };
        Ok(GetPromptResult::new(vec![
            device,
            PromptMessage::new_text(
                Role::User,
                format!(
                    "Explain {} to me: what it is, its state and readings now (and how old they are), and what I can ask of it. {takes} Change nothing.",
                    devices::describe(&node)
                ),
            ),
        ])
        .with_description(format!("Help for {}", devices::describe(&node))))
    }

    /// Which devices are dead or weak, and why.
    #[prompt(
        name = "network_health",
        description = "Which Z-Wave devices are dead or have a weak link, and why, with what could help."
    )]
    async fn network_health_prompt(&self) -> Result<GetPromptResult, ErrorData> {
        Ok(GetPromptResult::new(vec![PromptMessage::new_text(
            Role::User,
            "Check my Z-Wave network's health with get_zwave_health: which devices are dead or have a weak link, why (lost or late commands, weak signal, long routes, not heard from), and what could help (a repeater, new batteries, moving the controller). Ping a device only if I ask. Change nothing.",
        )])
        .with_description("The network's health"))
    }
}

impl ZwaveServer {
    /// `uri` as the resource reads now, embedded in a prompt (its text).
    async fn embedded(&self, uri: ResourceUri) -> Result<PromptMessage, ErrorData> {
        self.readable().await.map_err(|err| {
            ErrorData::internal_error(format!("cannot read {uri} now: {err}"), None)
        })?;
        let shown = self.viewer().show(uri, Some(now_ms())).ok_or_else(|| {
            ErrorData::invalid_params(format!("{uri} is not there any more"), None)
        })?;
        Ok(PromptMessage::new_resource(
            Role::User,
            uri.to_string(),
            Some("text/plain".to_owned()),
            Some(shown.text),
            None,
            None,
            None,
        ))
    }
}

impl ZwaveServer {
    /// The refusal of a prompt this server does not have, quoting at most [`MAX_QUOTED_NAME`]
    /// characters of its name.
    pub(super) fn unknown_prompt(name: &str) -> ErrorData {
        let quoted: String = name.chars().take(MAX_QUOTED_NAME).collect();
        let cut = if quoted.len() < name.len() { "…" } else { "" };
        ErrorData::invalid_params(
            format!(
                "no prompt named {:?}{cut}: the prompts are {}",
                quoted,
                PROMPTS.join(", ")
            ),
            None,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_router_has_exactly_the_prompts_named() {
        let mut listed: Vec<String> = ZwaveServer::prompt_router()
            .list_all()
            .into_iter()
            .map(|prompt| prompt.name)
            .collect();
        listed.sort();
        let mut named = PROMPTS.map(str::to_owned).to_vec();
        named.sort();
        assert_eq!(listed, named);
    }

    #[test]
    fn device_help_asks_for_a_device_name() {
        let prompt = ZwaveServer::prompt_router()
            .list_all()
            .into_iter()
            .find(|prompt| prompt.name == "device_help")
            .unwrap();
        let arguments = prompt.arguments.unwrap();
        assert_eq!(arguments.len(), 1);
        assert_eq!(arguments[0].name, "deviceName");
        assert_eq!(arguments[0].required, Some(true));
    }

    #[test]
    fn an_unknown_prompt_is_refused_naming_the_prompts_without_echoing_a_megabyte() {
        let refused = ZwaveServer::unknown_prompt(&"x".repeat(1 << 20));
        assert!(refused.message.len() < 300, "{}", refused.message);
        assert!(refused.message.contains("home_overview, secured_for_night"));
        let refused = ZwaveServer::unknown_prompt("weather");
        assert!(
            refused
                .message
                .starts_with("no prompt named \"weather\": the prompts are")
        );
    }
}
