//! What a server offers to read, asked through its [`ServerConnection`]: resources and resource
//! templates (every page, bounded as tools are), reading one, and subscribing to one's changes
//! (see `subscriptions`; the notices come through [`ServerConnection::resource_updates`]).
//! Each request has the call timeout, restarts a crashed server first and fails as
//! `tools/call` does; one the server's capabilities do not offer is not sent.

use std::collections::BTreeSet;

use rmcp::model::{
    ReadResourceRequestParams, ReadResourceResponse, ReadResourceResult, Resource,
    ResourceTemplate, ServerCapabilities,
};
use tokio::sync::broadcast;

use super::{
    ClientError, ServerConnection,
    live::request,
    pages::Listing,
    session::Live,
    subscriptions::{Changed, MAX_SUBSCRIPTIONS},
    updates::{MAX_URI_CHARS, ResourceUpdate},
};

/// Most resources, and most resource templates, kept from one server.
pub const MAX_RESOURCES: usize = 4096;

/// What a request needs the server to have announced.
#[derive(Clone, Copy)]
pub(super) enum Offer {
    Resources,
    Subscriptions,
    Prompts,
    Completions,
}

impl Offer {
    /// Whether `capabilities` announce it.
    fn in_capabilities(self, capabilities: &ServerCapabilities) -> bool {
        match self {
            Self::Resources => capabilities.resources.is_some(),
            Self::Subscriptions => capabilities
                .resources
                .as_ref()
                .is_some_and(|resources| resources.subscribe == Some(true)),
            Self::Prompts => capabilities.prompts.is_some(),
            Self::Completions => capabilities.completions.is_some(),
        }
    }

    /// What is missing, said for the person.
    fn missing(self) -> &'static str {
        match self {
            Self::Resources => {
                "the server does not offer resources (its capabilities have no `resources`)"
            }
            Self::Subscriptions => {
                "the server does not offer subscriptions to resources (its `resources` capability has no `subscribe`)"
            }
            Self::Prompts => {
                "the server does not offer prompts (its capabilities have no `prompts`)"
            }
            Self::Completions => {
                "the server does not offer completions (its capabilities have no `completions`)"
            }
        }
    }
}

impl ServerConnection {
    /// The live session, when its server announced `offer` for `method`.
    pub(super) async fn offering(
        &self,
        method: &str,
        offer: Offer,
    ) -> Result<std::sync::Arc<Live>, ClientError> {
        let live = self.live().await?;
        let offered = live
            .peer
            .peer_info()
            .is_some_and(|info| offer.in_capabilities(&info.capabilities));
        if offered {
            Ok(live)
        } else {
            Err(self.not_sent(method, offer.missing().to_owned()))
        }
    }

    /// The error of a request `method` not sent, for `reason`.
    pub(super) fn not_sent(&self, method: &str, reason: String) -> ClientError {
        ClientError::NotSent {
            server: self.name().to_owned(),
            method: method.to_owned(),
            reason,
        }
    }

    /// The server's resources (every page, at most [`MAX_RESOURCES`]).
    ///
    /// # Errors
    /// [`ClientError::NotSent`] when the server offers no resources; otherwise as
    /// [`ServerConnection::call_tool`].
    pub async fn resources(&self) -> Result<Vec<Resource>, ClientError> {
        let method = "resources/list";
        let live = self.offering(method, Offer::Resources).await?;
        let listing = Listing {
            server: self.name(),
            method,
            items: "resources",
            max: MAX_RESOURCES,
        };
        let peer = &live.peer;
        let listed = listing.all(|params| async move {
            let page = peer.list_resources(params).await?;
            Ok((page.resources, page.next_cursor))
        });
        let listed = request(&live, self.config().call_timeout, method, listed).await;
        self.settle(&live, listed).await
    }

    /// The server's resource templates (every page, at most [`MAX_RESOURCES`]).
    ///
    /// # Errors
    /// As [`ServerConnection::resources`].
    pub async fn resource_templates(&self) -> Result<Vec<ResourceTemplate>, ClientError> {
        let method = "resources/templates/list";
        let live = self.offering(method, Offer::Resources).await?;
        let listing = Listing {
            server: self.name(),
            method,
            items: "resource templates",
            max: MAX_RESOURCES,
        };
        let peer = &live.peer;
        let listed = listing.all(|params| async move {
            let page = peer.list_resource_templates(params).await?;
            Ok((page.resource_templates, page.next_cursor))
        });
        let listed = request(&live, self.config().call_timeout, method, listed).await;
        self.settle(&live, listed).await
    }

    /// Reads the resource `uri` (one the server lists, or one a template makes). Its contents
    /// are the server's: untrusted, as large as the transport allows (`maxLineBytes`).
    ///
    /// # Errors
    /// [`ClientError::NotSent`] for an empty or over-long `uri`, or a server without
    /// resources; [`ClientError::Refused`] with the server's words for a resource it does not
    /// have (or an answer that is no read's); [`ClientError::Unfinished`] when a 2026-07-28
    /// server answers with questions for the person; otherwise as
    /// [`ServerConnection::call_tool`].
    pub async fn read_resource(&self, uri: &str) -> Result<ReadResourceResult, ClientError> {
        let method = "resources/read";
        if let Some(problem) = uri_problem(uri) {
            return Err(self.not_sent(method, problem));
        }
        let live = self.offering(method, Offer::Resources).await?;
        let read = live
            .peer
            .read_resource_once(ReadResourceRequestParams::new(uri.to_owned()));
        let read = request(&live, self.config().call_timeout, method, read).await;
        match self.settle(&live, read).await? {
            ReadResourceResponse::Complete(result) => Ok(result),
            ReadResourceResponse::InputRequired(_) => Err(self.asks_for_input(method)),
            _ => Err(self.not_a_result(method)),
        }
    }

