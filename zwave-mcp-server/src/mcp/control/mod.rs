//! What `control_zwave_device` does, and how it tells the truth about it.
//!
//! zwave-js updates its own cache the moment a Set is acknowledged and Z-Wave JS UI publishes
//! that optimistic value before the API reply; the device's own report comes after the
//! driver's verification (~1 s for a switch, ~5 s for a dimmer), or never, for a device that
//! acknowledges a Set and ignores it. So the answer is one of:
//! - **confirmed**: a supervised Set succeeded (status 255), or the device reported the new
//!   state after the reply;
//! - **acknowledged**: sent and acknowledged, no report yet within the wait (the answer gives
//!   the last state the device itself reported, and reads say what became of it later);
//! - **contradicted**: the device reported, after the reply, that it is still in another state;
//! - **superseded**: a later command to the same device came before this one was confirmed
//!   (two agents, or a quick correction); the answer says what the device reports now.
//!
//! A failed write is an error ([`ToolError::Write`]) before any of this.
//!
//! Here: the steps of a command (resolve, plan, the sensitive check, write, wait, answer) and
//! the answer's words; in `confirm`, how the device's word on it is awaited and checked.

mod confirm;

use std::time::Instant;

use rmcp::model::{CallToolResponse, CallToolResult, InputRequiredResult};
use tokio_util::sync::CancellationToken;
use tracing::{debug, info, warn};

use crate::auth::Scopes;

use super::{
    ZwaveServer,
    commands::{AckedCommand, Reported, clock},
    error::ToolError,
    retry::Asking,
    seal::AskedCall,
    tools::structured,
    types::{ControlArgs, ControlOutcome, Outcome},
};
use crate::{
    devices::{self, Purpose},
    network::{NodeInfo, now_ms},
};

/// What the checks of a command decided.
enum Checked {
    /// Write `plan` to the node (named so in answers); boxed, as it is most of the size.
    Write(Box<(NodeInfo, devices::WritePlan, String)>),
    /// Ask a person first: the call's answer.
    Ask(InputRequiredResult),
}

/// A command sent and acknowledged, as its answer tells it.
struct Sent {
    /// The device's name, as the answer says it.
    name: String,
    /// The device as it was found (its last report before the write).
    node: NodeInfo,
    plan: devices::WritePlan,
    /// The value the write is about as the device last reported it, and when.
    before: Option<(Option<serde_json::Value>, Option<i64>)>,
    /// Whether the device already showed what was asked.
    already: bool,
    /// Z-Wave JS's status for the write (255: supervised success).
    status: i64,
    command: AckedCommand,
}

impl ZwaveServer {
    /// What `control_zwave_device` does. A client's cancellation that arrives before the write
    /// is sent stops it; one that arrives later cannot recall it, and is logged. A sensitive
    /// action needs the owner's leave and a person's yes, asked as `asking` says: the answer
    /// is then the question itself on 2026-07-28 (input required), until the call comes
    /// back with the yes.
    pub(super) async fn control(
        &self,
        args: ControlArgs,
        cancelled: &CancellationToken,
        asking: Asking<'_>,
        granted: Scopes,
    ) -> Result<CallToolResponse, ToolError> {
        let (node, plan, name) = match self.checked(&args, cancelled, asking, granted).await? {
            Checked::Write(checked) => *checked,
            Checked::Ask(question) => return Ok(question.into()),
        };
        let before = last_report(&node, plan.current_key.as_str());
        let already = already(&node, &plan, before.as_ref());
        let seq = self.commands.next_seq();
        let status = self.send(&node, &plan, &args, &name, cancelled).await?;
        // Only a report received after this instant is the device's: zwave-js's optimistic
        // echo comes before the reply (and is not stored), and payload times are not trusted.
        let command = AckedCommand {
            seq,
            current_key: plan.current_key.as_str().to_owned(),
            expect: plan.expect,
            also: plan
                .also
                .iter()
                .map(|(key, expect)| (key.as_str().to_owned(), *expect))
                .collect(),
            verb: plan.words.infinitive.clone(),
            acked: Instant::now(),
            acked_ms: now_ms(),
            supervised: status == 255,
            settled: false,
        };
        self.commands.record(node.id, command.clone());
        let (now, reported) = self.wait(&node, &plan, &command, cancelled).await;
        let sent = Sent {
            name,
            node,
            plan,
            before,
            already,
            status,
            command,
        };
        self.answer(&sent, args.action, &now, reported)
            .map(CallToolResponse::from)
    }

