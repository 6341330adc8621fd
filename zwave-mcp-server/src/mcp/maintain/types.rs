//! What `maintain_zwave_device` takes and gives, with their JSON Schemas.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::network::health::upkeep::{LifelineRound, Upkeep};

/// Arguments of `maintain_zwave_device`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct MaintainArgs {
    /// The device, by its full name as listed by list_zwave_devices (e.g. "Garage Light").
    pub device_name: String,
    /// reinterview: Z-Wave JS interviews the device again (after a firmware update, or when
    /// it shows the wrong kind or no values). check_health: checks its link to the
    /// controller over 5 rounds and rates it 0-10. rebuild_routes: the controller finds the
    /// device's neighbours again and gives it new routes (after moving it or a repeater).
    pub operation: Operation,
}

/// An upkeep operation, as the tool names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Operation {
    /// Re-interview the device.
    Reinterview,
    /// Check its lifeline health.
    CheckHealth,
    /// Rebuild its routes.
    RebuildRoutes,
}

impl From<Operation> for Upkeep {
    fn from(operation: Operation) -> Self {
        match operation {
            Operation::Reinterview => Self::Reinterview,
            Operation::CheckHealth => Self::CheckLifeline,
            Operation::RebuildRoutes => Self::RebuildRoutes,
        }
    }
}

/// Result of `maintain_zwave_device`.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Maintained {
    /// The device's name.
    pub device: String,
    /// Its node id.
    pub node_id: u16,
    /// The operation.
    pub operation: Operation,
    /// completed; failed (a route rebuild the controller could not do); aborted (a health
    /// check stopped before its last round).
    pub outcome: String,
    /// From its start to its end, in milliseconds.
    pub took_ms: u64,
    /// A health check's rating, 0 (unusable) to 10 (perfect): its worst round's.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rating: Option<u8>,
    /// A health check's rounds.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub rounds: Vec<Round>,
    /// A re-interview's stages, as far as seen.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub stages: Vec<String>,
    /// What an earlier operation on this device found after its caller stopped waiting.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub earlier: Option<String>,
}

/// One round of a health check; a figure Z-Wave JS left out (or sent absurd) is absent.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Round {
    /// Its rating, 0–10.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rating: Option<u8>,
    /// The slowest of its pings, in ms.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub latency_ms: Option<u32>,
    /// Pings the device did not acknowledge, of 10.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub failed_pings: Option<u8>,
    /// The device's neighbours.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub neighbors: Option<u8>,
    /// Signal above the noise, in dB.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub snr_margin_db: Option<i16>,
}

impl From<&LifelineRound> for Round {
    fn from(round: &LifelineRound) -> Self {
        Self {
            rating: round.rating,
            latency_ms: round.latency_ms,
            failed_pings: round.failed_pings_node,
            neighbors: round.neighbors,
            snr_margin_db: round.snr_margin_db,
        }
    }
}
