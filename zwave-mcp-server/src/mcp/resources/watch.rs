//! Subscriptions: which resources a session watches, and the task that tells it when what one
//! shows changed. One task per session (2025-11-25: `resources/subscribe`, and
//! `notifications/resources/list_changed` to every session) or per `subscriptions/listen`
//! stream (2026-07-28), waiting on the network's change notifier.
//!
//! Coalescing: after telling of changes the task waits [`COALESCE`] before it looks again, so a
//! resource gets at most one update per interval, and what a client then reads is the state at
//! that moment (the last state wins). The notifier is a watch channel: a storm of reports wakes
//! the task once, and the backend never waits for it. A slow client holds up only its own task
//! (its sends wait on its own transport); what changes meanwhile is folded into the next update.

use std::{
    collections::HashMap,
    sync::{Arc, Mutex, PoisonError},
    time::Duration,
};

use rmcp::{
    ErrorData, Peer, RoleServer,
    model::{ResourceUpdatedNotificationParam, SubscriptionFilter},
    service::SubscriptionSink,
};
use tokio_util::sync::CancellationToken;

use super::{uri::ResourceUri, view::Viewer};

/// What resources showed at some moment: their fingerprints.
pub(crate) type Baseline = HashMap<ResourceUri, Option<u64>>;

/// The least time between two updates of one resource.
pub(crate) const COALESCE: Duration = Duration::from_millis(250);

/// Resources one session (or one listen stream) may watch at once: every device of the
/// largest Z-Wave network (232) and the home, with room to spare.
pub(crate) const MAX_SUBSCRIPTIONS: usize = 256;

/// `subscriptions/listen` streams one session may hold open at once: each holds one of the
/// session's places for requests in flight (`transport::bounded`), and tool calls need theirs.
pub(crate) const MAX_LISTENS: usize = 4;

/// `subscriptions/listen` streams open at once in the whole process, over every session: a
/// stateless HTTP request is a session of its own, and each stream holds one of the HTTP
/// listener's connections (512) for as long as it lasts, so without this bound a client
/// could hold them all.
pub(crate) const MAX_LISTENS_IN_ALL: usize = 64;

/// The resources watched, each with the fingerprint of what it showed when last told.
/// Invariant: at most [`MAX_SUBSCRIPTIONS`] entries.
#[derive(Debug, Default)]
pub(crate) struct Watched {
    resources: Mutex<HashMap<ResourceUri, Option<u64>>>,
    /// The client was given the list before any node list was loaded (the home alone): it is
    /// told when the first one is.
    listed_early: std::sync::atomic::AtomicBool,
}

impl Watched {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<ResourceUri, Option<u64>>> {
        self.resources
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    /// Watches `uri`, which shows `fingerprint` now.
    ///
    /// # Errors
    /// [`MAX_SUBSCRIPTIONS`] are watched already (watching one again is no new one).
    pub fn add(&self, uri: ResourceUri, fingerprint: Option<u64>) -> Result<(), ErrorData> {
        let mut resources = self.lock();
        if resources.len() >= MAX_SUBSCRIPTIONS && !resources.contains_key(&uri) {
            return Err(ErrorData::invalid_params(
                format!(
                    "cannot subscribe to {uri}: this session is subscribed to {MAX_SUBSCRIPTIONS} resources, the most it may be (resources/unsubscribe one first, or subscribe to zwave://home for every device)"
                ),
                Some(
                    serde_json::json!({ "uri": uri.to_string(), "maxSubscriptions": MAX_SUBSCRIPTIONS }),
                ),
            ));
        }
        resources.insert(uri, fingerprint);
        Ok(())
    }

    /// The client was given the list before any node list was loaded.
    pub fn listed_before_load(&self) {
        self.listed_early
            .store(true, std::sync::atomic::Ordering::Relaxed);
    }

    /// Stops watching `uri`.
    pub fn remove(&self, uri: ResourceUri) {
        self.lock().remove(&uri);
    }

