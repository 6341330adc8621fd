//! The four tools, their arguments and their structured results.

use std::sync::Arc;

use rmcp::{
    handler::server::{tool::schema_for_output, wrapper::Parameters},
    model::{CallToolResult, ContentBlock},
    tool, tool_router,
};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use tracing::{info, warn};

use crate::{
    devices::{self, Action, DeviceKind, DeviceSummary, Expect, Purpose, Reading, ResolveError},
    gateway::{NodeInfo, now_ms},
};

use super::{ZwaveServer, stale::Staleness};

/// Arguments of `list_zwave_devices`.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ListArgs {
    /// Also list devices that are offline or dead (default false).
    #[serde(default)]
    pub include_inactive: bool,
    /// Only devices whose name or location contains this text (case-insensitive).
    #[serde(default)]
    pub filter: Option<String>,
}

/// Arguments of `control_zwave_device`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ControlArgs {
    /// Device name as listed by list_zwave_devices (e.g. "Living Room Light").
    pub device_name: String,
    /// "on", "off", or "dim" (dim needs level).
    pub action: Action,
    /// Brightness for "dim", 0 to 100 percent (100 = full).
    #[serde(default)]
    #[schemars(range(min = 0, max = 100))]
    pub level: Option<i64>,
}

/// Arguments of `get_device_sensor_data`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SensorArgs {
    /// Device name as listed by list_zwave_devices (e.g. "Office Temperature").
    pub device_name: String,
    /// Ask the device for fresh values first (slower; battery devices may be asleep).
    #[serde(default)]
    pub refresh: bool,
}

/// Arguments of `get_device_status`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct DeviceArgs {
    /// Device name as listed by list_zwave_devices.
    pub device_name: String,
}

/// Result of `list_zwave_devices`.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct DeviceList {
    /// The devices, by node id.
    pub devices: Vec<Arc<DeviceSummary>>,
    /// Offline devices left out because includeInactive was false.
    pub hidden_inactive: usize,
    /// Present when the broker, Z-Wave JS UI or its driver is down: these states are only the
    /// last known ones.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stale: Option<Staleness>,
}

/// Result of `control_zwave_device`.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ControlOutcome {
    /// Device name.
    pub device: String,
    /// Z-Wave node id.
    pub node_id: u16,
    /// The action carried out.
    pub action: Action,
    /// The value written to the device (true/false, or a level 0–99; 255 = last level).
    pub written: Value,
    /// writeValue status: 255 Success or 254 SuccessUnsupervised.
    pub status: i64,
    /// Whether the device reported the new state, after the write, within the confirmation wait.
    pub confirmed: bool,
    /// Whether the device was already in that state before the command.
    pub already: bool,
    /// The device's state after the command.
    pub state: String,
}

/// Result of `get_device_sensor_data`.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SensorData {
    /// Device name.
    pub device: String,
    /// Z-Wave node id.
    pub node_id: u16,
    /// Location, empty when not set.
    pub location: String,
    /// Whether values were polled from the device first.
    pub refreshed: bool,
    /// Values that could not be polled, with the reason.
    pub refresh_errors: Vec<String>,
    /// Every reading of the device.
    pub readings: Vec<Reading>,
    /// Present when the broker, Z-Wave JS UI or its driver is down: these states are only the
    /// last known ones.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stale: Option<Staleness>,
}

/// Result of `get_device_status`.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct DeviceStatus {
    /// Device name.
    pub device: String,
    /// Z-Wave node id.
    pub node_id: u16,
    /// Location, empty when not set.
    pub location: String,
    /// What it is.
    pub kind: DeviceKind,
    /// Whether it can be reached now.
    pub online: bool,
    /// Node status: Alive, Dead, Asleep, Awake or Unknown.
    pub node_status: String,
    /// Whether it is on (switches and dimmers).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub on: Option<bool>,
    /// Brightness in percent (dimmers).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub level: Option<u8>,
    /// Battery level in percent (battery devices).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub battery: Option<u8>,
    /// Last time the device was heard from (epoch milliseconds).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_active_ms: Option<i64>,
    /// Seconds since the device was last heard from.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_active_age_seconds: Option<u64>,
    /// One-line state summary.
    pub summary: String,
    /// Present when the broker, Z-Wave JS UI or its driver is down: these states are only the
    /// last known ones.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stale: Option<Staleness>,
}

