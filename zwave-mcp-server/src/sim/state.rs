//! The simulated gateway's state, shared by its handle ([`SimGateway`](super::SimGateway)),
//! its API (`api.rs`) and the storm: its settings, its home, its knobs, what it received.

use std::{
    collections::HashMap,
    sync::{Mutex, MutexGuard, PoisonError, atomic::AtomicU64},
    time::Duration,
};

use rumqttc::AsyncClient;
use serde_json::Value;

use super::topics::TopicSettings;
use crate::network::NodeId;

/// How value payloads are published (Z-Wave JS UI's gateway "payloadType").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum PayloadType {
    /// 0: `{"time":..,"value":..}`.
    #[default]
    #[value(name = "time-value", alias = "0")]
    TimeValue,
    /// 1: the entire value object.
    #[value(name = "entire-value-id", alias = "1")]
    EntireValueId,
    /// 2: the bare value.
    #[value(name = "raw", alias = "2")]
    Raw,
}

/// Settings of the simulated gateway.
#[derive(Debug, Clone)]
pub struct SimOptions {
    /// Topic prefix.
    pub prefix: String,
    /// Gateway name.
    pub gateway_name: String,
    /// How topics are named.
    pub topics: TopicSettings,
    /// How value payloads look.
    pub payload: PayloadType,
    /// How long after a write's reply a device without Supervision reports its state (the
    /// driver's verification Get).
    pub reports: ReportDelays,
    /// Whether the gateway publishes the driver's events on `<prefix>/_EVENTS/…` (Z-Wave JS
    /// UI's "send events" setting, off by default): here, the statistics updates.
    pub send_events: bool,
}

impl Default for SimOptions {
    fn default() -> Self {
        Self {
            prefix: "zwave".into(),
            gateway_name: "zwave-js-ui".into(),
            topics: TopicSettings::default(),
            payload: PayloadType::default(),
            reports: ReportDelays::default(),
            send_events: false,
        }
    }
}

/// How long after a write's reply the device's own report comes. The defaults are the real
/// driver's (`captures/confirm/FACTS.md`: zwave-js 15.29 verifies a binary switch ~1.1 s and a
/// multilevel switch ~5.1 s after an unsupervised Set).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReportDelays {
    /// A binary switch.
    pub switch: Duration,
    /// A multilevel switch (dimmer).
    pub dimmer: Duration,
}

impl Default for ReportDelays {
    fn default() -> Self {
        Self {
            switch: Duration::from_millis(1_100),
            dimmer: Duration::from_millis(5_100),
        }
    }
}

impl ReportDelays {
    /// Short delays for tests: the same order of events, sooner.
    pub const FAST: Self = Self {
        switch: Duration::from_millis(60),
        dimmer: Duration::from_millis(150),
    };
}

#[derive(Debug)]
pub(super) struct Knobs {
    pub(super) driver_ready: bool,
    pub(super) silent: bool,
    pub(super) write_status: Option<i64>,
    pub(super) confirm_writes: bool,
    pub(super) delays: HashMap<String, Duration>,
    /// APIs refused with a message of the test's choosing.
    pub(super) refusals: HashMap<String, String>,
    /// Nodes that acknowledge a Set and ignore it (a stuck relay, a dead bulb behind a live
    /// module): the reply is a success, the device's report shows the old state.
    pub(super) stuck: std::collections::HashSet<NodeId>,
    /// Nodes with Supervision: a Set is answered 255 once the device did it; no report follows.
    pub(super) supervised: std::collections::HashSet<NodeId>,
    /// Locks whose bolt jams: a lock or unlock is acknowledged, the lock reports "Lock jammed"
    /// (an Access Control notification) and then its old mode.
    pub(super) jammed: std::collections::HashSet<NodeId>,
    /// Nodes that stopped answering (out of range, unplugged): a ping gets no answer, and the
    /// driver marks them dead.
    pub(super) unanswering: std::collections::HashSet<NodeId>,
    /// APIs answered with a success carrying this result, whatever was asked (a gateway
    /// answering absurdly).
    pub(super) forced: HashMap<String, Value>,
    /// Upkeep: how the simulated driver re-interviews, checks and re-routes.
    pub(super) upkeep: super::upkeep::UpkeepKnobs,
}