    /// The device `args` names, resolved beyond doubt, and what to write to it, checked: a
    /// sensitive action allowed by the owner and said yes to by a person (asked as `asking`
    /// says), and still what they were asked about. With the device's name; or the question
    /// to answer the call with, when the person is asked by a retried call.
    async fn checked(
        &self,
        args: &ControlArgs,
        cancelled: &CancellationToken,
        asking: Asking<'_>,
        granted: Scopes,
    ) -> Result<Checked, ToolError> {
        let node = self
            .find_device(&args.device_name, Purpose::Control)
            .await?;
        let node = self.with_known_tones(node, args.action).await;
        let plan = devices::plan(&node, &args.request(), &self.limits)?;
        let name = devices::display_name(&node);
        let described = devices::describe(&node);
        if let Some(question) = self.sensitive.question(&plan, &node, &described, granted)? {
            match asking {
                // A cancelled request withdraws its question: its place is freed at once, and
                // a yes that comes later answers nothing.
                Asking::Elicit(peer) => tokio::select! {
                    asked = self.sensitive.elicit(&question, &described, peer) => asked?,
                    () = cancelled.cancelled() => {
                        info!(device = ?name, node = %node.id, action = %args.action, "not writing: the client cancelled the request while a person was asked");
                        return Err(ToolError::Cancelled);
                    }
                },
                Asking::Retry(retry) => {
                    let call = asked_call(args, &node, &plan);
                    let ttl = self.sensitive.ask_timeout;
                    if let Some(ask) = retry.confirm(&question, call, &self.questions, ttl)? {
                        return Ok(Checked::Ask(ask));
                    }
                }
            }
        }
        let node = self.as_it_was_asked(node, &plan, args)?;
        if cancelled.is_cancelled() {
            info!(device = ?name, node = %node.id, action = %args.action, "not writing: the client cancelled the request");
            return Err(ToolError::Cancelled);
        }
        Ok(Checked::Write(Box::new((node, plan, name))))
    }

    /// Writes `plan` to `node` (the device `name`); Z-Wave JS's status. Not sent when the
    /// client cancelled before it could be.
    async fn send(
        &self,
        node: &NodeInfo,
        plan: &devices::WritePlan,
        args: &ControlArgs,
        name: &str,
        cancelled: &CancellationToken,
    ) -> Result<i64, ToolError> {
        let written = self
            .network
            .write_value_to(
                Some(node),
                &plan.target,
                plan.value.clone(),
                plan.echoes.clone(),
                cancelled,
            )
            .await;
        // Over zwave-js-server the device's name is checked first (a round trip): a
        // cancellation that came meanwhile stopped the write before it was sent.
        if written.as_ref().is_err_and(|err| err.was_cancelled()) {
            info!(device = ?name, node = %node.id, action = %args.action, "not writing: the client cancelled the request while the device's name was checked");
            return Err(ToolError::Cancelled);
        }
        let written = written.map_err(|source| ToolError::Write {
            device: name.to_owned(),
            source,
        });
        // Said once Z-Wave JS answered: a write refused before it was sent (the device
        // renamed meanwhile) is no write.
        match &written {
            Ok(status) => {
                info!(device = ?name, node = %node.id, action = %args.action, value = %plan.value, status = *status, "value written");
            }
            Err(err) => {
                warn!(device = ?name, node = %node.id, action = %args.action, value = %plan.value, error = %err, "the write failed or got no answer");
            }
        }
        if cancelled.is_cancelled() {
            warn!(device = ?name, node = %node.id, "the client cancelled the request after the write was sent: it may take effect");
        }
        written
    }

    /// Waits for the device's word on `command` (asking it back when it sends none of its
    /// own) and keeps watching when it has not spoken: the node as it is then, and what its reports say of the command.
    async fn wait(
        &self,
        node: &NodeInfo,
        plan: &devices::WritePlan,
        command: &AckedCommand,
        cancelled: &CancellationToken,
    ) -> (NodeInfo, Reported) {
        // The node list as it was when the write was acknowledged: one loaded later (the link
        // came back) may hide a report sent meanwhile in the driver's cache.
        let layout = self.network.with_nodes(crate::network::Nodes::layout);
        if !command.supervised {
            self.read_back(&plan.poll);
        }
        let (now, reported) = self.decide(node, command, cancelled).await;
        self.settle_when_reported(command, node.id, &reported, layout);
        (now, reported)
    }