    /// The server answered `method` with a kind of result this client does not know.
    pub(super) fn not_a_result(&self, method: &str) -> ClientError {
        ClientError::Refused {
            server: self.name().to_owned(),
            method: method.to_owned(),
            message: format!("its answer is not a result of `{method}`"),
        }
    }

    /// A 2026-07-28 server answered `method` with questions for the person.
    pub(super) fn asks_for_input(&self, method: &str) -> ClientError {
        ClientError::Unfinished {
            server: self.name().to_owned(),
            method: method.to_owned(),
            reason: "it answered with questions for the person (input_required), which this client answers for tool calls only".into(),
        }
    }

    /// Subscribes to the changes of the resource `uri`: each is told through
    /// [`ServerConnection::resource_updates`]. Subscribing again to one held does nothing.
    /// It outlives the session: a new one (the server restarted, a new HTTP session)
    /// subscribes again, until [`ServerConnection::unsubscribe`].
    ///
    /// # Errors
    /// [`ClientError::NotSent`] when the server does not offer subscriptions, `uri` is empty
    /// or over-long, or [`MAX_SUBSCRIPTIONS`] are held; [`ClientError::Refused`] when the
    /// server refuses it; otherwise as [`ServerConnection::call_tool`].
    pub async fn subscribe(&self, uri: &str) -> Result<(), ClientError> {
        let method = "resources/subscribe";
        if let Some(problem) = uri_problem(uri) {
            return Err(self.not_sent(method, problem));
        }
        let live = self.offering(method, Offer::Subscriptions).await?;
        let mut held = live.subscriptions.lock().await;
        if held.contains(uri) {
            return Ok(());
        }
        if held.len().max(self.subscribed().len()) >= MAX_SUBSCRIPTIONS {
            return Err(self.not_sent(method, format!("this client holds at most {MAX_SUBSCRIPTIONS} subscriptions per server: unsubscribe from one first")));
        }
        let legacy = live.info.has_initialize();
        let added = held.add(&live.peer, self.name(), uri, legacy);
        let added = request(&live, self.config().call_timeout, method, added).await;
        drop(held);
        match self.settle(&live, added).await? {
            Changed::Done => {
                self.subscribed().insert(uri.to_owned());
                Ok(())
            }
            Changed::NotAcknowledged => Err(ClientError::Refused {
                server: self.name().to_owned(),
                method: "subscriptions/listen".into(),
                message: "it acknowledged the subscription without this resource".into(),
            }),
        }
    }

    /// Ends the subscription to the resource `uri`.
    ///
    /// # Errors
    /// [`ClientError::NotSent`] when the session holds no subscription to `uri`; otherwise as
    /// [`ServerConnection::subscribe`].
    pub async fn unsubscribe(&self, uri: &str) -> Result<(), ClientError> {
        let method = "resources/unsubscribe";
        if let Some(problem) = uri_problem(uri) {
            return Err(self.not_sent(method, problem));
        }
        self.subscribed().remove(uri);
        let live = self.offering(method, Offer::Subscriptions).await?;
        let mut held = live.subscriptions.lock().await;
        if !held.contains(uri) {
            return Err(self.not_sent(
                method,
                format!(
                    "this session is not subscribed to `{}`",
                    common::printable(&common::clip(uri, 200))
                ),
            ));
        }
        let legacy = live.info.has_initialize();
        let removed = held.remove(&live.peer, self.name(), uri, legacy);
        let removed = request(&live, self.config().call_timeout, method, removed).await;
        drop(held);
        self.settle(&live, removed).await.map(|_| ())
    }

    /// The resources the host subscribed to, across sessions.
    fn subscribed(&self) -> std::sync::MutexGuard<'_, BTreeSet<String>> {
        self.subscribed
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Subscribes the new session `live` to what the host subscribed to in earlier ones (a
    /// restarted server, a new HTTP session); a failure is logged, and those resources are
    /// not heard of until the host subscribes again.
    pub(super) async fn subscribe_again(&self, live: &Live) {
        let wanted = self.subscribed().clone();
        if wanted.is_empty() {
            return;
        }
        let legacy = live.info.has_initialize();
        let mut held = live.subscriptions.lock().await;
        let restored = held.restore(&live.peer, self.name(), &wanted, legacy);
        match tokio::time::timeout(self.config().call_timeout, restored).await {
            Ok(Ok(())) => {
                tracing::info!(
                    server = self.name(),
                    count = held.len(),
                    "subscribed again to the resources of the last session"
                );
            }
            Ok(Err(err)) => {
                tracing::warn!(server = self.name(), error = %err, "cannot subscribe again to the resources of the last session; subscribe to them anew");
            }
            Err(_) => {
                tracing::warn!(
                    server = self.name(),
                    "no answer when subscribing again to the resources of the last session; subscribe to them anew"
                );
            }
        }
    }

    /// The notices of changed resources this connection is subscribed to, from now on (a
    /// bounded channel: a receiver that falls behind by
    /// [`RESOURCE_UPDATES_KEPT`](super::RESOURCE_UPDATES_KEPT) is told how many it missed).
    pub fn resource_updates(&self) -> broadcast::Receiver<ResourceUpdate> {
        self.updates.subscribe()
    }
}

/// What is wrong with a URI nothing could name: empty, or longer than [`MAX_URI_CHARS`].
fn uri_problem(uri: &str) -> Option<String> {
    let length = uri.chars().count();
    if uri.trim().is_empty() {
        return Some("the URI is empty: give one that `resources/list` or a template names, such as file:///notes.txt".into());
    }
    (length > MAX_URI_CHARS).then(|| {
        format!("the URI is {length} characters long; this client sends at most {MAX_URI_CHARS}")
    })
}
