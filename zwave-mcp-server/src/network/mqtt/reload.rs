//! Loading the node list (`getNodes`): one reload at a time, retried in the background after
//! a (re)connection, merged with values that arrived while it was on its way, and the topic
//! index rebuilt from it.

use std::{
    collections::BTreeMap,
    sync::{Arc, atomic::Ordering},
    time::Duration,
};

use common::Backoff;
use tracing::{debug, info, warn};

use super::{
    LinkState, NetworkError, NodeId,
    call::call_raw,
    core::{read, write},
    nodes::{NodeInfo, NodeStatus, Nodes, parse_nodes_raw},
    shared::Shared,
    topics::TopicIndex,
};

/// Loads the node list; with `only_if_missing`, a list loaded meanwhile by another caller
/// (the reload after a reconnection) is enough.
pub(in crate::network) async fn reload_nodes(
    shared: &Shared,
    only_if_missing: bool,
) -> Result<(), NetworkError> {
    let _one_at_a_time = shared.reload_lock.lock().await;
    if only_if_missing && read(&shared.core.state).nodes_loaded {
        return Ok(());
    }
    let sent = std::time::Instant::now();
    let result = call_raw(shared, "getNodes", Vec::new())
        .await
        .and_then(|result| {
            parse_nodes_raw(result.as_deref()).map_err(|reason| NetworkError::BadReply {
                api: "getNodes",
                reason,
            })
        });
    match result {
        Ok(mut nodes) => {
            let index = TopicIndex::build(&shared.settings.topic_prefix, nodes.values());
            let (paths, tails) = index.size();
            info!(nodes = nodes.len(), paths, tails, "node list loaded");
            report_collisions(&index);
            *write(&shared.topics) = index;
            let mut state = write(&shared.core.state);
            keep_newer_values(&mut nodes, &state.nodes, sent);
            keep_newer_status(
                &mut nodes,
                &state.nodes,
                &shared
                    .status_seen
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner),
                sent,
            );
            // Z-Wave JS UI's list holds zwave-js's optimistic values of writes the devices
            // have not confirmed: their last reports stay.
            shared.core.keep_reports(&mut nodes, &state.nodes);
            state.nodes = Nodes::new(nodes);
            state.nodes_loaded = true;
            state.reload_error = None;
            drop(state);
            shared.core.loaded(sent, None);
            shared.core.changed();
            Ok(())
        }
        Err(err) => {
            warn!(error = %err, "loading the node list failed");
            write(&shared.core.state).reload_error = Some(err.to_string());
            Err(err)
        }
    }
}

/// Says once per node list which nodes share topics: their reports on those topics are
/// ignored, so their state is only as fresh as the last `getNodes` or `pollValue`.
fn report_collisions(index: &TopicIndex) {
    let ambiguous = index.ambiguous();
    let Some((example, _)) = ambiguous.iter().next() else {
        return;
    };
    let nodes: std::collections::BTreeSet<NodeId> = ambiguous.values().flatten().copied().collect();
    let nodes: Vec<String> = nodes.iter().map(ToString::to_string).collect();
    warn!(
        topics = ambiguous.len(),
        nodes = %nodes.join(", "),
        example = %example,
        "nodes share MQTT topics, so updates on those topics are ignored: give each node a \
         distinct name and location, or in Z-Wave JS UI's gateway settings include the location \
         in topics or use numeric node ids instead of names"
    );
}

/// A value that arrived on its topic after `getNodes` was sent is newer than the snapshot in
/// the reply (the reply can be overtaken by the value updates of a concurrent write).
fn keep_newer_values(
    fresh: &mut BTreeMap<NodeId, NodeInfo>,
    cached: &BTreeMap<NodeId, NodeInfo>,
    sent: std::time::Instant,
) {
    for (id, node) in fresh.iter_mut() {
        let Some(old) = cached.get(id) else { continue };
        for (key, value) in node.values.iter_mut() {
            if let Some(live) = old.values.get(key)
                && live.seen_at.is_some_and(|at| at > sent)
            {
                value.value = live.value.clone();
                value.last_update = live.last_update;
                value.seen_at = live.seen_at;
            }
        }
    }
}

