//! Who may start upkeep beyond the owner's `--allow-maintenance`: nobody over HTTP without a
//! token (any local process is a client there, as for sensitive actions), and on a device the
//! owner marked sensitive (`--sensitive-device`) only after a person's yes, asked as for any
//! action on it (elicitation up to 2025-11-25, a retried call from 2026-07-28).

use rmcp::model::InputRequiredResult;
use tokio_util::sync::CancellationToken;
use tracing::info;

use super::super::{
    ZwaveServer, error::ToolError, maintenance::MAINTAIN, retry::Asking, seal::AskedCall,
    sensitive::Question,
};
use crate::{
    devices::{self, Purpose},
    network::{NodeInfo, health::upkeep::Upkeep},
};

impl ZwaveServer {
    /// Why no upkeep can be started from this server's clients at all, if none can.
    pub(super) fn upkeep_unauthenticated(&self) -> Option<ToolError> {
        self.sensitive.unauthenticated_clients.then(|| {
            ToolError::Upkeep(format!(
                "{MAINTAIN} is refused: this server is served over HTTP without a token, so any program on its machine can be a client, and upkeep keeps a device busy for minutes and changes its routes. Nothing was sent. The owner can set --http-token-file (or ZWAVE_MCP_HTTP_TOKEN) to allow it."
            ))
        })
    }

    /// A person's yes to `operation` on `node` (named `device_name` by the call), when the
    /// owner marked the device sensitive: `Ok(None)` lets it start (unmarked, or said yes to);
    /// `Ok(Some(_))` is the question to answer the call with (2026-07-28's first round).
    ///
    /// # Errors
    /// [`ToolError::Sensitive`] for everything but a yes about this same device, as it was
    /// named and placed when the person was asked.
    pub(super) async fn upkeep_asked(
        &self,
        device_name: &str,
        node: &NodeInfo,
        operation: Upkeep,
        cancelled: &CancellationToken,
        asking: Asking<'_>,
    ) -> Result<Option<InputRequiredResult>, ToolError> {
        let device = devices::describe(node);
        let Some(question) = self.sensitive.upkeep_question(node, &device, operation) else {
            return Ok(None);
        };
        match asking {
            Asking::Elicit(peer) => tokio::select! {
                asked = self.sensitive.elicit(&question, &device, peer) => asked?,
                () = cancelled.cancelled() => {
                    info!(%device, operation = operation.name(), "not starting upkeep: the client cancelled the request while a person was asked");
                    return Err(ToolError::Cancelled);
                }
            },
            Asking::Retry(retry) => {
                let call = AskedCall {
                    tool: MAINTAIN.to_owned(),
                    device_name: device_name.to_owned(),
                    node: node.id.0,
                    name: node.name.clone(),
                    location: node.loc.clone(),
                    request: serde_json::json!({"operation": operation.name()}),
                    target: operation.name().to_owned(),
                    value: serde_json::Value::Null,
                };
                let ttl = self.sensitive.ask_timeout;
                // A retried call looked the device up again: the state binds what was asked.
                return retry.confirm(&question, call, &self.questions, ttl);
            }
        }
        self.still_as_asked(device_name, node, &question).await?;
        Ok(None)
    }

    /// After a person said yes: the name still finds the same device, named and placed as
    /// the person read it.
    async fn still_as_asked(
        &self,
        device_name: &str,
        node: &NodeInfo,
        question: &Question,
    ) -> Result<(), ToolError> {
        let now = self.find_device(device_name, Purpose::Control).await?;
        if (now.id, &now.name, &now.loc) == (node.id, &node.name, &node.loc) {
            return Ok(());
        }
        Err(question.refused(&format!(
            "\"{}\" now finds {}, not the device the person was asked about (renamed or moved while they were asked); ask again",
            crate::network::text::echoed(device_name),
            devices::describe(&now)
        )))
    }
}
