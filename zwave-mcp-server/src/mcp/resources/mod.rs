//! The live home as MCP resources: `zwave://home` (every device the owner exposes, the facts
//! of `list_zwave_devices`) and the template `zwave://devices/{nodeId}` (one device: status,
//! readings with their age, when it last reported, and what zwave-js shows that the device
//! has not reported), each read as JSON and as the tools' text; and subscriptions to them.
//!
//! Hidden devices are never listed, read or watched: a hidden device's address is refused
//! word for word as an absent one's (`uri::not_found`, SEP-2164's shape).
//!
//! | module | owns |
//! |---|---|
//! | `uri` | the two addresses, parsed; the refusal of any other |
//! | `view` | what a resource shows (JSON and text), and its fingerprint without ages |
//! | `watch` | subscriptions: per session and per listen stream, coalesced, bounded |

mod uri;
mod view;
mod watch;

use std::sync::Arc;

use rmcp::{
    ErrorData, RoleServer,
    model::{
        ListResourceTemplatesResult, ListResourcesResult, ReadResourceResult, Resource,
        ResourceContents, ResourceTemplate, SubscriptionFilter,
    },
    service::{RequestContext, SubscriptionContext},
};

pub(crate) use uri::ResourceUri;
pub(in crate::mcp) use view::Viewer;
pub(crate) use watch::{MAX_LISTENS_IN_ALL, MAX_SUBSCRIPTIONS, Session};

use super::ZwaveServer;
use crate::network::now_ms;
use uri::{DEVICE_TEMPLATE, HOME_URI, not_found};

/// The type of a resource's first content, the facts.
const JSON: &str = "application/json";
/// The type of its second, the same facts in the tools' words.
const TEXT: &str = "text/plain";

impl ZwaveServer {
    /// What resources read from: the caches the tools share.
    pub(in crate::mcp) fn viewer(&self) -> Viewer {
        Viewer {
            network: self.network.clone(),
            exposure: Arc::clone(&self.exposure),
            rows: Arc::clone(&self.rows),
            commands: Arc::clone(&self.commands),
        }
    }

    /// `resources/list`: the home, then each device the agent may see, by node id.
    pub(in crate::mcp) async fn resources(&self) -> Result<ListResourcesResult, ErrorData> {
        // Nothing loaded (the link is down since the start): the home alone, which says why
        // when read; the session is told of the list once it is loaded.
        if self.readable().await.is_err() {
            self.session.watched.listed_before_load();
        }
        let home = Resource::new(HOME_URI, "home")
            .with_title("The home")
            .with_description("Every Z-Wave device of the home: name, node id, location, online, kind and state, as list_zwave_devices gives them. Subscribe to be told when any of it changes.")
            .with_mime_type(JSON);
        let devices = self.viewer().listed().into_iter().map(|(id, name, loc)| {
            let title = if loc.is_empty() {
                name
            } else {
                format!("{name} ({loc})")
            };
            Resource::new(
                ResourceUri::Device(id).to_string(),
                format!("node-{}", id.0),
            )
            .with_title(title)
            .with_description(
                "One device: state, readings with their age, status, when it last reported.",
            )
            .with_mime_type(JSON)
        });
        let resources = std::iter::once(home).chain(devices).collect();
        Ok(ListResourcesResult::with_all_items(resources))
    }

    /// `resources/templates/list`: one device by node id.
    pub(in crate::mcp) fn resource_templates() -> ListResourceTemplatesResult {
        let template = ResourceTemplate::new(DEVICE_TEMPLATE, "device")
            .with_title("A device")
            .with_description("One Z-Wave device by node id (list_zwave_devices or zwave://home gives them): kind, state, readings with their age, status, when the device itself last reported, and which state zwave-js shows for this server's commands that the device has not reported.")
            .with_mime_type(JSON);
        ListResourceTemplatesResult::with_all_items(vec![template])
    }

    /// `resources/read`: the resource as JSON, then as text; an address that names nothing
    /// this client may see is refused with Invalid params and the address in `data.uri`.
    pub(in crate::mcp) async fn read(&self, uri: &str) -> Result<ReadResourceResult, ErrorData> {
        let parsed = ResourceUri::parse(uri).ok_or_else(|| not_found(uri))?;
        let shown = match (self.loaded(uri).await, parsed) {
            (Ok(()), _) => self
                .viewer()
                .show(parsed, Some(now_ms()))
                .ok_or_else(|| not_found(uri))?,
            // The home is always listed, so it always reads: empty, saying why.
            (Err(err), ResourceUri::Home) => view::Shown {
                json: serde_json::json!({"devices": [], "hiddenInactive": 0, "unreachable": err.message}),
                text: err.message.into_owned(),
            },
            (Err(err), ResourceUri::Device(_)) => return Err(err),
        };
        let json = serde_json::to_string_pretty(&shown.json).map_err(|err| {
            ErrorData::internal_error(format!("cannot encode {uri}: {err}"), None)
        })?;
        Ok(ReadResourceResult::new(vec![
            ResourceContents::text(json, uri).with_mime_type(JSON),
            ResourceContents::text(shown.text, uri).with_mime_type(TEXT),
        ]))
    }