    /// The answer to the model: what became of the command `sent`, with the device `now`.
    fn answer(
        &self,
        sent: &Sent,
        action: devices::Action,
        now: &NodeInfo,
        reported: Reported,
    ) -> Result<CallToolResult, ToolError> {
        let state = devices::summary(now);
        let superseded = self.superseded(sent, now, &reported);
        let text = self.text(sent, &reported, superseded.as_deref(), &state);
        let outcome = match (reported, &superseded) {
            (_, Some(_)) => Outcome::Superseded,
            (Reported::Confirmed, None) => Outcome::Confirmed,
            (Reported::Contradicted { .. }, None) => Outcome::Contradicted,
            (Reported::Pending, None) => Outcome::Acknowledged,
        };
        let mut result = structured(
            text,
            &ControlOutcome {
                device: sent.name.clone(),
                node_id: now.id.0,
                action,
                written: sent.plan.value.clone(),
                status: sent.status,
                outcome,
                confirmed: outcome == Outcome::Confirmed,
                already: sent.already,
                acknowledged_at_ms: sent.command.acked_ms,
                state,
                superseded_by: superseded,
            },
        )?;
        // A device that did not do what it was told is a failure the model must notice.
        if outcome == Outcome::Contradicted {
            result.is_error = Some(true);
        }
        Ok(result)
    }

    /// The later command that superseded `sent`, if one did: this server's, or another client
    /// of Z-Wave JS's (its target value, echoed after ours, asks for something else).
    fn superseded(&self, sent: &Sent, now: &NodeInfo, reported: &Reported) -> Option<String> {
        let command = &sent.command;
        self.commands
            .last(now.id)
            .filter(|last| last.seq != command.seq)
            .map(|last| last.verb)
            .or_else(|| {
                if *reported == Reported::Confirmed {
                    return None;
                }
                let before = sent.before.as_ref().and_then(|(value, _)| value.as_ref());
                other_command(
                    now,
                    sent.plan.target.key().as_str(),
                    &sent.plan.value,
                    before,
                    command,
                )
                .map(|verb| format!("{verb} (from another client)"))
            })
    }

    /// The words of the answer: what became of `sent`, the device now reporting `state`.
    fn text(
        &self,
        sent: &Sent,
        reported: &Reported,
        superseded: Option<&str>,
        state: &str,
    ) -> String {
        let Sent {
            name,
            node,
            plan,
            before,
            already,
            status,
            command,
        } = sent;
        match (reported, superseded) {
            // Another command to the device came after this one: what the device reports now
            // answers that one, not this.
            (_, Some(later)) => format!(
                "{name}: the command to {} was acknowledged at {}, but a later command to {later} superseded it; the device now reports {state}.",
                command.verb,
                clock(command.acked_ms)
            ),
            (Reported::Confirmed, None) if *already => format!(
                "{name} was already {}; the device confirmed it (now {state}).",
                plan.words.already
            ),
            (Reported::Confirmed, None) => format!(
                "{name} {}; the device confirmed it (now {state}).",
                plan.words.past
            ),
            (Reported::Contradicted { state }, None) => {
                warn!(device = ?name, node = %node.id, %state, "the device reported that it did not change");
                format!(
                    "{name} did not change: the command to {} was acknowledged at {}, but the device then reported it is still {state}. It may be stuck or without power: check it before trying again.",
                    command.verb,
                    clock(command.acked_ms)
                )
            }
            (Reported::Pending, None) => {
                let reported = match before {
                    Some((_, Some(at))) => format!("{} at {}", devices::summary(node), clock(*at)),
                    _ => devices::summary(node),
                };
                format!(
                    "{name}: the command to {} was sent and acknowledged at {} (status {status}); the device has not reported its new state yet ({}). The last state it reported itself: {reported}. get_device_status tells what became of it.",
                    command.verb,
                    clock(command.acked_ms),
                    waited(self.confirm_timeout, plan.words.usual),
                )
            }
        }
    }

    /// A person may have taken a minute to answer: what is written is planned again on the
    /// device as it is now, and must be what they were asked about (a siren that began an
    /// alarm meanwhile makes a doorbell end it). The node as it is now, with the name and
    /// location the lookup saw (a rename meanwhile is refused when the write is sent).
    fn as_it_was_asked(
        &self,
        node: NodeInfo,
        plan: &devices::WritePlan,
        args: &ControlArgs,
    ) -> Result<NodeInfo, ToolError> {
        let now = self.network.node(node.id).unwrap_or_else(|| node.clone());
        let replanned = devices::plan(&now, &args.request(), &self.limits)?;
        if (&replanned.sensitive, &replanned.target, &replanned.value)
            != (&plan.sensitive, &plan.target, &plan.value)
        {
            return Err(ToolError::Sensitive(format!(
                "nothing was sent: {} changed while the command was being confirmed (it now reports {}), so what would be carried out is not what was asked about; ask again",
                devices::describe(&now),
                devices::summary(&now)
            )));
        }
        Ok(NodeInfo {
            name: node.name,
            loc: node.loc,
            ..now
        })
    }