    /// The resources whose content changed since they were last looked at, each now marked
    /// with what it shows.
    fn changed(&self, viewer: &Viewer) -> Vec<ResourceUri> {
        let uris: Vec<ResourceUri> = self.lock().keys().copied().collect();
        // Views are built outside the lock: a subscribe never waits for them.
        let now: Vec<(ResourceUri, Option<u64>)> = uris
            .into_iter()
            .map(|uri| (uri, viewer.fingerprint(uri)))
            .collect();
        let mut resources = self.lock();
        now.into_iter()
            .filter_map(|(uri, fingerprint)| {
                let was = resources.get_mut(&uri)?;
                (*was != fingerprint).then(|| {
                    *was = fingerprint;
                    uri
                })
            })
            .collect()
    }
}

/// Where a watcher's notifications go.
pub(crate) enum Notifier {
    /// A 2025-11-25 session: its peer.
    Session(Peer<RoleServer>),
    /// A 2026-07-28 `subscriptions/listen` stream (rmcp tags each with its id and holds it to
    /// the accepted filter).
    Listen(SubscriptionSink),
}

/// The client is gone, or no longer takes what it subscribed to.
struct Gone;

impl Notifier {
    async fn updated(&self, uri: ResourceUri) -> Result<(), Gone> {
        let uri = uri.to_string();
        match self {
            Self::Session(peer) => peer
                .notify_resource_updated(ResourceUpdatedNotificationParam::new(uri))
                .await
                .map_err(|_| Gone),
            Self::Listen(sink) => sink.notify_resource_updated(uri).await.map_err(|_| Gone),
        }
    }

    async fn list_changed(&self) -> Result<(), Gone> {
        match self {
            Self::Session(peer) => peer.notify_resource_list_changed().await.map_err(|_| Gone),
            Self::Listen(sink) => sink.notify_resource_list_changed().await.map_err(|_| Gone),
        }
    }
}

/// Tells `notifier` of every change of what `watched` resources show, and (`list`) of every
/// change of which devices there are, until `stop` is cancelled or the client is gone.
pub(crate) async fn watch(
    viewer: Viewer,
    watched: Arc<Watched>,
    notifier: Notifier,
    list: bool,
    stop: CancellationToken,
) {
    let mut changes = viewer.network.changes();
    let mut devices = DeviceList::default();
    devices.look(&viewer, &watched);
    loop {
        tokio::select! {
            changed = changes.changed() => if changed.is_err() { return },
            () = stop.cancelled() => return,
        }
        let told = tell(&viewer, &watched, &notifier, list.then_some(&mut devices)).await;
        if told.is_err() {
            tracing::debug!("a subscriber is gone: its watch ends");
            return;
        }
        tokio::select! {
            () = tokio::time::sleep(COALESCE) => {}
            () = stop.cancelled() => return,
        }
    }
}

/// Which devices there are, as last looked at: `None` until a node list was loaded
/// (`resources/list` waits for one), so the first load is a change only to a client that was
/// given the list before it.
#[derive(Default)]
struct DeviceList(Option<u64>);

impl DeviceList {
    /// Looks again; whether the list changed since the last look.
    fn look(&mut self, viewer: &Viewer, watched: &Watched) -> bool {
        if !viewer.network.has_nodes() {
            return false;
        }
        let now = viewer.list_fingerprint();
        match self.0.replace(now) {
            Some(was) => was != now,
            None => watched
                .listed_early
                .swap(false, std::sync::atomic::Ordering::Relaxed),
        }
    }
}

/// Tells of what changed since the last look.
async fn tell(
    viewer: &Viewer,
    watched: &Watched,
    notifier: &Notifier,
    devices: Option<&mut DeviceList>,
) -> Result<(), Gone> {
    if let Some(devices) = devices
        && devices.look(viewer, watched)
    {
        notifier.list_changed().await?;
    }
    for uri in watched.changed(viewer) {
        notifier.updated(uri).await?;
    }
    Ok(())
}

/// One session's subscriptions: what it watches, its watcher, its listen streams. Dropped with
/// the session's server; its watcher then ends.
#[derive(Debug)]
pub(crate) struct Session {
    pub watched: Arc<Watched>,
    /// Whether the session's watcher runs.
    watching: Mutex<bool>,
    /// `subscriptions/listen` streams open.
    listens: Mutex<usize>,
    /// What the resources of listen streams being opened showed when their filter was
    /// accepted, by the filter requested (taken when the stream starts; at most
    /// [`MAX_LISTENS`] kept).
    baselines: Mutex<Vec<(SubscriptionFilter, Baseline)>>,
    /// Cancelled when the session ends.
    ended: CancellationToken,
}

impl Default for Session {
    fn default() -> Self {
        Self {
            watched: Arc::default(),
            watching: Mutex::new(false),
            listens: Mutex::new(0),
            baselines: Mutex::new(Vec::new()),
            ended: CancellationToken::new(),
        }
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        self.ended.cancel();
    }
}

impl Session {
    /// Starts the session's watcher, unless it runs: it tells `peer` of subscribed resources
    /// and of the list.
    pub fn watch(&self, viewer: &Viewer, peer: Peer<RoleServer>) {
        let mut watching = self.watching.lock().unwrap_or_else(PoisonError::into_inner);
        if *watching {
            return;
        }
        *watching = true;
        tokio::spawn(watch(
            viewer.clone(),
            Arc::clone(&self.watched),
            Notifier::Session(peer),
            true,
            self.ended.clone(),
        ));
    }

