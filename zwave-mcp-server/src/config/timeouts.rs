//! The timeout flags: how long the server waits for the backend and for a device. (How long
//! a person has to answer about a sensitive action is a safety flag, `--ask-timeout`.)

use std::time::Duration;

use super::parse::parse_duration;

/// How long the server waits for the backend and for devices.
#[derive(Debug, Clone, clap::Args)]
#[command(next_help_heading = "Timeouts")]
pub struct TimeoutFlags {
    /// How long to wait for Z-Wave JS UI to answer one API request (e.g. 5s, 1500ms).
    #[arg(long, env = "ZWAVE_MCP_API_TIMEOUT", default_value = "5s", value_parser = parse_duration)]
    pub api_timeout: Duration,

    /// How long a switching command waits for the device's own report of its new state
    /// (0s: answer once Z-Wave JS acknowledged it; reads say later what became of it). Real
    /// devices report about 1 s (switches) or 5 s (dimmers) after the command.
    #[arg(long, env = "ZWAVE_MCP_CONFIRM_TIMEOUT", default_value = "0s", value_parser = parse_duration)]
    pub confirm_timeout: Duration,

    /// How long a call of maintain_zwave_device waits for its operation to end (a
    /// re-interview, a lifeline health check, a route rebuild); the server watches it four
    /// times as long, and a later call on the device tells how it ended.
    #[arg(long, env = "ZWAVE_MCP_UPKEEP_TIMEOUT", default_value = "120s", value_parser = parse_duration)]
    pub upkeep_timeout: Duration,
}