#[tool_router(vis = "pub(crate)")]
impl ZwaveServer {
    /// Lists the Z-Wave devices of the home with name, node id, location, online state, kind
    /// and a one-line state summary.
    #[tool(
        name = "list_zwave_devices",
        description = "Lists the Z-Wave devices of the home with name, node id, location, online state, kind and a one-line state summary.",
        output_schema = schema_for_output::<DeviceList>(),
        annotations(read_only_hint = true, open_world_hint = false)
    )]
    async fn list_zwave_devices(&self, Parameters(args): Parameters<ListArgs>) -> CallToolResult {
        if let Err(message) = self.readable().await {
            return failure(message);
        }
        let filter = args
            .filter
            .as_deref()
            .map(str::trim)
            .filter(|f| !f.is_empty())
            .map(str::to_lowercase);
        let mut hidden_inactive = 0;
        let rows = self.gateway.with_nodes(|nodes| {
            let listed = nodes
                .values()
                .filter(|node| devices::is_device(node) && self.exposure.can_read(node))
                .filter(|node| match &filter {
                    Some(filter) => {
                        devices::display_name(node).to_lowercase().contains(filter)
                            || node.loc.to_lowercase().contains(filter)
                    }
                    None => true,
                })
                .filter(|node| {
                    let keep = args.include_inactive || devices::is_online(node);
                    hidden_inactive += usize::from(!keep);
                    keep
                });
            self.rows.rows(listed, nodes)
        });
        let mut text = match (&filter, rows.len()) {
            (Some(filter), 0) => format!("No Z-Wave device matches \"{filter}\"."),
            (None, 0) => "No Z-Wave devices found.".to_owned(),
            (_, count) => format!(
                "{count} Z-Wave device{}:",
                if count == 1 { "" } else { "s" }
            ),
        };
        text.reserve(rows.iter().map(|row| row.line.len()).sum());
        for row in &rows {
            text.push_str(&row.line);
        }
        let devices = rows.iter().map(|row| Arc::clone(&row.summary)).collect();
        if hidden_inactive > 0 {
            text.push_str(&format!(
                "\n{hidden_inactive} offline device{} not shown (includeInactive: true lists them).",
                if hidden_inactive == 1 { "" } else { "s" }
            ));
        }
        let stale = self.stale(&mut text);
        structured(
            text,
            &DeviceList {
                devices,
                hidden_inactive,
                stale,
            },
        )
    }

    /// Switches a Z-Wave switch or dimmer on or off, or dims it to a level (0-100), and
    /// reports whether the device confirmed its new state.
    #[tool(
        name = "control_zwave_device",
        description = "Switches a Z-Wave switch or dimmer on or off, or dims it to a level (0-100), and reports whether the device confirmed its new state.",
        output_schema = schema_for_output::<ControlOutcome>(),
        annotations(read_only_hint = false, destructive_hint = false, idempotent_hint = true, open_world_hint = true)
    )]
    async fn control_zwave_device(
        &self,
        Parameters(args): Parameters<ControlArgs>,
    ) -> CallToolResult {
        let node = match self.find_device(&args.device_name, Purpose::Control).await {
            Ok(node) => node,
            Err(message) => return failure(message),
        };
        let plan = match devices::plan(&node, args.action, args.level) {
            Ok(plan) => plan,
            Err(err) => return failure(err),
        };
        let name = devices::display_name(&node);
        info!(device = ?name, node = %node.id, action = %args.action, value = %plan.value, "writing value");
        let already = self
            .gateway
            .value(node.id, plan.current_key.as_str())
            .is_some_and(|value| plan.expect.accepts(&value));
        // Only a report received after this instant confirms the write: the gateway's first
        // echo carries old payload times, so times in payloads are not trusted for this.
        let sent = std::time::Instant::now();
        let status = match self
            .gateway
            .write_value(&plan.target, plan.value.clone())
            .await
        {
            Ok(status) => status,
            Err(err) => return failure(format!("could not switch \"{name}\": {err}")),
        };
        let confirmed = self
            .gateway
            .wait_for_report(
                node.id,
                plan.current_key.as_str(),
                sent,
                self.confirm_timeout,
                |value| plan.expect.accepts(value),
            )
            .await
            .is_some();
        let state = self
            .gateway
            .with_nodes(|nodes| nodes.get(&node.id).map(devices::summary))
            .unwrap_or_else(|| "unknown".into());
        let verb = match plan.expect {
            Expect::Bool(true) | Expect::NonZero => "switched on".to_owned(),
            Expect::Bool(false) | Expect::Level(0) => "switched off".to_owned(),
            Expect::Level(level) => format!("dimmed to {}%", devices::percent_of_99(level)),
        };
        let text = match (confirmed, already) {
            (true, false) => format!("{name} {verb}; the device confirmed it (now {state})."),
            (true, true) => format!(
                "{name} was already {}; the device confirmed it (now {state}).",
                already_word(&plan.expect)
            ),
            (false, _) => {
                warn!(device = ?name, "device did not confirm the new state in time");
                format!(
                    "{name} {verb}: Z-Wave JS UI accepted the command (status {status}), but the device has not \
                     confirmed its new state within {:?} (last known: {state}).",
                    self.confirm_timeout
                )
            }
        };
        structured(
            text,
            &ControlOutcome {
                device: name,
                node_id: node.id.0,
                action: args.action,
                written: plan.value,
                status,
                confirmed,
                already,
                state,
            },
        )
    }

    /// Returns every reading of a Z-Wave device (temperature, humidity, illuminance, motion and
    /// other notification states, meter readings, battery) with unit and age.
    #[tool(
        name = "get_device_sensor_data",
        description = "Returns every reading of a Z-Wave device (temperature, humidity, illuminance, motion and other notification states, meter readings, battery) with unit and age.",
        output_schema = schema_for_output::<SensorData>(),
        annotations(read_only_hint = true, open_world_hint = true)
    )]
    async fn get_device_sensor_data(
        &self,
        Parameters(args): Parameters<SensorArgs>,
    ) -> CallToolResult {
        let node = match self.find_device(&args.device_name, Purpose::Read).await {
            Ok(node) => node,
            Err(message) => return failure(message),
        };
        let name = devices::display_name(&node);
        let mut refresh_errors = Vec::new();
        if args.refresh {
            if !devices::is_online(&node) {
                return failure(format!(
                    "{} is offline (status {}): its values cannot be refreshed; call again without refresh for the last known readings",
                    devices::describe(&node),
                    devices::status_word(&node)
                ));
            }
            let mut polls = tokio::task::JoinSet::new();
            for reading in devices::readings(&node, None) {
                let Some(id) = reading.value_id else { continue };
                let gateway = self.gateway.clone();
                polls.spawn(async move {
                    gateway
                        .poll_value(&id)
                        .await
                        .map_err(|err| format!("{}: {err}", reading.label))
                });
            }
            while let Some(joined) = polls.join_next().await {
                match joined {
                    Ok(Ok(_)) => {}
                    Ok(Err(message)) => refresh_errors.push(message),
                    Err(err) => refresh_errors.push(format!("a poll task failed: {err}")),
                }
            }
            refresh_errors.sort();
        }
        let node = self.gateway.node(node.id).unwrap_or(node);
        let readings = devices::readings(&node, Some(now_ms()));
        let mut text = format!("Readings of {}:", devices::describe(&node));
        if readings.is_empty() {
            text = format!("{} has no sensor readings.", devices::describe(&node));
        }
        for reading in &readings {
            text.push_str(&format!("\n- {}", reading.line()));
        }
        if !devices::is_online(&node) {
            text.push_str(&format!(
                "\nThe device is offline (status {}): these are its last known values.",
                devices::status_word(&node)
            ));
        }
        for error in &refresh_errors {
            text.push_str(&format!("\nCould not refresh {error}"));
        }
        let stale = self.stale(&mut text);
        structured(
            text,
            &SensorData {
                device: name,
                node_id: node.id.0,
                location: node.loc.clone(),
                refreshed: args.refresh,
                refresh_errors,
                readings,
                stale,
            },
        )
    }

    /// Returns a Z-Wave device's status: on/off or level, whether it is reachable, its node
    /// status, when it was last heard from, and its battery level when it has one.
    #[tool(
        name = "get_device_status",
        description = "Returns a Z-Wave device's status: on/off or level, whether it is reachable, its node status, when it was last heard from, and its battery level when it has one.",
        output_schema = schema_for_output::<DeviceStatus>(),
        annotations(read_only_hint = true, open_world_hint = false)
    )]
    async fn get_device_status(&self, Parameters(args): Parameters<DeviceArgs>) -> CallToolResult {
        let found = self
            .find_device_with(&args.device_name, Purpose::Read, device_status)
            .await;
        let (status, mut text) = match found {
            Ok(found) => found,
            Err(message) => return failure(message),
        };
        let status = DeviceStatus {
            stale: self.stale(&mut text),
            ..status
        };
        structured(text, &status)
    }
}

