//! The five tools: what each does (the health tool's work is in `health`), and finding a
//! device by name with the owner's exposure rules applied. Each tool's work returns
//! `Result<_, ToolError>`; the error becomes an `isError` result only at the tool's edge (a
//! request the protocol itself refuses, a JSON-RPC error).

use std::sync::Arc;

use rmcp::{
    RoleServer,
    handler::server::{
        tool::{InputResponses, RequestState, schema_for_output},
        wrapper::Parameters,
    },
    model::{CallToolResponse, CallToolResult, ContentBlock, ErrorData},
    service::RequestContext,
    tool, tool_router,
};
use serde::Serialize;
use tracing::warn;

use super::{
    ZwaveServer,
    error::ToolError,
    retry::{Asking, Retry},
    stale::Staleness,
    status::device_status,
    types::{
        CommandNote, ControlArgs, ControlOutcome, DeviceArgs, DeviceList, DeviceStatus, HealthArgs,
        ListArgs, NetworkHealth, SensorArgs, SensorData,
    },
};
use crate::{
    devices::{self, Purpose, ResolveError},
    network::{NodeInfo, now_ms},
};

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
        self.list(args).await.unwrap_or_else(CallToolResult::from)
    }

    /// Carries out one action on a Z-Wave device and says whether the device itself confirmed
    /// its new state or only acknowledged the command.
    #[tool(
        name = "control_zwave_device",
        description = "Carries out one action on a Z-Wave device. Switches and lights: on, off, dim (level 0-100); colour lights also set_color (color). Locks: lock, unlock. Blinds, shutters, garage doors: open, close, stop, set_position (level 0 closed to 100 open). Thermostats: set_temperature (temperature), set_mode (mode). Sirens: sound (tone optional), silence. Says whether the device itself confirmed its new state, or only acknowledged the command (get_device_status then tells what became of it), or reported that it did not change. Unlock, opening a garage door and silence need the owner's permission and a person's yes.",
        output_schema = schema_for_output::<ControlOutcome>(),
        annotations(read_only_hint = false, destructive_hint = false, idempotent_hint = true, open_world_hint = true)
    )]
    async fn control_zwave_device(
        &self,
        Parameters(args): Parameters<ControlArgs>,
        context: RequestContext<RoleServer>,
        RequestState(state): RequestState,
        InputResponses(responses): InputResponses,
    ) -> Result<CallToolResponse, ErrorData> {
        let asking = match Retry::of(&context, state, responses) {
            Some(retry) => Asking::Retry(retry),
            None => Asking::Elicit(&context.peer),
        };
        let granted = super::server::principal(&context).scopes();
        match self.control(args, &context.ct, asking, granted).await {
            Ok(response) => Ok(response),
            // The request itself is refused (2026-07-28's rules): a JSON-RPC error.
            Err(ToolError::Protocol(error)) => Err(error),
            Err(err) => Ok(CallToolResult::from(err).into()),
        }
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
        self.sensor_data(args)
            .await
            .unwrap_or_else(CallToolResult::from)
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
        self.status(args).await.unwrap_or_else(CallToolResult::from)
    }

    /// Tells which Z-Wave devices are dead or weak and why, for the whole network or one
    /// device, and pings a device when asked.
    #[tool(
        name = "get_zwave_health",
        description = "Tells which Z-Wave devices are dead or have a weak link and why (lost or late commands, weak signal, slow or long route, last heard from), dead and weakest first; the whole network, or one device with deviceName. ping: true (with deviceName) checks that the device answers now and how fast, changing nothing on it.",
        output_schema = schema_for_output::<NetworkHealth>(),
        annotations(read_only_hint = true, open_world_hint = true)
    )]
    async fn get_zwave_health(&self, Parameters(args): Parameters<HealthArgs>) -> CallToolResult {
        self.health(args).await.unwrap_or_else(CallToolResult::from)
    }
}

impl ZwaveServer {
    /// What `list_zwave_devices` does.
    async fn list(&self, args: ListArgs) -> Result<CallToolResult, ToolError> {
        self.readable().await?;
        let filter = args
            .filter
            .as_deref()
            .map(str::trim)
            .filter(|f| !f.is_empty())
            .map(str::to_lowercase);
        let mut hidden_inactive = 0;
        let rows = self.network.with_nodes(|nodes| {
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
            let rows = self.rows.rows(listed, nodes);
            // What became of commands not yet confirmed by their devices.
            let notes: Vec<CommandNote> = if self.commands.is_empty() {
                Vec::new()
            } else {
                let now = now_ms();
                rows.iter()
                    .filter_map(|row| {
                        let node = nodes.get(&crate::network::NodeId(row.summary.node_id))?;
                        let note = self.commands.note(node, now)?;
                        Some(CommandNote {
                            node_id: node.id.0,
                            note,
                        })
                    })
                    .collect()
            };
            (rows, notes)
        });
        let (rows, commands) = rows;
        let mut text = match (&filter, rows.len()) {
            (Some(filter), 0) => format!(
                "No Z-Wave device matches \"{}\".",
                crate::network::text::echoed(filter)
            ),
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
        for command in &commands {
            text.push_str(&format!("\n  Node {}: {}", command.node_id, command.note));
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
                commands,
                stale,
            },
        )
    }

