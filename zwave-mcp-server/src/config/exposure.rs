//! The exposure flags: which devices the agent may see and switch. The rules themselves, and
//! how a device is matched, are [`crate::devices::Exposure`]'s; `settings` adds the file's.

use std::path::PathBuf;

use crate::devices::Rule;

/// What the agent may see and switch.
#[derive(Debug, Clone, clap::Args)]
#[command(next_help_heading = "Exposure")]
pub struct ExposureFlags {
    /// Let the agent only read: control_zwave_device is not offered at all.
    #[arg(long, env = "ZWAVE_MCP_READ_ONLY")]
    pub read_only: bool,

    /// Devices reads may see (default: all): node:ID, location:LOCATION or
    /// name:NAME; repeat the flag or separate rules with commas.
    #[arg(
        long,
        env = "ZWAVE_MCP_READ_ALLOW",
        value_delimiter = ',',
        value_name = "RULE"
    )]
    pub read_allow: Vec<Rule>,

    /// Devices reads never see (wins over --read-allow); rules as for --read-allow.
    #[arg(
        long,
        env = "ZWAVE_MCP_READ_DENY",
        value_delimiter = ',',
        value_name = "RULE"
    )]
    pub read_deny: Vec<Rule>,

    /// Devices that may be switched (default: every readable one); rules as for --read-allow.
    #[arg(
        long,
        env = "ZWAVE_MCP_CONTROL_ALLOW",
        value_delimiter = ',',
        value_name = "RULE"
    )]
    pub control_allow: Vec<Rule>,

    /// Devices that are never switched (wins over --control-allow); rules as for --read-allow.
    #[arg(
        long,
        env = "ZWAVE_MCP_CONTROL_DENY",
        value_delimiter = ',',
        value_name = "RULE"
    )]
    pub control_deny: Vec<Rule>,

    /// A JSON file with more exposure rules: {"readOnly": bool, "read": {"allow": [..],
    /// "deny": [..]}, "control": {"allow": [..], "deny": [..]}}; added to the flags'.
    #[arg(long, env = "ZWAVE_MCP_EXPOSURE_FILE")]
    pub exposure_file: Option<PathBuf>,
}