impl ZwaveServer {
    /// Makes sure there are nodes to read: loaded now, or, while a link to the devices is
    /// down, the last known ones (results then say they are stale).
    async fn readable(&self) -> Result<(), String> {
        match self.gateway.ensure_nodes().await {
            Ok(()) => Ok(()),
            Err(_) if self.gateway.staleness().is_some() && self.gateway.has_nodes() => Ok(()),
            Err(err) => Err(err.to_string()),
        }
    }

    /// When states may be out of date: puts the headline saying so before `text` and returns
    /// the structured form.
    fn stale(&self, text: &mut String) -> Option<Staleness> {
        let stale = self.gateway.staleness()?;
        let staleness = Staleness::of(stale, now_ms());
        *text = format!("{}\n{text}", staleness.headline(stale));
        Some(staleness)
    }

    /// Resolves a device name against the current node list; on no match, reloads the node
    /// list once (the device may be new or renamed) and tries again. Returns a copy of it.
    async fn find_device(&self, query: &str, purpose: Purpose) -> Result<NodeInfo, String> {
        self.find_device_with(query, purpose, NodeInfo::clone).await
    }

    /// [`Self::find_device`], running `look` on the device under the node list's read lock
    /// instead of copying it (a node and its values are a deep tree: copying one cost more
    /// than resolving its name).
    async fn find_device_with<R>(
        &self,
        query: &str,
        purpose: Purpose,
        look: impl Fn(&NodeInfo) -> R,
    ) -> Result<R, String> {
        match purpose {
            Purpose::Read => self.readable().await?,
            Purpose::Control => self
                .gateway
                .ensure_nodes()
                .await
                .map_err(|err| err.to_string())?,
        }
        let resolve = || {
            self.gateway.with_nodes(|nodes| {
                let directory = self
                    .names
                    .of(nodes, |node: &NodeInfo| self.exposure.can_read(node));
                let at = directory.resolve(query, purpose)?;
                let node = directory
                    .id(at)
                    .and_then(|id| nodes.get(&crate::gateway::NodeId(id)))
                    .ok_or_else(|| ResolveError::NotFound {
                        query: query.trim().to_owned(),
                        suggestions: Vec::new(),
                    })?;
                Ok((look(node), self.exposure.can_control(node)))
            })
        };
        let mut resolved = resolve();
        if matches!(resolved, Err(ResolveError::NotFound { .. })) {
            if let Err(err) = self.gateway.refresh_nodes().await {
                warn!(error = %err, "reloading the node list failed");
            }
            resolved = resolve();
        }
        // A command naming a device the owner keeps from the agent is refused as not exposed,
        // not as unknown; reads do not see such devices at all, and no message lists them.
        if purpose == Purpose::Control
            && matches!(resolved, Err(ResolveError::NotFound { .. }))
            && self
                .gateway
                .with_nodes(|nodes| resolve_in(nodes, query, purpose, &|_: &NodeInfo| true).is_ok())
        {
            return Err(not_exposed(query));
        }
        let (found, controllable) = resolved.map_err(|err| err.to_string())?;
        if purpose == Purpose::Control && !controllable {
            return Err(not_exposed(query));
        }
        Ok(found)
    }
}

