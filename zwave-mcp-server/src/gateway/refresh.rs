//! Loading the node list (`getNodes`): one refresh at a time, retried in the background after
//! a (re)connection, merged with values that arrived while it was on its way, and the topic
//! index rebuilt from it.

use std::{collections::BTreeMap, sync::Arc, time::Duration};

use tracing::{info, warn};

use super::{
    BrokerState, GatewayError, Shared, call,
    nodes::{NodeId, NodeInfo, parse_nodes},
    read,
    topics::TopicIndex,
    write,
};

/// Loads the node list; with `only_if_missing`, a list loaded meanwhile by another caller
/// (the refresh after a reconnection) is enough.
pub(super) async fn refresh_nodes(
    shared: &Shared,
    only_if_missing: bool,
) -> Result<(), GatewayError> {
    let _one_at_a_time = shared.refresh_lock.lock().await;
    if only_if_missing && read(&shared.state).nodes_loaded {
        return Ok(());
    }
    let sent = std::time::Instant::now();
    let result = call(shared, "getNodes", Vec::new())
        .await
        .and_then(|result| {
            parse_nodes(result).map_err(|reason| GatewayError::BadReply {
                api: "getNodes",
                reason,
            })
        });
    match result {
        Ok(mut nodes) => {
            let index = TopicIndex::build(&shared.settings.topic_prefix, nodes.values());
            info!(
                nodes = nodes.len(),
                topics = index.len(),
                "node list loaded"
            );
            report_collisions(&index);
            *write(&shared.topics) = index;
            let mut state = write(&shared.state);
            keep_newer_values(&mut nodes, &state.nodes, sent);
            state.nodes = nodes;
            state.nodes_loaded = true;
            state.refresh_error = None;
            drop(state);
            shared.changes.send_modify(|version| *version += 1);
            Ok(())
        }
        Err(err) => {
            warn!(error = %err, "loading the node list failed");
            write(&shared.state).refresh_error = Some(err.to_string());
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

/// Reloads the node list in the background. A retryable failure (the gateway not answering
/// yet, its driver still starting) is retried after 1 s, 2 s, 4 s … up to 30 s for as long as
/// the broker connection lasts; errors are logged and kept in the state for tool calls.
pub(super) fn spawn_refresh(shared: &Arc<Shared>, only_if_missing: bool) {
    let weak = Arc::downgrade(shared);
    tokio::spawn(async move {
        let mut delay = Duration::from_secs(1);
        loop {
            let Some(shared) = weak.upgrade() else { return };
            match refresh_nodes(&shared, only_if_missing).await {
                Err(err)
                    if err.is_retryable()
                        && read(&shared.state).broker == BrokerState::Connected => {}
                _ => return,
            }
            drop(shared);
            tokio::time::sleep(delay).await;
            delay = (delay * 2).min(Duration::from_secs(30));
        }
    });
}
