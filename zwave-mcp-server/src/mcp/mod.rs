//! The MCP surface: five Z-Wave tools on an rmcp `ServerHandler` (a sixth,
//! `maintain_zwave_device`, when the owner allows maintenance), and the home as resources,
//! completions and prompts.
//!
//! An unknown tool is a JSON-RPC error (rmcp). Arguments that do not deserialize come back as
//! an `isError` result from rmcp naming the valid values (MCP 2025-11-25 treats input
//! validation as a tool error the model can correct).
//! Everything the home or Z-Wave JS says (no such device, offline, level out of range,
//! broker down, write refused) is an `isError` result whose text names the device and what
//! would be valid, so the model can correct itself. Successful results carry readable text in
//! `content` and the same facts as `structuredContent`, described by each tool's output schema.
//!
//! | module | owns |
//! |---|---|
//! | `server` | [`ZwaveServer`]: the rmcp handler, its state and its instructions |
//! | `tools` | the five tools, device lookup with the owner's exposure rules applied |
//! | `health` | the network's or a device's health, and a ping: what `get_zwave_health` does |
//! | `maintenance` | [`MaintenancePolicy`]: the owner's leave for upkeep, the refusal without it |
//! | `maintain` | upkeep of one device (re-interview, health check, route rebuild), with progress: `maintain_zwave_device` |
//! | `control` | a write, and what became of it (confirmed, acknowledged, contradicted) |
//! | `sensitive` | unlock, open a garage door, silence a siren: the owner's leave and a person's yes |
//! | `retry` | the person's yes on 2026-07-28: the question as the call's answer, the yes on its retry |
//! | `seal` | the question's request state: sealed, bound to the call, expiring, redeemed once |
//! | `commands` | the last command to each device, for reads to say what became of it |
//! | `types` | what the tools take and give: arguments and structured results, with schemas |
//! | `error` | `ToolError`: why a call failed, typed until it becomes an `isError` result |
//! | `cache` | list rows and the name directory, cached by node and list revision |
//! | `stale` | saying when read results come from the cache while a link is down |
//! | `status` | a device's status in facts and words (`get_device_status`, the device resource) |
//! | `resources` | the live home as resources (`zwave://home`, `zwave://devices/{nodeId}`) and subscriptions to them |
//! | `completion` | `completion/complete`: device names, and the actions, modes and tones a device takes |
//! | `prompts` | four read-only prompts a person picks: overview, secured for the night, a device's help, the network's health |

mod audit;
mod cache;
mod commands;
mod completion;
mod control;
mod error;
mod health;
mod maintain;
mod maintenance;
mod prompts;
mod resources;
mod retry;
mod seal;
mod sensitive;
mod server;
mod stale;
mod status;
mod tools;
mod types;

pub use maintenance::MaintenancePolicy;
pub use sensitive::SensitivePolicy;
pub use server::ZwaveServer;