/// What `get_device_status` says of `node`: its status (not yet marked stale) and the text.
fn device_status(node: &NodeInfo) -> (DeviceStatus, String) {
    let kind = DeviceKind::of(node);
    let last_active_age_seconds = node
        .last_active
        .map(|at| u64::try_from(now_ms().saturating_sub(at)).unwrap_or(0) / 1000);
    let status = DeviceStatus {
        device: devices::display_name(node),
        node_id: node.id.0,
        location: node.loc.clone(),
        kind,
        online: devices::is_online(node),
        node_status: devices::status_word(node).to_owned(),
        on: devices::is_on(node),
        level: (kind == DeviceKind::Dimmer)
            .then(|| devices::level(node).map(devices::percent_of_99))
            .flatten(),
        battery: devices::battery(node),
        last_active_ms: node.last_active,
        last_active_age_seconds,
        summary: devices::summary(node),
        stale: None,
    };
    let mut text = format!(
        "{} is a {}, {} (node status {}): {}.",
        devices::describe(node),
        kind.as_str(),
        if status.online { "online" } else { "offline" },
        status.node_status,
        status.summary
    );
    if let Some(age) = last_active_age_seconds {
        text.push_str(&format!(" Last heard from {}.", devices::ago(age)));
    }
    (status, text)
}

