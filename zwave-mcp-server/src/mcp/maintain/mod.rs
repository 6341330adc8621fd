//! What `maintain_zwave_device` does: one upkeep operation on one device (a re-interview, a
//! lifeline health check, a route rebuild), offered only when the owner allows maintenance
//! (`--allow-maintenance`) and never in read-only mode. The device must be one this agent may
//! control; a hidden one is never maintained and reads as absent. While the operation runs,
//! its progress goes to the client as `notifications/progress` (when the call carried a
//! progress token); a cancelled call aborts a health check (nothing else can be aborted);
//! the wait is bounded (`--upkeep-timeout`), and an outcome that came after the caller
//! stopped waiting is told by the next call on that device.
//!
//! | module | owns |
//! |---|---|
//! | `types` | the arguments and the structured result, with their schemas |
//! | `ask` | who may start upkeep: nobody over HTTP without a token; a person says yes for a marked device |
//! | `progress` | the call's progress token and its notifications |

mod ask;
mod progress;
mod types;

use rmcp::{
    RoleServer,
    handler::server::{
        tool::{InputResponses, RequestState, schema_for_output},
        wrapper::Parameters,
    },
    model::{CallToolResponse, CallToolResult},
    service::RequestContext,
    tool, tool_router,
};
use tracing::info;

use self::{
    progress::Progress,
    types::{Maintained, Round},
};
use super::{
    ZwaveServer,
    error::ToolError,
    maintenance::refusal,
    retry::{Asking, Retry},
    tools::structured,
};
use crate::{
    devices::{
        self, Purpose,
        health::upkeep::{
            error_in_words, goes_on, late_in_words, outcome_in_words, progress_in_words,
            still_running,
        },
    },
    network::{
        NodeInfo,
        health::upkeep::{Upkeep, UpkeepOutcome, UpkeepResult, WATCHED_FOR},
        now_ms,
    },
};
pub use types::MaintainArgs;

#[tool_router(router = maintain_router, vis = "pub(super)")]
impl ZwaveServer {
    /// Runs one upkeep operation on a Z-Wave device and says what it found.
    #[tool(
        name = "maintain_zwave_device",
        description = "Upkeep of one Z-Wave device, when something does not work right: reinterview (Z-Wave JS learns the device afresh: after a firmware update, or when it shows the wrong kind or no values), check_health (rates its link to the controller 0-10 over 5 rounds: how reliable, how fast), rebuild_routes (new routes after the device or a repeater moved). Takes seconds to minutes, one operation per device at a time; reports progress. Changes no state of the device.",
        output_schema = schema_for_output::<Maintained>(),
        annotations(read_only_hint = false, destructive_hint = false, idempotent_hint = false, open_world_hint = true)
    )]
    async fn maintain_zwave_device(
        &self,
        Parameters(args): Parameters<MaintainArgs>,
        context: RequestContext<RoleServer>,
        RequestState(state): RequestState,
        InputResponses(responses): InputResponses,
    ) -> Result<CallToolResponse, rmcp::model::ErrorData> {
        let asking = match Retry::of(&context, state, responses) {
            Some(retry) => Asking::Retry(retry),
            None => Asking::Elicit(&context.peer),
        };
        match self.maintain(args, &context, asking).await {
            Ok(response) => Ok(response),
            // The request itself is refused (2026-07-28's rules): a JSON-RPC error.
            Err(ToolError::Protocol(error)) => Err(error),
            Err(err) => Ok(CallToolResult::from(err).into()),
        }
    }
}

