//! `completion/complete`: what a host may offer while a person types a prompt's or the device
//! template's argument. `deviceName`: the exposed devices by name, by "location name" and as
//! `Node <id>`; `nodeId`: their node ids; `action`, `mode`, `tone`: what the device named in
//! the context's `deviceName` (or `nodeId`) takes. Hidden devices are never offered.
//!
//! Another reference or argument gets no values, not an error: the protocol lets a server
//! offer nothing, and a host asks while the person types, where an error helps nobody.

use rmcp::{
    ErrorData,
    model::{CompleteRequestParams, CompleteResult, CompletionInfo, Reference},
};

use super::{ZwaveServer, prompts::PROMPTS, resources::ResourceUri};
use crate::{
    devices::{self, Action, MAX_NAME_CHARS, Purpose},
    network::{NodeId, NodeInfo},
};

/// The template's address, as a completion reference names it.
const TEMPLATE: &str = "zwave://devices/{nodeId}";

impl ZwaveServer {
    /// What `completion/complete` offers for `request`.
    pub(super) async fn completion(
        &self,
        request: &CompleteRequestParams,
    ) -> Result<CompleteResult, ErrorData> {
        let ours = match &request.r#ref {
            Reference::Prompt(prompt) => PROMPTS.contains(&prompt.name.as_str()),
            Reference::Resource(resource) => resource.uri == TEMPLATE,
            _ => false,
        };
        let typed = request.argument.value.as_str();
        if !ours || typed.chars().count() > MAX_NAME_CHARS {
            return Ok(CompleteResult::default());
        }
        // Nothing loaded yet (the link is starting): wait for it, as reads do.
        let _ = self.readable().await;
        let context = |name: &str| {
            request
                .context
                .as_ref()
                .and_then(|context| context.get_argument(name))
                .map(String::as_str)
        };
        let candidates = match request.argument.name.as_str() {
            "deviceName" => self.device_names(),
            "nodeId" => self
                .viewer()
                .listed()
                .into_iter()
                .map(|(id, _, _)| id.0.to_string())
                .collect(),
            argument @ ("action" | "mode" | "tone") => {
                let device = match (context("deviceName"), context("nodeId")) {
                    (Some(name), _) => self.find_device(name, Purpose::Read).await.ok(),
                    (None, Some(id)) => self.visible_node(id),
                    (None, None) => None,
                };
                self.takes(device.as_ref(), argument)
            }
            _ => Vec::new(),
        };
        Ok(CompleteResult::new(completion(candidates, typed)))
    }

    /// Every name an exposed device answers to: its name, "location name" (unless the name
    /// starts with its location already: "Living Room Living Room Light" helps no one),
    /// `Node <id>`.
    fn device_names(&self) -> Vec<String> {
        let mut names = Vec::new();
        for (id, name, loc) in self.viewer().listed() {
            let named_there = name.to_lowercase().starts_with(&loc.to_lowercase());
            if !loc.is_empty() && !named_there {
                names.push(format!("{loc} {name}"));
            }
            let node = format!("Node {}", id.0);
            if name != node {
                names.push(name);
            }
            names.push(node);
        }
        names
    }

    /// The node a template's `nodeId` names, if the agent may see it.
    fn visible_node(&self, id: &str) -> Option<NodeInfo> {
        let ResourceUri::Device(id) = ResourceUri::parse(&format!("zwave://devices/{id}"))? else {
            return None;
        };
        let viewer = self.viewer();
        self.network.with_nodes(|nodes| {
            nodes
                .get(&NodeId(id.0))
                .filter(|node| viewer.is_visible(node))
                .cloned()
        })
    }

    /// What `device` takes for `argument`: its actions, its thermostat modes, its tones (none
    /// when the agent may not control it); with no device, every action.
    fn takes(&self, device: Option<&NodeInfo>, argument: &str) -> Vec<String> {
        match (device, argument) {
            (None, "action") => Action::ALL.iter().map(|a| a.as_str().to_owned()).collect(),
            (None, _) => Vec::new(),
            (Some(node), _) if !self.exposure.can_control(node) => Vec::new(),
            (Some(node), "action") => devices::actions(node)
                .iter()
                .map(|action| action.as_str().to_owned())
                .collect(),
            (Some(node), "mode") => devices::modes(node),
            (Some(node), "tone") => devices::tones(node),
            (Some(_), _) => Vec::new(),
        }
    }
}

/// The candidates that start with `typed` (case and spaces aside), then those that contain
/// it, each once, at most [`CompletionInfo::MAX_VALUES`]; with the total and whether more
/// match.
fn completion(candidates: Vec<String>, typed: &str) -> CompletionInfo {
    let fold = |text: &str| text.trim().to_lowercase();
    let typed = fold(typed);
    let mut starting = Vec::new();
    let mut containing = Vec::new();
    for candidate in candidates {
        let folded = fold(&candidate);
        if folded.starts_with(&typed) {
            starting.push(candidate);
        } else if folded.contains(&typed) {
            containing.push(candidate);
        }
    }
    let mut values = starting;
    values.append(&mut containing);
    let mut seen = std::collections::HashSet::new();
    values.retain(|value| seen.insert(value.clone()));
    let total = values.len();
    values.truncate(CompletionInfo::MAX_VALUES);
    let mut info = CompletionInfo::default();
    info.has_more = Some(total > values.len());
    info.total = Some(u32::try_from(total).unwrap_or(u32::MAX));
    info.values = values;
    info
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(values: &[&str]) -> Vec<String> {
        values.iter().map(|v| (*v).to_owned()).collect()
    }

    #[test]
    fn names_that_start_with_the_text_come_before_those_that_contain_it() {
        let info = completion(
            names(&["Kitchen Plug", "Hall Light", "Kitchen Light", "Node 4"]),
            "li",
        );
        assert_eq!(info.values, ["Hall Light", "Kitchen Light"]);
        let info = completion(
            names(&["Kitchen Plug", "Hall Light", "Kitchen Light"]),
            "KIT",
        );
        assert_eq!(info.values, ["Kitchen Plug", "Kitchen Light"]);
        assert_eq!(info.total, Some(2));
        assert_eq!(info.has_more, Some(false));
    }

    #[test]
    fn at_most_a_hundred_values_are_offered_and_the_rest_counted() {
        let many: Vec<String> = (1..=232).map(|id| format!("Node {id}")).collect();
        let info = completion(many, "node");
        assert_eq!(info.values.len(), CompletionInfo::MAX_VALUES);
        assert_eq!(info.total, Some(232));
        assert_eq!(info.has_more, Some(true));
        assert!(info.validate().is_ok());
    }

    #[test]
    fn nothing_typed_offers_everything_once() {
        let info = completion(names(&["a", "b", "a"]), "");
        assert_eq!(info.values, ["a", "b"]);
    }
}
