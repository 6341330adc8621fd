//! [`ResourceUpdates`]: where a connection tells its host that a resource it subscribed to
//! changed (`notifications/resources/updated`, however the session subscribed). A broadcast
//! channel of bounded capacity: a host that reads slowly misses the oldest notices (and is
//! told how many), never the session's progress, and memory stays bounded whatever the server
//! sends.

use tokio::sync::broadcast;

/// Notices kept for a receiver that has not read them yet.
pub const RESOURCE_UPDATES_KEPT: usize = 256;

/// Longest URI passed on (characters); a longer one is no resource this client asked for.
pub(super) const MAX_URI_CHARS: usize = 2048;

/// A resource changed: read it again to see how.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResourceUpdate {
    /// The server that said so.
    pub server: String,
    /// The resource, as the server named it (untrusted text: flatten it before showing it).
    pub uri: String,
}

/// The sending end of a connection's resource notices; cheap to clone.
#[derive(Debug, Clone)]
pub struct ResourceUpdates(broadcast::Sender<ResourceUpdate>);

impl Default for ResourceUpdates {
    fn default() -> Self {
        Self(broadcast::Sender::new(RESOURCE_UPDATES_KEPT))
    }
}

impl ResourceUpdates {
    /// A receiver of the notices from now on.
    pub fn subscribe(&self) -> broadcast::Receiver<ResourceUpdate> {
        self.0.subscribe()
    }

    /// Passes on the `notifications/resources/updated` whose `params` are given, from
    /// `server`; one without a usable `uri` is dropped (and logged).
    pub(super) fn note(&self, server: &str, params: Option<&serde_json::Value>) {
        let uri = params
            .and_then(|params| params.get("uri"))
            .and_then(serde_json::Value::as_str)
            .filter(|uri| !uri.is_empty() && uri.chars().count() <= MAX_URI_CHARS);
        let Some(uri) = uri else {
            tracing::debug!(
                server,
                "a resources/updated notification without a usable uri; dropped"
            );
            return;
        };
        // Nobody listening is no error: the notice has no one to reach.
        let _ = self.0.send(ResourceUpdate {
            server: server.to_owned(),
            uri: uri.to_owned(),
        });
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn a_notice_reaches_each_receiver_and_a_slow_one_is_told_what_it_missed() {
        let updates = ResourceUpdates::default();
        let mut first = updates.subscribe();
        updates.note("home", Some(&json!({"uri": "zwave://devices/5"})));
        assert_eq!(
            first.try_recv().unwrap(),
            ResourceUpdate {
                server: "home".into(),
                uri: "zwave://devices/5".into()
            }
        );
        for n in 0..RESOURCE_UPDATES_KEPT + 10 {
            updates.note("home", Some(&json!({"uri": format!("r/{n}")})));
        }
        assert!(matches!(
            first.try_recv(),
            Err(broadcast::error::TryRecvError::Lagged(10))
        ));
        assert_eq!(first.try_recv().unwrap().uri, "r/10");
    }

    #[test]
    fn a_notice_without_a_usable_uri_is_dropped() {
        let updates = ResourceUpdates::default();
        let mut receiver = updates.subscribe();
        updates.note("home", None);
        updates.note("home", Some(&json!({"uri": 5})));
        updates.note("home", Some(&json!({"uri": ""})));
        updates.note("home", Some(&json!({"uri": "x".repeat(MAX_URI_CHARS + 1)})));
        assert!(receiver.try_recv().is_err());
    }
}
