//! The one task that owns the rumqttc event loop: reconnects with backoff, resubscribes,
//! routes API replies to their requests, tracks gateway and driver status, and keeps the value
//! cache current from value topics.

use std::sync::{Arc, Weak};

use rumqttc::{Event, EventLoop, Packet, QoS};
use tracing::{debug, info, warn};

use super::{
    ApiReply, Backoff, LinkState, NodeId,
    core::{now_ms, read, write},
    events,
    reload::request_reload,
    settings::MAX_PAYLOAD,
    shared::Shared,
    topics::{self, Route},
};
use crate::network::values::MAX_VALUE_BYTES;

/// The largest payload taken on a topic other than the gateway's API replies (a value, a
/// status): a value's JSON is at most [`MAX_VALUE_BYTES`], and the "entire value object"
/// payload type adds its metadata (under 500 bytes recorded; a long list of states takes more). Larger ones are refused before
/// they are parsed.
const MAX_TOPIC_PAYLOAD: usize = MAX_VALUE_BYTES + 64 * 1024;

/// Owns the rumqttc event loop until every [`Network`] handle is gone.
pub(in crate::network) async fn run_event_loop(
    shared: Weak<Shared>,
    mut event_loop: EventLoop,
    backoff: Backoff,
) {
    let mut failures: u32 = 0;
    loop {
        let event = event_loop.poll().await;
        let Some(shared) = shared.upgrade() else {
            return;
        };
        match event {
            Ok(Event::Incoming(Packet::ConnAck(_))) => on_connected(&shared),
            Ok(Event::Incoming(Packet::Publish(publish)))
                if publish.payload.len() > MAX_PAYLOAD =>
            {
                warn!(topic = ?publish.topic, bytes = publish.payload.len(), max_bytes = MAX_PAYLOAD, retained = publish.retain, "dropped an incoming message too large to be Z-Wave JS UI's");
            }
            Ok(Event::Incoming(Packet::Publish(publish))) => {
                on_publish(&shared, &publish.topic, &publish.payload, publish.retain);
            }
            Ok(_) => {}
            Err(err) => {
                let reason = err.to_string();
                let gate = shared
                    .send_gate
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner);
                // rumqttc keeps what it had not sent, to send it after reconnecting; also
                // what was handed over after its own clean-up. Nothing of a lost connection
                // may go out later: its callers are told the connection was lost.
                event_loop.clean();
                event_loop.pending.clear();
                let (was_connected, was_useful) = {
                    let mut state = write(&shared.core.state);
                    let was = state.link == LinkState::Connected;
                    state.link = LinkState::Down {
                        reason: reason.clone(),
                    };
                    if was {
                        state.link_down_since.get_or_insert_with(now_ms);
                    }
                    let loaded = state.nodes_loaded;
                    state.nodes_loaded = false;
                    (was, was && loaded)
                };
                drop(gate);
                shared.pending.fail_all();
                shared.core.changed();
                // Only a connection that got as far as loading the node list starts the
                // backoff afresh: one dropped right after connecting (by something it is sent
                // every time) keeps backing off.
                if was_useful {
                    failures = 0;
                }
                failures = failures.saturating_add(1);
                let delay = backoff.after(failures);
                if was_connected {
                    warn!(error = %reason, "lost the mqtt connection; reconnecting");
                } else {
                    warn!(error = %reason, retry_in = ?delay, "cannot connect to the mqtt broker");
                }
                drop(shared);
                tokio::time::sleep(delay).await;
            }
        }
    }
}

fn on_connected(shared: &Arc<Shared>) {
    let filter = format!("{}/#", shared.settings.topic_prefix);
    // QoS 0: Mosquitto keeps at most 20 QoS 1 messages in flight and 1,000 queued per client
    // and drops the rest, so a large home's retained values would push API replies out of
    // the queue. Over one live connection QoS 0 loses nothing; a lost connection fails the
    // pending requests and reloads the node list either way.
    // try_subscribe: this task is the one that drains the request channel, so it must not
    // wait for room in it.
    if let Err(err) = shared.client.try_subscribe(filter.clone(), QoS::AtMostOnce) {
        warn!(error = %err, %filter, "subscribing failed");
    }
    {
        let mut state = write(&shared.core.state);
        state.link = LinkState::Connected;
        state.link_down_since = None;
    }
    shared.core.changed();
    info!(%filter, "connected to the mqtt broker");
    request_reload(shared, false);
}