impl ZwaveServer {
    /// What `maintain_zwave_device` does.
    async fn maintain(
        &self,
        args: MaintainArgs,
        context: &RequestContext<RoleServer>,
        asking: Asking<'_>,
    ) -> Result<CallToolResponse, ToolError> {
        if let Some(refused) = refusal(self.exposure.read_only, &self.maintenance) {
            return Err(ToolError::Upkeep(refused));
        }
        if let Some(refused) = self.upkeep_unauthenticated() {
            return Err(refused);
        }
        let node = self
            .find_device(&args.device_name, Purpose::Control)
            .await
            .map_err(|err| match err {
                ToolError::NotExposed { query } => ToolError::Upkeep(format!(
                    "\"{query}\" is not exposed to this agent for control, which upkeep needs: the owner of this server chose which devices it may control; nothing was sent"
                )),
                other => other,
            })?;
        let operation = Upkeep::from(args.operation);
        if let Some(question) = self
            .upkeep_asked(&args.device_name, &node, operation, &context.ct, asking)
            .await?
        {
            return Ok(question.into());
        }
        let device = devices::describe(&node);
        if context.ct.is_cancelled() {
            return Err(ToolError::Upkeep(format!(
                "The call was cancelled before {} of {device} began: nothing was sent",
                operation.with_article()
            )));
        }
        // Told by this call, whatever it becomes (a refusal too).
        let late = self.network.with_upkeep(|book| book.take_late(node.id));
        let earlier = (!late.is_empty()).then(|| {
            late.iter()
                .map(|late| late_in_words(&device, late, now_ms()))
                .collect::<Vec<_>>()
                .join("\n")
        });
        // rmcp answers no cancelled call: late outcomes taken for it go back to the book.
        let untold = |late| self.network.with_upkeep(|book| book.untold(node.id, late));
        let limit = self.maintenance.limit;
        let mut run = self
            .network
            .start_upkeep(node.id, operation, limit)
            .map_err(|err| {
                ToolError::Upkeep(with_earlier(
                    &earlier,
                    error_in_words(&device, operation, &err, now_ms()),
                ))
            })?;
        let mut progress = Progress::of(context);
        progress
            .send(
                0.0,
                None,
                format!(
                    "asked Z-Wave JS for {} of {device}",
                    operation.with_article()
                ),
            )
            .await;
        let deadline = tokio::time::sleep(limit);
        tokio::pin!(deadline);
        let mut step = 0.0;
        let ended = loop {
            tokio::select! {
                // Progress before the end: the last report is sent before the result.
                biased;
                Some(heard) = run.progress.recv() => {
                    step += 1.0;
                    let (value, total) = progress::position(&heard, step);
                    progress.send(value, total, progress_in_words(&device, operation, &heard)).await;
                }
                ended = &mut run.done => break ended.ok(),
                () = &mut deadline => break None,
                () = context.ct.cancelled() => {
                    run.abort.cancel();
                    if let Some(outcome) = run.stop_waiting() {
                        run.keep_for_later(outcome);
                    }
                    untold(late);
                    let words = format!(
                        "The call was cancelled while {} of {device} ran: {}",
                        operation.with_article(),
                        goes_on(operation)
                    );
                    info!(node = %node.id, operation = operation.name(), "{words}");
                    return Err(ToolError::Upkeep(words));
                }
            }
        };
        // At the bound: an outcome sent in that moment is the answer after all.
        let ended = ended.or_else(|| run.stop_waiting());
        let Some(ended) = ended else {
            // Z-Wave JS goes on; a health check is asked to stop (its rounds so far are kept).
            run.abort.cancel();
            let watched = limit.saturating_mul(WATCHED_FOR);
            return Err(ToolError::Upkeep(with_earlier(
                &earlier,
                still_running(&device, operation, limit, watched),
            )));
        };
        match ended {
            Ok(outcome) => self
                .maintained(&node, &device, args, &outcome, earlier)
                .map(CallToolResponse::from),
            Err(err) => Err(ToolError::Upkeep(with_earlier(
                &earlier,
                error_in_words(&device, operation, &err, now_ms()),
            ))),
        }
    }

    /// The result of `outcome` on `node`.
    fn maintained(
        &self,
        node: &NodeInfo,
        device: &str,
        args: MaintainArgs,
        outcome: &UpkeepOutcome,
        earlier: Option<String>,
    ) -> Result<CallToolResult, ToolError> {
        let mut text = outcome_in_words(device, outcome);
        if let Some(earlier) = &earlier {
            text = format!("{text}\n{earlier}");
        }
        let (verdict, rating, rounds, stages) = match &outcome.result {
            UpkeepResult::Reinterviewed { stages } => {
                ("completed", None, Vec::new(), stages.clone())
            }
            UpkeepResult::Lifeline {
                rating,
                rounds,
                aborted,
            } => (
                if *aborted { "aborted" } else { "completed" },
                Some(*rating),
                rounds.iter().map(Round::from).collect(),
                Vec::new(),
            ),
            UpkeepResult::Routes { rebuilt } => (
                if *rebuilt { "completed" } else { "failed" },
                None,
                Vec::new(),
                Vec::new(),
            ),
        };
        structured(
            text,
            &Maintained {
                device: devices::display_name(node),
                node_id: node.id.0,
                operation: args.operation,
                outcome: verdict.to_owned(),
                took_ms: u64::try_from(outcome.took.as_millis()).unwrap_or(u64::MAX),
                rating,
                rounds,
                stages,
                earlier,
            },
        )
    }
}

/// `text`, with what an earlier operation found after its caller stopped waiting.
fn with_earlier(earlier: &Option<String>, text: String) -> String {
    match earlier {
        Some(earlier) => format!("{text}\n{earlier}"),
        None => text,
    }
}
