//! What a resource shows: the home (the same rows as `list_zwave_devices`) or one device (its
//! status as `get_device_status` words it, its readings with their age, and what zwave-js
//! shows that the device has not reported), as JSON and as the tools' text; and a fingerprint
//! of it without ages and report times, so a subscriber is told of a change of state, not of
//! time passing nor of a device repeating what it said (a meter's unchanged reading).

use std::{
    fmt::Write as _,
    hash::{Hash as _, Hasher as _},
    sync::Arc,
};

use schemars::JsonSchema;
use serde::Serialize;
use serde_json::Value;

use super::super::{
    cache::RowCache,
    commands::Commands,
    stale::Staleness,
    status::device_status,
    types::{CommandNote, DeviceList, DeviceStatus},
};
use super::uri::ResourceUri;
use crate::{
    devices::{self, DeviceSummary, Exposure, Reading},
    network::{Network, NodeId, NodeInfo, Nodes},
};

/// What every device resource says of where its state comes from.
pub(crate) const SOURCE: &str = "State, readings and lastActiveMs are what Z-Wave JS holds: the device's own reports, except that Z-Wave JS also sets a value at once when any client sends the device a command, before the device reports. For this server's own commands that value is kept apart, under optimistic (its echo, not the device's word); one set by another client (Home Assistant, Z-Wave JS UI) cannot be told apart from a report until the device reports.";

/// One device, as `zwave://devices/{nodeId}` shows it.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct DeviceView {
    /// Status, as `get_device_status` gives it.
    #[serde(flatten)]
    pub status: DeviceStatus,
    /// Every reading with its unit and age, as `get_device_sensor_data` gives them.
    pub readings: Vec<Reading>,
    /// Values zwave-js shows for a command the device has not reported since.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub optimistic: Vec<Optimistic>,
    /// Where the state comes from ([`SOURCE`]).
    pub source: &'static str,
}

/// A value zwave-js set in its own cache when it acknowledged a command: not the device's word.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Optimistic {
    /// What the value is ("Current value").
    pub label: String,
    /// The value zwave-js shows.
    pub zwave_js_shows: Value,
    /// The device's last report of it, when it has reported one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub device_reported: Option<Value>,
}

/// A resource's content: its JSON and its text.
#[derive(Debug)]
pub(crate) struct Shown {
    pub json: Value,
    pub text: String,
}

/// Builds what the resources show, from the caches the tools share.
#[derive(Clone)]
pub(in crate::mcp) struct Viewer {
    pub(in crate::mcp) network: Network,
    pub(in crate::mcp) exposure: Arc<Exposure>,
    pub(in crate::mcp) rows: Arc<RowCache>,
    pub(in crate::mcp) commands: Arc<Commands>,
}

impl Viewer {
    /// Whether `node` is a device the agent may see.
    pub fn is_visible(&self, node: &NodeInfo) -> bool {
        devices::is_device(node) && self.exposure.can_read(node)
    }

    /// The devices the agent may see: id, name and location, by node id.
    pub fn listed(&self) -> Vec<(NodeId, String, String)> {
        self.network.with_nodes(|nodes| {
            nodes
                .values()
                .filter(|node| self.is_visible(node))
                .map(|node| (node.id, devices::display_name(node), node.loc.clone()))
                .collect()
        })
    }

    /// What `uri` shows at `now` (epoch ms), or without ages (`None`, for fingerprints);
    /// `None` when it names nothing the agent may see.
    pub fn show(&self, uri: ResourceUri, now: Option<i64>) -> Option<Shown> {
        match uri {
            ResourceUri::Home => Some(self.home(now)),
            ResourceUri::Device(id) => self.device(id, now),
        }
    }

    /// A hash of what `uri` shows, ages and report times left out; `None` when it shows
    /// nothing.
    pub fn fingerprint(&self, uri: ResourceUri) -> Option<u64> {
        let shown = self.show(uri, None)?;
        let mut hasher = std::collections::hash_map::DefaultHasher::new();
        shown.text.hash(&mut hasher);
        shown.json.to_string().hash(&mut hasher);
        Some(hasher.finish())
    }

    /// A hash of which devices there are, with their names and locations.
    pub fn list_fingerprint(&self) -> u64 {
        let mut hasher = std::collections::hash_map::DefaultHasher::new();
        self.listed().hash(&mut hasher);
        hasher.finish()
    }

