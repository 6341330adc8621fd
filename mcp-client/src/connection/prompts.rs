//! Prompts a person picks from a server's menu, and completions of an argument's value, asked
//! through its [`ServerConnection`]: `prompts/list` (every page, bounded as tools are),
//! `prompts/get` with its arguments, `completion/complete` for a prompt's or a resource
//! template's argument. Timeouts, restarts and errors are those of `tools/call`.

use std::collections::{BTreeMap, HashMap};

use rmcp::model::{
    ArgumentInfo, CompleteRequestParams, CompletionContext, CompletionInfo, GetPromptRequestParams,
    GetPromptResponse, GetPromptResult, JsonObject, Prompt, Reference,
};

use super::{ClientError, ServerConnection, live::request, pages::Listing, resources::Offer};

/// Most prompts kept from one server.
pub const MAX_PROMPTS: usize = 4096;

/// Most completion values passed on: the spec's own cap on one answer.
pub const MAX_COMPLETIONS: usize = CompletionInfo::MAX_VALUES;

impl ServerConnection {
    /// The server's prompts (every page, at most [`MAX_PROMPTS`]).
    ///
    /// # Errors
    /// [`ClientError::NotSent`] when the server offers no prompts; otherwise as
    /// [`ServerConnection::call_tool`].
    pub async fn prompts(&self) -> Result<Vec<Prompt>, ClientError> {
        let method = "prompts/list";
        let live = self.offering(method, Offer::Prompts).await?;
        let listing = Listing {
            server: self.name(),
            method,
            items: "prompts",
            max: MAX_PROMPTS,
        };
        let peer = &live.peer;
        let listed = listing.all(|params| async move {
            let page = peer.list_prompts(params).await?;
            Ok((page.prompts, page.next_cursor))
        });
        let listed = request(&live, self.config().call_timeout, method, listed).await;
        self.settle(&live, listed).await
    }

    /// The prompt `name` with `arguments` filled in (prompt arguments are strings): its
    /// messages, the server's untrusted text.
    ///
    /// # Errors
    /// [`ClientError::NotSent`] when the server offers no prompts or `name` is empty;
    /// [`ClientError::Refused`] with the server's words for an unknown prompt or a missing
    /// argument; [`ClientError::Unfinished`] when a 2026-07-28 server answers with questions
    /// for the person; otherwise as [`ServerConnection::call_tool`].
    pub async fn get_prompt(
        &self,
        name: &str,
        arguments: &BTreeMap<String, String>,
    ) -> Result<GetPromptResult, ClientError> {
        let method = format!(
            "prompts/get {}",
            common::printable(&common::clip(name, 100))
        );
        if name.trim().is_empty() {
            return Err(self.not_sent(
                &method,
                "the prompt's name is empty: give one that `prompts/list` names".into(),
            ));
        }
        let live = self.offering(&method, Offer::Prompts).await?;
        let mut params = GetPromptRequestParams::new(name);
        if !arguments.is_empty() {
            let arguments: JsonObject = arguments
                .iter()
                .map(|(key, value)| (key.clone(), value.clone().into()))
                .collect();
            params = params.with_arguments(arguments);
        }
        let got = request(
            &live,
            self.config().call_timeout,
            &method,
            live.peer.get_prompt_once(params),
        )
        .await;
        match self.settle(&live, got).await? {
            GetPromptResponse::Complete(result) => Ok(result),
            GetPromptResponse::InputRequired(_) => Err(self.asks_for_input(&method)),
            _ => Err(self.not_a_result(&method)),
        }
    }

    /// Values the server suggests for the argument `argument` of `reference` (a prompt, or a
    /// resource template) given what is typed so far, `value`, and the arguments already
    /// chosen, `context`; at most [`MAX_COMPLETIONS`] values are kept.
    ///
    /// # Errors
    /// [`ClientError::NotSent`] when the server offers no completions; otherwise as
    /// [`ServerConnection::call_tool`].
    pub async fn complete(
        &self,
        reference: Reference,
        argument: &str,
        value: &str,
        context: &BTreeMap<String, String>,
    ) -> Result<CompletionInfo, ClientError> {
        let method = "completion/complete";
        let live = self.offering(method, Offer::Completions).await?;
        let mut params = CompleteRequestParams::new(reference, ArgumentInfo::new(argument, value));
        if !context.is_empty() {
            let chosen: HashMap<String, String> = context.clone().into_iter().collect();
            params = params.with_context(CompletionContext::with_arguments(chosen));
        }
        let completed = request(
            &live,
            self.config().call_timeout,
            method,
            live.peer.complete(params),
        )
        .await;
        let mut completion = self.settle(&live, completed).await?.completion;
        completion.values.truncate(MAX_COMPLETIONS);
        Ok(completion)
    }
}