impl Default for Knobs {
    /// A driver that is up and devices that report.
    fn default() -> Self {
        Self {
            driver_ready: true,
            silent: false,
            write_status: None,
            confirm_writes: true,
            delays: HashMap::new(),
            refusals: HashMap::new(),
            stuck: std::collections::HashSet::new(),
            supervised: std::collections::HashSet::new(),
            jammed: std::collections::HashSet::new(),
            unanswering: std::collections::HashSet::new(),
            forced: HashMap::new(),
            upkeep: super::upkeep::UpkeepKnobs::default(),
        }
    }
}

impl Knobs {
    /// Makes `node` acknowledge Sets and ignore them (`stuck`), or work again.
    pub(super) fn set_stuck(&mut self, node: NodeId, stuck: bool) {
        set_member(&mut self.stuck, node, stuck);
    }

    /// Makes the lock `node` jam at every lock or unlock, or work again.
    pub(super) fn set_jammed(&mut self, node: NodeId, jammed: bool) {
        set_member(&mut self.jammed, node, jammed);
    }

    /// Makes `node` stop answering, or answer again.
    pub(super) fn set_answering(&mut self, node: NodeId, answering: bool) {
        set_member(&mut self.unanswering, node, !answering);
    }

    /// Makes `node`'s interview never complete, or complete again.
    pub(super) fn set_interview_stalls(&mut self, node: NodeId, stalls: bool) {
        set_member(&mut self.upkeep.stalls, node, stalls);
    }

    /// Gives `node` Supervision, or takes it away.
    pub(super) fn set_supervised(&mut self, node: NodeId, supervised: bool) {
        set_member(&mut self.supervised, node, supervised);
    }
}

fn set_member(set: &mut std::collections::HashSet<NodeId>, node: NodeId, member: bool) {
    if member {
        set.insert(node);
    } else {
        set.remove(&node);
    }
}

pub(super) struct Sim {
    pub(super) client: AsyncClient,
    pub(super) options: SimOptions,
    pub(super) nodes: Mutex<Vec<Value>>,
    pub(super) knobs: Mutex<Knobs>,
    /// Last non-zero level of each dimmer, restored by a write of 255.
    pub(super) last_levels: Mutex<HashMap<NodeId, u8>>,
    /// True once subscribed to the API topics (after every connection).
    pub(super) ready: tokio::sync::watch::Sender<bool>,
    /// True once everything Z-Wave JS UI publishes on connecting has been handed to the client
    /// (after every connection).
    pub(super) published: tokio::sync::watch::Sender<bool>,
    /// Messages handed to the client, and how many of them the broker acknowledged (QoS 1).
    pub(super) sent: AtomicU64,
    pub(super) acked: tokio::sync::watch::Sender<u64>,
    /// Every API request received, in order: what the gateway really got, and when.
    pub(super) received: Mutex<Vec<ReceivedRequest>>,
    /// The latest write to each value (`node`, key), by number: the driver verifies only the
    /// latest Set of a value (a newer one replaces the scheduled verification).
    pub(super) latest_write: Mutex<HashMap<(NodeId, String), u64>>,
    /// What the devices really are where the cache may say otherwise ([`super::device::Devices::truth`]).
    pub(super) truth: Mutex<HashMap<(NodeId, String), Value>>,
    /// Values of nodes whose interview is running, restored when it completes.
    pub(super) interviewing: Mutex<HashMap<NodeId, Value>>,
}

impl Sim {
    /// Hands a message to the gateway's MQTT client (QoS 1), counted for
    /// [`SimGateway::wait_published`](super::SimGateway::wait_published).
    pub(super) async fn publish(&self, topic: String, payload: Vec<u8>, retain: bool) {
        match self
            .client
            .publish(topic.clone(), rumqttc::QoS::AtLeastOnce, retain, payload)
            .await
        {
            Ok(()) => {
                self.sent.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            }
            Err(err) => tracing::warn!(%topic, error = %err, "simulated gateway cannot publish"),
        }
    }
}

/// An API request as the simulated gateway received it.
#[derive(Debug, Clone, PartialEq)]
pub struct ReceivedRequest {
    /// When it arrived.
    pub at: std::time::Instant,
    /// The API (`writeValue`, ...).
    pub api: String,
    /// The request object (`requestId`, `args`).
    pub payload: Value,
}

/// Locks `mutex`, poisoned or not: every writer leaves the data whole.
pub(super) fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}