/// What a message under the prefix is, from its topic alone.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Topic<'a> {
    /// Not under the prefix, or a request (`…/set`, ours or another client's): not read.
    Ignored,
    /// `<prefix>/driver/status`: whether the Z-Wave driver is ready.
    DriverStatus,
    /// The gateway's own `…/status`: whether Z-Wave JS UI is online.
    GatewayStatus,
    /// A reply of the gateway's API `api` (`…/api/<api>`): the only large messages.
    ApiReply(&'a str),
    /// Another topic under the gateway's client topic: nothing read from it.
    GatewayOther,
    /// One of the gateway's event topics (`rest`: `<source>/<event>`).
    Event(&'a str),
    /// Anything else under the prefix (`rest`: the topic after it): a value, a node's status
    /// or last activity, as the topic index routes it.
    Node {
        /// The topic after `<prefix>/`.
        rest: &'a str,
    },
}

impl<'a> Topic<'a> {
    /// What `topic` is, for the prefix and gateway topic of `shared`'s settings.
    fn of(shared: &Shared, topic: &'a str) -> Self {
        let Some(rest) = topic
            .strip_prefix(shared.settings.topic_prefix.as_str())
            .and_then(|r| r.strip_prefix('/'))
        else {
            return Self::Ignored;
        };
        if rest.ends_with("/set") {
            return Self::Ignored;
        }
        if rest == "driver/status" {
            return Self::DriverStatus;
        }
        if let Some(event) = topic
            .strip_prefix(shared.events_topic.as_str())
            .and_then(|rest| rest.strip_prefix('/'))
        {
            return Self::Event(event);
        }
        match topic.strip_prefix(shared.gateway_topic.as_str()) {
            Some("/status") => Self::GatewayStatus,
            Some(gateway_rest) => match gateway_rest.strip_prefix("/api/") {
                Some(api) => Self::ApiReply(api),
                None => Self::GatewayOther,
            },
            None => Self::Node { rest },
        }
    }
}

/// Handles one message. `retained`: the broker sent it because we subscribed, so it is older
/// than the `getNodes` sent after subscribing, which already covers what it says.
fn on_publish(shared: &Arc<Shared>, topic: &str, payload: &[u8], retained: bool) {
    let kind = Topic::of(shared, topic);
    if kind == Topic::Ignored {
        return;
    }
    // Only the gateway's API replies may be large (a whole network's `getNodes`, parsed node
    // by node): anything else this big is no message of Z-Wave JS UI, and is not parsed.
    if !matches!(kind, Topic::ApiReply(_)) && payload.len() > MAX_TOPIC_PAYLOAD {
        refuse_oversized(shared, topic, payload.len());
        return;
    }
    match kind {
        Topic::Ignored | Topic::GatewayOther => {}
        Topic::DriverStatus => on_driver_status(shared, payload),
        Topic::GatewayStatus => on_gateway_status(shared, payload),
        Topic::ApiReply(api) => on_api_reply(shared, topic, api, payload),
        Topic::Event(event) => events::on_event(shared, event, payload),
        Topic::Node { rest } => {
            let route = read(&shared.topics).route(topic).cloned();
            match route {
                Some(Route::Value(target)) => {
                    on_value(shared, &target, topic, payload, retained);
                }
                Some(Route::NodeStatus(node)) => on_node_status(shared, node, payload, retained),
                Some(Route::NodeLastActive(node)) => {
                    if let Some(ms) = topics::decode_epoch_ms(payload)
                        && let Some(mut info) = write(&shared.core.state).nodes.get_mut(&node)
                    {
                        info.set_last_active(ms);
                    }
                }
                None => on_unknown(shared, topic, rest, payload, retained),
            }
        }
    }
}

/// A message too large to be Z-Wave JS UI's (other than an API reply): said, not parsed.
fn refuse_oversized(shared: &Shared, topic: &str, bytes: usize) {
    let route = read(&shared.topics).route(topic).cloned();
    match route {
        Some(Route::Value(target)) => warn!(
            node = %target.node, key = %target.key, topic = ?topic, bytes,
            max_bytes = MAX_TOPIC_PAYLOAD,
            "refused a value report larger than any value: not parsed, not stored (the cache keeps the value it had)"
        ),
        _ => warn!(
            topic = ?topic, bytes, max_bytes = MAX_TOPIC_PAYLOAD,
            "refused a status or value message larger than any of Z-Wave JS UI's: not parsed"
        ),
    }
}

/// `<prefix>/driver/status`: the driver's readiness, and a reload when it came back.
fn on_driver_status(shared: &Arc<Shared>, payload: &[u8]) {
    let ready = topics::decode_flag(payload);
    let was = {
        let mut state = write(&shared.core.state);
        state.driver_reports += 1;
        match ready {
            Some(false) => {
                state.driver_down_since.get_or_insert_with(now_ms);
            }
            Some(true) => state.driver_down_since = None,
            None => {}
        }
        std::mem::replace(&mut state.driver_ready, ready)
    };
    info!(ready = ?ready, "z-wave driver status");
    // The driver came back (controller reconnected, Z-Wave JS UI restarted): nodes may
    // have changed while it was down.
    if ready == Some(true) && was == Some(false) {
        request_reload(shared, true);
    }
}

/// The gateway's `…/status`: whether it is online, and a reload when it came (back).
fn on_gateway_status(shared: &Arc<Shared>, payload: &[u8]) {
    let online = topics::decode_flag(payload);
    let was = {
        let mut state = write(&shared.core.state);
        match online {
            Some(false) => {
                state.gateway_offline_since.get_or_insert_with(now_ms);
            }
            Some(true) => state.gateway_offline_since = None,
            None => {}
        }
        std::mem::replace(&mut state.gateway_online, online)
    };
    info!(online = ?online, gateway = %shared.settings.gateway_name, "gateway status");
    // Back after a crash: nodes may have changed. First seen: load them if missing.
    if online == Some(true) && was != Some(true) {
        request_reload(shared, was == Some(false));
    }
}

/// A reply of the gateway's API `api`: to the request waiting for it, if any.
fn on_api_reply(shared: &Shared, topic: &str, api: &str, payload: &[u8]) {
    match serde_json::from_slice::<ApiReply>(payload) {
        Ok(reply) => {
            if !shared.pending.complete(api, reply) {
                debug!(
                    topic = ?topic,
                    "api reply for nobody waiting (another client, or timed out)"
                );
            }
        }
        Err(err) => warn!(topic = ?topic, error = %err, "api reply does not parse"),
    }
}

/// A value report: stored, unless it is zwave-js's echo of a write (or a retained copy of
/// one) rather than the device's word.
fn on_value(
    shared: &Shared,
    target: &topics::ValueRef,
    topic: &str,
    payload: &[u8],
    retained: bool,
) {
    let value = match topics::decode_value(payload) {
        Ok(value) => value,
        Err(why) => {
            warn!(node = %target.node, key = %target.key, topic = ?topic, %why, "refused a value report: not stored (the cache keeps the value it had)");
            return;
        }
    };
    if shared
        .core
        .is_echo(target.node, &target.key, value.as_ref())
    {
        debug!(node = %target.node, key = %target.key, "not storing zwave-js's optimistic echo of a write: it is not the device's report");
        return;
    }
    // What the broker replays on subscribing is Z-Wave JS UI's last publication, which
    // may be the echo of a write the device never confirmed.
    if retained
        && shared
            .core
            .is_awaited(target.node, &target.key, value.as_ref())
    {
        debug!(node = %target.node, key = %target.key, "not storing a retained copy of a write's optimistic value: the device has not reported it");
        return;
    }
    shared
        .core
        .store_value(target.node, &target.key, value, !retained);
}

/// A node's status topic: its availability and status, and a reload when what `getNodes`
/// says of it may have changed.
fn on_node_status(shared: &Arc<Shared>, node: NodeId, payload: &[u8], retained: bool) {
    let Some((available, status)) = topics::decode_node_status(payload) else {
        // A cleared status topic: the node was removed (or renamed away).
        debug!(%node, "node status topic cleared; reloading the node list");
        request_reload(shared, true);
        return;
    };
    shared
        .status_seen
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .insert(node, std::time::Instant::now());
    let changed = {
        let mut state = write(&shared.core.state);
        match state.nodes.get_mut(&node) {
            Some(mut info) => {
                let changed = status.is_some() && info.status != status;
                info.set_available(available);
                if let Some(status) = &status {
                    info.set_status(status.clone());
                }
                changed || !info.ready
            }
            None => true,
        }
    };
    if let Some(status) = &status
        && !retained
    {
        shared.core.saw_status(node, status);
    }
    // An interview finished, a node woke up, died or came back: what getNodes says
    // about it (its values, even its kind) may have changed.
    if changed {
        request_reload(shared, !retained);
    }
}

/// A topic the index does not route (`rest`: after the prefix).
fn on_unknown(shared: &Arc<Shared>, topic: &str, rest: &str, payload: &[u8], retained: bool) {
    // A status from a node we do not know under this topic: a node was added, or
    // renamed or moved (its topics changed). Topics two known nodes share are not it.
    if rest.ends_with("/status")
        && !read(&shared.topics).is_ambiguous(topic)
        && serde_json::from_slice::<serde_json::Value>(payload)
            .ok()
            .is_some_and(|status| status.get("nodeId").is_some())
    {
        debug!(
            topic = ?topic,
            retained,
            "status of a node not in the list; reloading the node list"
        );
        request_reload(shared, !retained);
    }
}