    fn staleness(&self, now: Option<i64>, text: &mut String) -> Option<Staleness> {
        let stale = self.network.staleness()?;
        let mut staleness = Staleness::of(stale, now.unwrap_or(stale.since_ms));
        if now.is_none() {
            staleness.age_seconds = 0;
        }
        *text = format!("{}\n{text}", staleness.headline(stale));
        Some(staleness)
    }

    fn home(&self, now: Option<i64>) -> Shown {
        let (rows, commands) = self.network.with_nodes(|nodes| {
            let rows = self
                .rows
                .rows(nodes.values().filter(|node| self.is_visible(node)), nodes);
            let commands = self.notes(nodes, rows.iter().map(|row| row.summary.node_id), now);
            (rows, commands)
        });
        let mut text = match rows.len() {
            0 => "No Z-Wave devices found.".to_owned(),
            1 => "1 Z-Wave device:".to_owned(),
            count => format!("{count} Z-Wave devices:"),
        };
        for row in &rows {
            text.push_str(&row.line);
        }
        for command in &commands {
            let _ = write!(text, "\n  Node {}: {}", command.node_id, command.note);
        }
        let stale = self.staleness(now, &mut text);
        let list = DeviceList {
            devices: rows
                .iter()
                .map(|row| Arc::clone(&row.summary))
                .collect::<Vec<Arc<DeviceSummary>>>(),
            hidden_inactive: 0,
            commands,
            stale,
        };
        Shown {
            json: serde_json::to_value(&list).unwrap_or(Value::Null),
            text,
        }
    }

    /// What reads say of the last command to each of `ids` its device has not confirmed.
    fn notes(
        &self,
        nodes: &Nodes,
        ids: impl Iterator<Item = u16>,
        now: Option<i64>,
    ) -> Vec<CommandNote> {
        if self.commands.is_empty() {
            return Vec::new();
        }
        ids.filter_map(|id| {
            let node = nodes.get(&NodeId(id))?;
            // Without a clock, the note's "… ago" is always the same.
            let note = self.commands.note(node, now.unwrap_or(i64::MIN))?;
            Some(CommandNote { node_id: id, note })
        })
        .collect()
    }

    fn device(&self, id: NodeId, now: Option<i64>) -> Option<Shown> {
        let stale_link = self.network.staleness().is_some();
        let optimistic = self.network.optimistic(id);
        let (mut status, mut text, readings, optimistic) = self.network.with_nodes(|nodes| {
            let node = nodes.get(&id).filter(|node| self.is_visible(node))?;
            let (mut status, text) = device_status(node, stale_link);
            status.last_command = self.commands.note(node, now.unwrap_or(i64::MIN));
            let mut readings = devices::readings(node, now);
            if now.is_none() {
                // A fingerprint: a report that repeats a value changes no state, only when.
                status.last_active_age_seconds = None;
                status.last_active_ms = None;
                for reading in &mut readings {
                    reading.updated_at_ms = None;
                }
            }
            let optimistic: Vec<Optimistic> = optimistic
                .into_iter()
                .map(|(key, shows)| {
                    let value = node.values.get(key.as_str());
                    Optimistic {
                        label: value
                            .and_then(|value| value.label.clone())
                            .unwrap_or_else(|| key.clone()),
                        zwave_js_shows: shows,
                        device_reported: value.and_then(|value| value.value.clone()),
                    }
                })
                .collect();
            Some((status, text, readings, optimistic))
        })?;
        if now.is_none() {
            // The status text says "Last heard from … ago": cut it, the age is not content.
            if let Some(cut) = text.find(" Last heard from ") {
                text.truncate(cut);
            }
        }
        if let Some(note) = &status.last_command {
            text.push(' ');
            text.push_str(note);
        }
        if !readings.is_empty() {
            text.push_str("\nReadings:");
            for reading in &readings {
                let _ = write!(text, "\n- {}", reading.line());
            }
        }
        for shown in &optimistic {
            let _ = write!(
                text,
                "\nZ-Wave JS shows {} = {} at once for a command (its optimistic echo); the device has not reported it since.",
                shown.label, shown.zwave_js_shows
            );
        }
        status.stale = self.staleness(now, &mut text);
        let view = DeviceView {
            status,
            readings,
            optimistic,
            source: SOURCE,
        };
        Some(Shown {
            json: serde_json::to_value(&view).unwrap_or(Value::Null),
            text,
        })
    }
}