/// A node whose status topic spoke after `getNodes` was sent keeps the status and
/// availability it said: the reply's snapshot is older (a node that died and came back while
/// the reload ran was otherwise shown dead again until the next reload).
fn keep_newer_status(
    fresh: &mut BTreeMap<NodeId, NodeInfo>,
    cached: &BTreeMap<NodeId, NodeInfo>,
    seen: &std::collections::HashMap<NodeId, std::time::Instant>,
    sent: std::time::Instant,
) {
    for (id, node) in fresh.iter_mut() {
        if let Some(old) = cached.get(id)
            && seen.get(id).is_some_and(|at| *at > sent)
        {
            node.status = old.status.clone();
            node.available = old.available;
        }
    }
}

/// Pauses between reloads while nodes are still being interviewed: 1 s doubling to 10 s.
const UNREADY_BACKOFF: Backoff =
    Backoff::exponential(Duration::from_secs(1), Duration::from_secs(10));
/// Pauses between reloads the gateway could not answer yet: 1 s doubling to 30 s, cut by up to
/// a quarter so servers sharing a home do not retry in step.
const RETRY_BACKOFF: Backoff =
    Backoff::exponential(Duration::from_secs(1), Duration::from_secs(30)).with_jitter(0.25);

/// Asks for the node list to be reloaded in the background (`force`: even if loaded). Reloads
/// are coalesced: one runs at a time, and any number of requests made meanwhile make it run
/// once more (status topics flap many times a second while nodes are interviewed). A reload
/// the gateway cannot answer yet (its driver still starting) is retried after 1 s, 2 s, 4 s …
/// up to 30 s while the broker connection lasts; while nodes are not ready (their interview
/// is running) the list is reloaded again after 1 s, 2 s … up to 10 s until they are, so a
/// device becomes usable as soon as Z-Wave JS UI knows it.
pub(in crate::network) fn request_reload(shared: &Arc<Shared>, force: bool) {
    let requests = &shared.reloads;
    if force {
        requests.force.store(true, Ordering::SeqCst);
    }
    requests.wanted.store(true, Ordering::SeqCst);
    if requests.running.swap(true, Ordering::SeqCst) {
        return;
    }
    let weak = Arc::downgrade(shared);
    tokio::spawn(async move {
        // Failed reloads in a row, and reloads in a row that found nodes still interviewing.
        let (mut failures, mut unready_rounds) = (0_u32, 0_u32);
        loop {
            let Some(shared) = weak.upgrade() else { return };
            let requests = &shared.reloads;
            if !requests.wanted.swap(false, Ordering::SeqCst) {
                requests.running.store(false, Ordering::SeqCst);
                // A request that came just now, after the check: take it over, or leave it
                // to the task it started.
                if requests.wanted.load(Ordering::SeqCst)
                    && !requests.running.swap(true, Ordering::SeqCst)
                {
                    continue;
                }
                return;
            }
            let only_if_missing = !requests.force.swap(false, Ordering::SeqCst);
            let pause = match reload_nodes(&shared, only_if_missing).await {
                Err(err)
                    if err.is_retryable()
                        && read(&shared.core.state).link == LinkState::Connected =>
                {
                    failures = failures.saturating_add(1);
                    Some(RETRY_BACKOFF.after(failures))
                }
                Err(_) => None,
                Ok(()) => {
                    failures = 0;
                    let waiting = unready_nodes(&shared);
                    if waiting.is_empty() {
                        unready_rounds = 0;
                        None
                    } else {
                        unready_rounds = unready_rounds.saturating_add(1);
                        let pause = UNREADY_BACKOFF.after(unready_rounds);
                        debug!(nodes = ?waiting, again_in = ?pause, "nodes are not ready yet (interview running)");
                        Some(pause)
                    }
                }
            };
            if let Some(pause) = pause {
                requests.force.store(true, Ordering::SeqCst);
                requests.wanted.store(true, Ordering::SeqCst);
                drop(shared);
                tokio::time::sleep(pause).await;
            }
        }
    });
}

