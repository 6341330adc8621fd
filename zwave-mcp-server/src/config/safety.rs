//! The safety flags: which sensitive actions the owner allows and who must say yes to them,
//! devices marked sensitive, whether upkeep operations are offered, and the band a thermostat setpoint must lie in. Enforcing them
//! is the tools' work (`mcp::sensitive`) and the write plans' ([`crate::devices::Limits`]).

use std::time::Duration;

use crate::devices::{Rule, SensitiveClass};

use super::parse::{Band, parse_band, parse_duration};

/// What the agent may do only with the owner's leave, and within which bounds.
#[derive(Debug, Clone, clap::Args)]
#[command(next_help_heading = "Safety")]
pub struct SafetyFlags {
    /// Sensitive actions the owner allows, by class: lock (unlock a lock), garage (open a
    /// garage door or gate), siren (silence a siren); none by default. A person is still
    /// asked to confirm each one through the MCP client (elicitation).
    #[arg(
        long,
        env = "ZWAVE_MCP_ALLOW_SENSITIVE",
        value_delimiter = ',',
        value_name = "CLASS",
        value_enum
    )]
    pub allow_sensitive: Vec<SensitiveClass>,

    /// Carry out the allowed sensitive actions without asking anyone: any agent connected to
    /// this server can then unlock, open or silence on its own. Use only where no client can
    /// ask its user and the agent is trusted as the owner is.
    #[arg(long, env = "ZWAVE_MCP_SENSITIVE_WITHOUT_CONFIRMATION")]
    pub sensitive_without_confirmation: bool,

    /// Devices every action (and every upkeep operation) on which needs a person's yes (asked
    /// through the client), as a space heater or an oven might: rules as for --read-allow
    /// (repeat, or comma-separated).
    #[arg(
        long,
        env = "ZWAVE_MCP_SENSITIVE_DEVICE",
        value_delimiter = ',',
        value_name = "RULE"
    )]
    pub sensitive_device: Vec<Rule>,

    /// How long a person has to answer the question about a sensitive action; no answer is
    /// a no.
    #[arg(long, env = "ZWAVE_MCP_ASK_TIMEOUT", default_value = "60s", value_parser = parse_duration)]
    pub ask_timeout: Duration,

    /// Offer the upkeep tool, maintain_zwave_device: re-interview a device, check its
    /// lifeline health, rebuild its routes (each seconds to minutes of radio traffic, one at
    /// a time per device). Off by default; never offered in --read-only mode; refused over
    /// HTTP without a token, where any local process is a client.
    #[arg(long, env = "ZWAVE_MCP_ALLOW_MAINTENANCE")]
    pub allow_maintenance: bool,

    /// The band a thermostat setpoint must lie in, in °C, as LOW..HIGH (a °F thermostat's
    /// band is this one converted); a setpoint outside it, or outside the device's own
    /// range, is refused, never clamped.
    #[arg(long, env = "ZWAVE_MCP_THERMOSTAT_BAND", default_value = "5..30", value_parser = parse_band)]
    pub thermostat_band: Band,
}