    /// What `get_device_sensor_data` does.
    async fn sensor_data(&self, args: SensorArgs) -> Result<CallToolResult, ToolError> {
        let node = self.find_device(&args.device_name, Purpose::Read).await?;
        let name = devices::display_name(&node);
        let mut refresh_errors = Vec::new();
        if args.refresh {
            if !devices::is_online(&node) {
                return Err(ToolError::OfflineRefresh {
                    device: devices::describe(&node),
                    status: devices::status_word(&node).to_owned(),
                });
            }
            if self.network.staleness().is_some() {
                // A link to the devices is down: polling each reading would fail each the
                // same way. Said once, with the cause the headline gives.
                refresh_errors.push(
                    "the readings: the link to the devices is down (see above); these are the last known ones".to_owned(),
                );
            } else {
                refresh_errors = self.poll_readings(&node).await;
            }
        }
        let node = self.network.node(node.id).unwrap_or(node);
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
            text.push_str(&format!("\nCould not refresh {error}."));
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

    /// Polls every reading of `node`; returns what failed, one line per distinct cause
    /// (`Air temperature, Humidity: zwave-js-ui did not answer …`).
    async fn poll_readings(&self, node: &NodeInfo) -> Vec<String> {
        let mut polls = tokio::task::JoinSet::new();
        for reading in devices::readings(node, None) {
            let Some(id) = reading.value_id else { continue };
            let network = self.network.clone();
            polls.spawn(async move {
                let polled = network.poll_value(&id).await;
                (reading.label, polled.err().map(|err| err.to_string()))
            });
        }
        let mut failed: std::collections::BTreeMap<String, Vec<String>> =
            std::collections::BTreeMap::new();
        while let Some(joined) = polls.join_next().await {
            match joined {
                Ok((_, None)) => {}
                Ok((label, Some(error))) => failed.entry(error).or_default().push(label),
                Err(err) => {
                    failed
                        .entry(format!("a poll task failed: {err}"))
                        .or_default();
                }
            }
        }
        failed
            .into_iter()
            .map(|(error, mut labels)| {
                labels.sort();
                if labels.is_empty() {
                    error
                } else {
                    format!("{}: {error}", labels.join(", "))
                }
            })
            .collect()
    }

    /// What `get_device_status` does.
    async fn status(&self, args: DeviceArgs) -> Result<CallToolResult, ToolError> {
        let found = self
            .find_device_with(&args.device_name, Purpose::Read, |node| {
                let (status, text) = device_status(node, self.network.staleness().is_some());
                (status, text, self.commands.note(node, now_ms()))
            })
            .await;
        let (status, mut text, last_command) = found?;
        if let Some(note) = &last_command {
            text.push(' ');
            text.push_str(note);
        }
        let status = DeviceStatus {
            stale: self.stale(&mut text),
            last_command,
            ..status
        };
        structured(text, &status)
    }

    /// Makes sure there are nodes to read: loaded now, or, while a link to the devices is
    /// down, the last known ones (results then say they are stale).
    pub(super) async fn readable(&self) -> Result<(), ToolError> {
        match self.network.ensure_nodes().await {
            Ok(()) => Ok(()),
            Err(_) if self.network.staleness().is_some() && self.network.has_nodes() => Ok(()),
            Err(err) => Err(err.into()),
        }
    }

    /// When states may be out of date: puts the headline saying so before `text` and returns
    /// the structured form.
    pub(super) fn stale(&self, text: &mut String) -> Option<Staleness> {
        let stale = self.network.staleness()?;
        let staleness = Staleness::of(stale, now_ms());
        *text = format!("{}\n{text}", staleness.headline(stale));
        Some(staleness)
    }

    /// Resolves a device name against the current node list; on no match, reloads the node
    /// list (the device may be new or renamed; at most once per `MISS_RELOAD_FLOOR`) and
    /// tries again. Returns a copy of it.
    pub(super) async fn find_device(
        &self,
        query: &str,
        purpose: Purpose,
    ) -> Result<NodeInfo, ToolError> {
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
    ) -> Result<R, ToolError> {
        match purpose {
            Purpose::Read => self.readable().await?,
            Purpose::Control => self.network.ensure_nodes().await?,
        }
        let resolve = || {
            self.network.with_nodes(|nodes| {
                let directory = self
                    .names
                    .of(nodes, |node: &NodeInfo| self.exposure.can_read(node));
                let at = directory.resolve(query, purpose)?;
                let node = directory
                    .id(at)
                    .and_then(|id| nodes.get(&crate::network::NodeId(id)))
                    // The directory never resolves to a hidden device; this holds it twice.
                    .filter(|node| self.exposure.can_read(node))
                    .ok_or_else(|| ResolveError::NotFound {
                        query: crate::network::text::echoed(query.trim()).into_owned(),
                        suggestions: Vec::new(),
                    })?;
                Ok((look(node), self.exposure.can_control(node)))
            })
        };
        let mut resolved = resolve();
        if matches!(resolved, Err(ResolveError::NotFound { .. })) {
            match self.network.reload_nodes_after_miss().await {
                Ok(true) => resolved = resolve(),
                Ok(false) => {}
                Err(err) => warn!(error = %err, "reloading the node list failed"),
            }
        }
        let (found, controllable) = resolved?;
        if purpose == Purpose::Control && !controllable {
            return Err(not_exposed(query));
        }
        Ok(found)
    }
}

fn not_exposed(query: &str) -> ToolError {
    ToolError::NotExposed {
        query: crate::network::text::echoed(query.trim()).into_owned(),
    }
}

pub(super) fn structured(
    text: String,
    value: &impl Serialize,
) -> Result<CallToolResult, ToolError> {
    let json = serde_json::to_value(value).map_err(|err| ToolError::Encode(err.to_string()))?;
    let mut result = CallToolResult::success(vec![ContentBlock::text(text)]);
    result.structured_content = Some(json);
    Ok(result)
}