    /// Makes sure there are nodes to show `uri` from, as the tools do: loaded now, or the last
    /// known ones while a link is down. With none, the refusal says why (the home cannot be
    /// reached, and where it was looked for), never "no such device".
    async fn loaded(&self, uri: &str) -> Result<(), ErrorData> {
        self.readable().await.map_err(|err| {
            let data =
                (uri.len() <= uri::MAX_ECHOED_URI_BYTES).then(|| serde_json::json!({ "uri": uri }));
            ErrorData::internal_error(format!("cannot read {uri} now: {err}"), data)
        })
    }

    /// `resources/subscribe` (2025-11-25): watches `uri` for this session.
    pub(in crate::mcp) async fn subscribe_to(
        &self,
        uri: &str,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        let parsed = ResourceUri::parse(uri).ok_or_else(|| not_found(uri))?;
        self.loaded(uri).await?;
        let viewer = self.viewer();
        let fingerprint = viewer.fingerprint(parsed).ok_or_else(|| not_found(uri))?;
        self.session.watched.add(parsed, Some(fingerprint))?;
        self.session.watch(&viewer, context.peer);
        Ok(())
    }

    /// `resources/unsubscribe` (2025-11-25): stops watching `uri` (one not watched: nothing).
    pub(in crate::mcp) fn unsubscribe_from(&self, uri: &str) -> Result<(), ErrorData> {
        let parsed = ResourceUri::parse(uri).ok_or_else(|| not_found(uri))?;
        self.session.watched.remove(parsed);
        Ok(())
    }

    /// What a `subscriptions/listen` stream gets of what it asked (2026-07-28): the list's
    /// changes, and the first [`MAX_SUBSCRIPTIONS`] of the resources it names that have this
    /// server's shape (the acknowledgement tells which). The filter is decided before the
    /// node list may be loaded, so a device's address is accepted whether the device is
    /// there, absent or hidden, alike: the stream tells of it once the agent may see it.
    ///
    /// What each shows now is noted here, before the acknowledgement goes out: a change the
    /// client makes once it has the acknowledgement is a change from this.
    pub(in crate::mcp) fn listen_filter(
        &self,
        requested: &SubscriptionFilter,
    ) -> SubscriptionFilter {
        let mut accepted = SubscriptionFilter::builder().resources_list_changed();
        if let Some(uris) = &requested.resource_subscriptions {
            let ours: Vec<String> = uris
                .iter()
                .filter(|uri| ResourceUri::parse(uri).is_some())
                .take(MAX_SUBSCRIPTIONS)
                .cloned()
                .collect();
            let viewer = self.viewer();
            let baseline = ours
                .iter()
                .filter_map(|uri| ResourceUri::parse(uri))
                .map(|uri| (uri, viewer.fingerprint(uri)))
                .collect();
            self.session.note_baseline(requested.clone(), baseline);
            accepted = accepted.resource_subscriptions(ours);
        }
        accepted.build()
    }

    /// Runs one `subscriptions/listen` stream until it is cancelled or the session ends.
    pub(in crate::mcp) async fn listen_on(
        &self,
        context: SubscriptionContext,
    ) -> Result<(), ErrorData> {
        let baseline = self.session.take_baseline(context.requested());
        let _place = self.session.listen_place()?;
        let _in_all = Arc::clone(&self.listens_in_all)
            .try_acquire_owned()
            .map_err(|_| {
                ErrorData::invalid_request(
                    format!(
                        "{MAX_LISTENS_IN_ALL} subscriptions/listen streams are open on this server, the most it keeps: try again when one has ended"
                    ),
                    None,
                )
            })?;
        let viewer = self.viewer();
        let accepted = context.accepted();
        let watched = Arc::new(watch::Watched::default());
        for uri in accepted.resource_subscriptions.iter().flatten() {
            if let Some(parsed) = ResourceUri::parse(uri) {
                let was = match baseline.get(&parsed) {
                    Some(was) => *was,
                    None => viewer.fingerprint(parsed),
                };
                watched.add(parsed, was)?;
            }
        }
        let list = accepted.resources_list_changed == Some(true);
        let stop = context.request_context().ct.clone();
        let ended = self.session.ended();
        let notifier = watch::Notifier::Listen(context.sink().clone());
        tokio::select! {
            () = watch::watch(viewer, watched, notifier, list, stop) => {}
            () = ended.cancelled() => {}
        }
        Ok(())
    }
}