    /// A siren whose tone is not known may be sounding an alarm, which a new tone would end
    /// (so sounding one is then sensitive): before sounding one, the device is asked which
    /// it plays, and its answer decides. `node` keeps the name and location it was found by.
    async fn with_known_tones(&self, node: NodeInfo, action: devices::Action) -> NodeInfo {
        if action != devices::Action::Sound {
            return node;
        }
        let unknown: Vec<_> = node
            .values
            .values()
            .filter(|value| {
                value.command_class == devices::cc::SOUND_SWITCH
                    && value.property == crate::network::Property::Name("toneId".to_owned())
                    && value.value.is_none()
            })
            .map(|value| value.value_id(node.id))
            .collect();
        if unknown.is_empty() {
            return node;
        }
        for value in &unknown {
            if let Err(err) = self.network.poll_value(value).await {
                debug!(%value, error = %err, "asking a siren which tone it plays failed");
            }
        }
        match self.network.node(node.id) {
            Some(now) => NodeInfo {
                name: node.name,
                loc: node.loc,
                ..now
            },
            None => node,
        }
    }
}

/// The call a question about `plan` on `node` binds its answer to: the device as named and
/// found (its name and location at the lookup), the action with its arguments, what would
/// be written.
fn asked_call(args: &ControlArgs, node: &NodeInfo, plan: &devices::WritePlan) -> AskedCall {
    AskedCall {
        tool: "control_zwave_device".to_owned(),
        device_name: args.device_name.clone(),
        node: node.id.0,
        name: node.name.clone(),
        location: node.loc.clone(),
        request: serde_json::json!({
            "action": args.action.to_string(),
            "level": args.level,
            "temperature": args.temperature,
            "mode": args.mode,
            "tone": args.tone,
            "color": args.color,
        }),
        target: plan.target.to_string(),
        value: plan.value.clone(),
    }
}

/// What another client asked of the device after `ours` was acknowledged, if it did: a new
/// target value, neither ours nor the state the device was in before (a stuck dimmer reports
/// its old level as its target too).
fn other_command(
    node: &NodeInfo,
    target_key: &str,
    written: &serde_json::Value,
    before: Option<&serde_json::Value>,
    ours: &AckedCommand,
) -> Option<String> {
    let target = node
        .values
        .get(target_key)
        .filter(|value| value.seen_at.is_some_and(|at| at > ours.acked))?
        .value
        .as_ref()?;
    let same = |a: &serde_json::Value, b: &serde_json::Value| match (a.as_f64(), b.as_f64()) {
        (Some(a), Some(b)) => (a - b).abs() < 0.5,
        _ => a == b,
    };
    if same(target, written)
        || ours.expect.accepts(target)
        || before.is_some_and(|before| same(target, before))
    {
        return None;
    }
    Some(match target {
        serde_json::Value::Bool(true) => "switch on".to_owned(),
        serde_json::Value::Bool(false) => "switch off".to_owned(),
        level => match level.as_f64() {
            Some(level) if level >= 255.0 => "switch on".to_owned(),
            Some(level) if level <= 0.0 => "switch off".to_owned(),
            Some(level) => format!(
                "dim to {}%",
                devices::percent_of_99(level.clamp(0.0, 99.0).round() as u8)
            ),
            None => format!("set {level}"),
        },
    })
}

/// Whether `node` already shows what `plan` asks: every value the write names (a colour's
/// every channel); never for a stop, which accepts any report and asks for no state.
fn already(
    node: &NodeInfo,
    plan: &devices::WritePlan,
    before: Option<&(Option<serde_json::Value>, Option<i64>)>,
) -> bool {
    plan.expect != devices::Expect::Any
        && before
            .and_then(|(value, _)| value.as_ref())
            .is_some_and(|value| plan.expect.accepts(value))
        && plan.also.iter().all(|(key, expect)| {
            node.values
                .get(key.as_str())
                .and_then(|value| value.value.as_ref())
                .is_some_and(|value| expect.accepts(value))
        })
}

/// The value `key` of `node` as the device last reported it, with the report's time (epoch ms).
fn last_report(node: &NodeInfo, key: &str) -> Option<(Option<serde_json::Value>, Option<i64>)> {
    node.values
        .get(key)
        .map(|value| (value.value.clone(), value.last_update))
}

/// How long the answer waited, and when a report can be expected.
fn waited(timeout: std::time::Duration, usual: &str) -> String {
    if timeout.is_zero() {
        format!("answered without waiting; such a device usually reports within {usual}")
    } else {
        format!("waited {timeout:?}; such a device usually reports within {usual}")
    }
}
