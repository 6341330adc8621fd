//! The owner's leave for upkeep operations ([`MaintenancePolicy`]): whether
//! `maintain_zwave_device` is offered, and what a call to it is told when it is not.

use std::time::Duration;

/// The upkeep tool's name.
pub(super) const MAINTAIN: &str = "maintain_zwave_device";

/// Whether the owner allows upkeep, and how long a call waits for one.
#[derive(Debug, Clone)]
pub struct MaintenancePolicy {
    /// `--allow-maintenance`.
    pub allowed: bool,
    /// `--upkeep-timeout`.
    pub limit: Duration,
}

impl Default for MaintenancePolicy {
    fn default() -> Self {
        Self {
            allowed: false,
            limit: Duration::from_secs(120),
        }
    }
}

/// Why the upkeep tool is not offered (`read_only`: the server's read-only mode), if it is
/// not: what a call to it is told.
pub(super) fn refusal(read_only: bool, policy: &MaintenancePolicy) -> Option<String> {
    if read_only {
        Some(format!(
            "{MAINTAIN} is not offered: this server runs in read-only mode (--read-only), which never offers upkeep operations; nothing was sent"
        ))
    } else if !policy.allowed {
        Some(format!(
            "{MAINTAIN} is not offered: the owner of this server has not allowed upkeep operations (re-interview, health check, route rebuild); nothing was sent. The owner can allow them with --allow-maintenance (or ZWAVE_MCP_ALLOW_MAINTENANCE=true)"
        ))
    } else {
        None
    }
}
