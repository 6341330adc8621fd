//! The command line of `mcp-client` (clap derive): its subcommands and their flags.

use std::path::PathBuf;

use clap::{Parser, Subcommand};

use super::{bench, chat, history, resources, target::TargetArgs};

/// Command line of `mcp-client`.
#[derive(Debug, Parser)]
#[command(
    name = "mcp-client",
    version,
    about = "Connect to MCP servers (started over stdio, or remote over Streamable HTTP), check them, and chat with a model that uses their tools"
)]
pub struct Cli {
    /// What to do.
    #[command(subcommand)]
    pub command: CliCommand,
    /// Log filter for stderr (RUST_LOG syntax).
    #[arg(long, global = true, env = "MCP_CLIENT_LOG", default_value = "warn")]
    pub log_level: String,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum CliCommand {
    /// Connect every configured server and show its status: protocol version, start time,
    /// tools, dropped stdout lines, and why a server is down.
    Servers {
        /// `mcpServers` JSON file.
        #[arg(long, env = "MCP_CLIENT_CONFIG", default_value = "mcp-servers.json")]
        config: PathBuf,
    },
    /// List every tool: those of the configured servers and of local definition files, with
    /// where each comes from.
    Tools {
        /// `mcpServers` JSON file (none: local tools only).
        #[arg(long, env = "MCP_CLIENT_CONFIG")]
        config: Option<PathBuf>,
        /// Local tool definition files (JSON).
        #[arg(long = "tools", value_name = "FILE")]
        tool_files: Vec<PathBuf>,
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Call one tool through the executor and print its outcome as JSON
    /// (exit code 0 on success, 1 when the tool failed, 2 on usage errors).
    Call {
        /// The tool's name.
        tool: String,
        /// Its arguments as a JSON object.
        #[arg(long, default_value = "{}")]
        args: String,
        /// `mcpServers` JSON file (none: local tools only).
        #[arg(long, env = "MCP_CLIENT_CONFIG")]
        config: Option<PathBuf>,
        /// Local tool definition files (JSON).
        #[arg(long = "tools", value_name = "FILE")]
        tool_files: Vec<PathBuf>,
    },
    /// Talk to a model (Ollama, OpenAI-compatible, Anthropic) that calls the tools of the
    /// configured servers and local tool files; interactive unless --once.
    Chat(chat::ChatArgs),
    /// Read the stored conversations.
    #[command(subcommand)]
    History(history::HistoryCommand),
    /// Start one server (or reach a remote one with --url) and report everything wrong with
    /// it: stdout pollution (with the offending lines), slow start, the protocol revisions it
    /// speaks, missing capabilities, tool names and schemas, shutdown; over HTTP what to fix
    /// (TLS, the token, the path, an answer that is not MCP).
    Doctor {
        /// Longest wait for the session to start: seconds (60) or a duration (90s, 2m).
        #[arg(long, value_parser = common::parse_duration, default_value = "60")]
        init_timeout: std::time::Duration,
        /// The server: `-- COMMAND…`, or `--url URL`.
        #[command(flatten)]
        target: TargetArgs,
    },
    /// List the resources and resource templates of the configured servers.
    Resources(resources::ServerArgs),
    /// Read one resource of a configured server and print its contents (text as it is,
    /// escape sequences removed; binary as its size).
    Read {
        /// The resource's URI, as `resources` lists it or a template makes it.
        uri: String,
        /// The servers and the output.
        #[command(flatten)]
        from: resources::ServerArgs,
    },
    /// List the prompts of the configured servers, with their arguments (`*`: required).
    Prompts(resources::ServerArgs),
    /// Get one prompt of a configured server with its arguments and print its messages.
    Prompt {
        /// The prompt's name, as `prompts` lists it.
        name: String,
        /// Its arguments, `NAME=VALUE` each.
        #[arg(value_name = "NAME=VALUE")]
        arguments: Vec<String>,
        /// The servers and the output.
        #[command(flatten)]
        from: resources::ServerArgs,
    },
    /// Show what a configured server offers for one argument of a prompt or a resource
    /// template (`completion/complete`), as a host would while the person types it.
    Complete {
        /// What the argument belongs to: `prompt:NAME` or `template:URI_TEMPLATE`.
        #[arg(value_name = "prompt:NAME|template:URI")]
        reference: String,
        /// The argument's name.
        argument: String,
        /// What has been typed of it so far.
        #[arg(default_value = "")]
        typed: String,
        /// An argument chosen already (it may narrow what is offered), `NAME=VALUE`; repeat.
        #[arg(long, value_name = "NAME=VALUE")]
        context: Vec<String>,
        /// The servers and the output.
        #[command(flatten)]
        from: resources::ServerArgs,
    },
    /// Measure one server (started, or remote with --url): start time, latency of sequential
    /// calls (p50/p90/p99/max), throughput with calls in flight, and for a started server its
    /// CPU time per call and peak memory.
    Bench(bench::BenchArgs),
}