fn not_exposed(query: &str) -> String {
    format!(
        "\"{}\" is not exposed to this agent for switching: the owner of this server chose which devices it may control",
        query.trim()
    )
}

fn resolve_in<'a>(
    nodes: &'a std::collections::BTreeMap<crate::gateway::NodeId, NodeInfo>,
    query: &str,
    purpose: Purpose,
    visible: &dyn Fn(&NodeInfo) -> bool,
) -> Result<&'a NodeInfo, ResolveError> {
    let candidates: Vec<&NodeInfo> = nodes
        .values()
        .filter(|node| devices::is_device(node) && visible(node))
        .collect();
    devices::resolve(&candidates, query, purpose)
}

/// How a device already in the asked-for state is described: "on", "off", "at 40%".
fn already_word(expect: &Expect) -> String {
    match expect {
        Expect::Bool(true) | Expect::NonZero => "on".into(),
        Expect::Bool(false) | Expect::Level(0) => "off".into(),
        Expect::Level(level) => format!("at {}%", devices::percent_of_99(*level)),
    }
}

fn failure(message: impl ToString) -> CallToolResult {
    CallToolResult::error(vec![ContentBlock::text(message.to_string())])
}

fn structured(text: String, value: &impl Serialize) -> CallToolResult {
    match serde_json::to_value(value) {
        Ok(json) => {
            let mut result = CallToolResult::success(vec![ContentBlock::text(text)]);
            result.structured_content = Some(json);
            result
        }
        Err(err) => failure(format!("internal error while encoding the result: {err}")),
    }
}