    /// A place for one more listen stream, held until the stream ends.
    ///
    /// # Errors
    /// [`MAX_LISTENS`] streams are open.
    pub fn listen_place(self: &Arc<Self>) -> Result<ListenPlace, ErrorData> {
        let mut listens = self.listens.lock().unwrap_or_else(PoisonError::into_inner);
        if *listens >= MAX_LISTENS {
            return Err(ErrorData::invalid_request(
                format!(
                    "this session has {MAX_LISTENS} subscriptions/listen streams open, the most it may: cancel one, or listen to every resource on one stream"
                ),
                None,
            ));
        }
        *listens += 1;
        Ok(ListenPlace(Arc::clone(self)))
    }

    /// Notes what the resources of a listen stream being opened with `requested` show now.
    pub fn note_baseline(&self, requested: SubscriptionFilter, baseline: Baseline) {
        let mut baselines = self
            .baselines
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if baselines.len() >= MAX_LISTENS {
            baselines.remove(0);
        }
        baselines.push((requested, baseline));
    }

    /// What [`Session::note_baseline`] noted for `requested` (nothing when it was not).
    pub fn take_baseline(&self, requested: &SubscriptionFilter) -> Baseline {
        let mut baselines = self
            .baselines
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        match baselines.iter().position(|(filter, _)| filter == requested) {
            Some(at) => baselines.remove(at).1,
            None => Baseline::new(),
        }
    }

    /// Cancelled when the session ends.
    pub fn ended(&self) -> CancellationToken {
        self.ended.clone()
    }
}

/// A listen stream's place among the session's [`MAX_LISTENS`].
pub(crate) struct ListenPlace(Arc<Session>);

impl Drop for ListenPlace {
    fn drop(&mut self) {
        let mut listens = self
            .0
            .listens
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        *listens = listens.saturating_sub(1);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::network::NodeId;

    #[test]
    fn a_session_watches_at_most_256_resources_and_says_how_to_go_on() {
        let watched = Watched::default();
        for id in 1..=256 {
            watched.add(ResourceUri::Device(NodeId(id)), None).unwrap();
        }
        // The same one again is no new subscription.
        watched
            .add(ResourceUri::Device(NodeId(7)), Some(1))
            .unwrap();
        let refused = watched
            .add(ResourceUri::Device(NodeId(257)), None)
            .unwrap_err();
        assert_eq!(refused.code, rmcp::model::ErrorCode::INVALID_PARAMS);
        assert_eq!(
            refused.message,
            "cannot subscribe to zwave://devices/257: this session is subscribed to 256 resources, the most it may be (resources/unsubscribe one first, or subscribe to zwave://home for every device)"
        );
        assert_eq!(
            refused.data,
            Some(serde_json::json!({"uri": "zwave://devices/257", "maxSubscriptions": 256}))
        );
        watched.remove(ResourceUri::Device(NodeId(1)));
        watched.add(ResourceUri::Device(NodeId(257)), None).unwrap();
    }

    #[test]
    fn a_session_holds_at_most_four_listen_streams_and_frees_a_place_when_one_ends() {
        let session = Arc::new(Session::default());
        let places: Vec<ListenPlace> = (0..MAX_LISTENS)
            .map(|_| session.listen_place().unwrap())
            .collect();
        let refused = session.listen_place().err().unwrap();
        assert_eq!(
            refused.message,
            "this session has 4 subscriptions/listen streams open, the most it may: cancel one, or listen to every resource on one stream"
        );
        drop(places);
        assert!(session.listen_place().is_ok());
    }

    #[test]
    fn a_listen_streams_baseline_is_taken_by_its_filter_once() {
        let session = Session::default();
        let filter = SubscriptionFilter::builder()
            .resource_subscription("zwave://home")
            .build();
        let baseline = Baseline::from([(ResourceUri::Home, Some(42))]);
        session.note_baseline(filter.clone(), baseline.clone());
        assert_eq!(session.take_baseline(&filter), baseline);
        assert!(session.take_baseline(&filter).is_empty());
    }

    #[test]
    fn a_session_that_ends_stops_its_watcher() {
        let session = Session::default();
        let ended = session.ended();
        assert!(!ended.is_cancelled());
        drop(session);
        assert!(ended.is_cancelled());
    }
}
