//! [`ResourceSubscriptions`]: the resources one session is subscribed to, and how. Up to
//! 2025-11-25 each with `resources/subscribe`; from 2026-07-28 one `subscriptions/listen`
//! stream that names them all, opened anew when the set changes (the new stream is
//! acknowledged before the old one is cancelled, so no change falls between the two). The
//! notices themselves are routed by the handler's tap, whichever way they come. Also
//! [`Listening`], a stream's task, which the session's `tools/list_changed` stream uses too.
//! Subscriptions end with their session; the connection makes them again in the next.

use std::collections::BTreeSet;

use rmcp::{
    model::{SubscribeRequestParams, SubscriptionFilter, UnsubscribeRequestParams},
    service::{Peer, RoleClient, ServiceError, Subscription},
};
use tracing::debug;

/// Most resources one session subscribes to: each is a stream of notices the server keeps up
/// for us, and on 2026-07-28 part of one request the server reads at every change.
pub const MAX_SUBSCRIPTIONS: usize = 32;

/// A task that drains one `subscriptions/listen` stream; it, and with it the stream (rmcp
/// cancels a dropped one), ends when this is dropped.
pub(super) struct Listening(tokio::task::JoinHandle<()>);

impl Listening {
    /// Drains `subscription` (the tap has seen each notice already) until it ends.
    pub(super) fn drain(mut subscription: Subscription, server: &str, what: &'static str) -> Self {
        let server = server.to_owned();
        Self(tokio::spawn(async move {
            while let Ok(Some(_)) = subscription.next().await {}
            debug!(server = %server, what, "a subscriptions/listen stream ended");
        }))
    }
}

impl Drop for Listening {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// The resources a session is subscribed to.
#[derive(Default)]
pub(super) struct ResourceSubscriptions {
    uris: BTreeSet<String>,
    /// From 2026-07-28: the one stream that names `uris` (none when they are none).
    listening: Option<Listening>,
}

/// How a change of subscriptions went, when the server answered.
pub(super) enum Changed {
    /// As asked.
    Done,
    /// A 2026-07-28 server acknowledged a stream without the resource asked for.
    NotAcknowledged,
}

impl ResourceSubscriptions {
    /// Whether the session is subscribed to `uri`.
    pub(super) fn contains(&self, uri: &str) -> bool {
        self.uris.contains(uri)
    }

    /// How many resources the session is subscribed to.
    pub(super) fn len(&self) -> usize {
        self.uris.len()
    }

    /// Subscribes to `uri` on `peer`: with `resources/subscribe` when `legacy`, else with a
    /// new stream naming it too.
    pub(super) async fn add(
        &mut self,
        peer: &Peer<RoleClient>,
        server: &str,
        uri: &str,
        legacy: bool,
    ) -> Result<Changed, ServiceError> {
        if legacy {
            #[expect(
                deprecated,
                reason = "resources/subscribe is how revisions up to 2025-11-25 subscribe"
            )]
            peer.subscribe(SubscribeRequestParams::new(uri)).await?;
            self.uris.insert(uri.to_owned());
            return Ok(Changed::Done);
        }
        let mut wanted = self.uris.clone();
        wanted.insert(uri.to_owned());
        let subscription = peer.listen(filter(&wanted)).await?;
        let acknowledged = subscription
            .acknowledged()
            .resource_subscriptions
            .as_ref()
            .is_some_and(|uris| uris.iter().any(|granted| granted == uri));
        if !acknowledged {
            return Ok(Changed::NotAcknowledged);
        }
        self.listening = Some(Listening::drain(subscription, server, "resources"));
        self.uris = wanted;
        Ok(Changed::Done)
    }

    /// Subscribes a new session to `uris` at once (on 2026-07-28 with one stream); those the
    /// server acknowledged are held.
    pub(super) async fn restore(
        &mut self,
        peer: &Peer<RoleClient>,
        server: &str,
        uris: &BTreeSet<String>,
        legacy: bool,
    ) -> Result<(), ServiceError> {
        if legacy {
            for uri in uris {
                self.add(peer, server, uri, true).await?;
            }
            return Ok(());
        }
        let subscription = peer.listen(filter(uris)).await?;
        let granted: BTreeSet<String> = subscription
            .acknowledged()
            .resource_subscriptions
            .iter()
            .flatten()
            .filter(|uri| uris.contains(*uri))
            .cloned()
            .collect();
        self.listening = Some(Listening::drain(subscription, server, "resources"));
        self.uris = granted;
        Ok(())
    }

    /// Ends the subscription to `uri` (one the session holds) on `peer`.
    pub(super) async fn remove(
        &mut self,
        peer: &Peer<RoleClient>,
        server: &str,
        uri: &str,
        legacy: bool,
    ) -> Result<Changed, ServiceError> {
        if legacy {
            #[expect(
                deprecated,
                reason = "resources/unsubscribe is how revisions up to 2025-11-25 end one"
            )]
            peer.unsubscribe(UnsubscribeRequestParams::new(uri)).await?;
            self.uris.remove(uri);
            return Ok(Changed::Done);
        }
        let mut wanted = self.uris.clone();
        wanted.remove(uri);
        self.listening = if wanted.is_empty() {
            None
        } else {
            Some(Listening::drain(
                peer.listen(filter(&wanted)).await?,
                server,
                "resources",
            ))
        };
        self.uris = wanted;
        Ok(Changed::Done)
    }
}

/// The filter of a stream of `resources/updated` for `uris`.
fn filter(uris: &BTreeSet<String>) -> SubscriptionFilter {
    SubscriptionFilter::builder()
        .resource_subscriptions(uris.iter().cloned())
        .build()
}
