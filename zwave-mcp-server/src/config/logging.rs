//! The logging flags. Where logs go and how they are written is [`crate::logging`]'s work;
//! `main` hands these two values to it before anything else runs.

use std::path::PathBuf;

/// What is logged, and where besides stderr.
#[derive(Debug, Clone, clap::Args)]
#[command(next_help_heading = "Logging")]
pub struct LoggingFlags {
    /// Log filter for stderr and the log file (RUST_LOG syntax; RUST_LOG wins when set).
    #[arg(
        long,
        global = true,
        env = "ZWAVE_MCP_LOG_LEVEL",
        default_value = "info"
    )]
    pub log_level: String,

    /// Also write logs to a daily-rotating file in this directory.
    #[arg(long, env = "ZWAVE_MCP_LOG_DIR")]
    pub log_dir: Option<PathBuf>,
}
