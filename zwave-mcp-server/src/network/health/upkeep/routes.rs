//! A route rebuild: Z-Wave JS UI's `rebuildNodeRoutes [nodeId]` (result `true`/`false`) or
//! zwave-js-server's `controller.rebuild_node_routes {nodeId}` (`{"success": …}`). The
//! controller finds the device's neighbours again and assigns it routes; its answer comes
//! when it is done. Neither API can stop it, and neither tells its progress to an API client
//! (Z-Wave JS UI tells its web UI only).

use std::time::Duration;

use serde_json::{Value, json};

use super::{
    Upkeep, UpkeepError, UpkeepResult,
    run::{call_bound, ended_or},
};
use crate::network::{Network, NodeId, handle::Connection, mqtt::call};

impl Network {
    /// Rebuilds `node`'s routes; returns the controller's word on it.
    pub(super) async fn rebuild_routes(
        &self,
        node: NodeId,
        bound: Duration,
    ) -> Result<UpkeepResult, UpkeepError> {
        let (api, rebuilt) = match &self.connection {
            Connection::Mqtt(shared) => {
                let api = "rebuildNodeRoutes";
                let result = call::call_within(shared, api, vec![json!(node.0)], call_bound(bound))
                    .await
                    .map_err(ended_or(Upkeep::RebuildRoutes, bound))?;
                (api, result.as_bool().ok_or(result))
            }
            Connection::ZwaveJsServer(client, _) => {
                let api = "controller.rebuild_node_routes";
                let result = client
                    .request(api, json!({"nodeId": node.0}), call_bound(bound))
                    .await
                    .map_err(|err| ended_or(Upkeep::RebuildRoutes, bound)(err.into()))?;
                let success = result.get("success").and_then(Value::as_bool);
                (api, success.ok_or(result))
            }
        };
        let rebuilt = rebuilt.map_err(|got| UpkeepError::BadAnswer {
            api,
            reason: format!(
                "expected whether it succeeded (true or false), got {}",
                crate::network::text::clean(&got.to_string(), 200)
            ),
        })?;
        Ok(UpkeepResult::Routes { rebuilt })
    }
}