/// Nodes whose interview has not completed (`ready: false`), leaving out the controller,
/// virtual nodes and dead nodes (a dead node's interview waits for it to come back, which its
/// status topic announces).
fn unready_nodes(shared: &Shared) -> Vec<NodeId> {
    read(&shared.core.state)
        .nodes
        .values()
        .filter(|node| {
            !node.ready
                && !node.is_controller_node
                && !node.is_virtual
                && node.status != Some(NodeStatus::Dead)
        })
        .map(|node| node.id)
        .collect()
}

#[cfg(test)]
mod tests {
    use std::time::{Duration, Instant};

    use serde_json::{Value, json};

    use super::*;
    use crate::network::parse_nodes;

    const LEVEL: &str = "38-0-currentValue";

    fn home() -> BTreeMap<NodeId, NodeInfo> {
        parse_nodes(Value::Array(crate::sim::home::demo_home(0))).unwrap()
    }

    fn level(nodes: &BTreeMap<NodeId, NodeInfo>) -> (Option<Value>, Option<Instant>) {
        let value = &nodes.values().find(|n| n.id == NodeId(3)).unwrap().values[LEVEL];
        (value.value.clone(), value.seen_at)
    }

    fn set_level(nodes: &mut BTreeMap<NodeId, NodeInfo>, level: i64, seen: Option<Instant>) {
        let node = nodes.values_mut().find(|n| n.id == NodeId(3)).unwrap();
        let value = node.values.get_mut(LEVEL).unwrap();
        value.value = Some(json!(level));
        value.seen_at = seen;
    }

    #[test]
    fn a_value_seen_after_the_request_was_sent_beats_the_reply() {
        let sent = Instant::now();
        let after = sent + Duration::from_millis(5);
        let mut cached = home();
        set_level(&mut cached, 40, Some(after));
        let mut fresh = home();
        set_level(&mut fresh, 0, None);
        keep_newer_values(&mut fresh, &cached, sent);
        assert_eq!(level(&fresh), (Some(json!(40)), Some(after)));
    }

    #[test]
    fn a_value_seen_before_the_request_or_never_yields_to_the_reply() {
        let sent = Instant::now();
        for seen in [Some(sent - Duration::from_millis(5)), Some(sent), None] {
            let mut cached = home();
            set_level(&mut cached, 40, seen);
            let mut fresh = home();
            set_level(&mut fresh, 0, None);
            keep_newer_values(&mut fresh, &cached, sent);
            assert_eq!(level(&fresh), (Some(json!(0)), None), "seen {seen:?}");
        }
    }

    #[test]
    fn nodes_and_values_only_one_side_has_are_left_alone() {
        let sent = Instant::now();
        let mut cached = home();
        set_level(&mut cached, 40, Some(sent + Duration::from_millis(5)));
        cached.retain(|_, node| node.id != NodeId(2));
        let mut fresh = home();
        fresh.retain(|_, node| node.id != NodeId(3));
        let before = format!("{fresh:?}");
        keep_newer_values(&mut fresh, &cached, sent);
        assert_eq!(format!("{fresh:?}"), before);
    }

    #[test]
    fn a_status_heard_after_the_request_was_sent_beats_the_reply() {
        let sent = Instant::now();
        let node = NodeId(6);
        let with_status = |status: NodeStatus, available: bool| {
            let mut nodes = home();
            let info = nodes.get_mut(&node).unwrap();
            info.status = Some(status);
            info.available = available;
            nodes
        };
        // The reply says Dead (snapshot taken before), the topic said Alive after it was sent.
        let cached = with_status(NodeStatus::Alive, true);
        let mut fresh = with_status(NodeStatus::Dead, false);
        let seen = std::collections::HashMap::from([(node, sent + Duration::from_millis(5))]);
        keep_newer_status(&mut fresh, &cached, &seen, sent);
        assert_eq!(fresh[&node].status, Some(NodeStatus::Alive));
        assert!(fresh[&node].available);
        // Heard before the request (or never): the reply is the newer word.
        for seen in [
            std::collections::HashMap::from([(node, sent - Duration::from_millis(5))]),
            std::collections::HashMap::new(),
        ] {
            let mut fresh = with_status(NodeStatus::Dead, false);
            keep_newer_status(&mut fresh, &cached, &seen, sent);
            assert_eq!(fresh[&node].status, Some(NodeStatus::Dead));
            assert!(!fresh[&node].available);
        }
    }
}
