//! The `mcp-client` command line: `servers` (status of every configured server), `doctor`
//! (everything wrong with one server; `doctor.rs`), `tools` (every tool a host would offer), `call` (one
//! call through the executor), `chat` (talk to a model that calls the tools; `chat.rs`),
//! `history` (the stored conversations; `history.rs`) and `bench` (how fast one server
//! answers; `bench.rs`).

mod bench;
mod chat;
mod doctor;
mod history;
mod view;

use std::{path::PathBuf, process::ExitCode, time::Duration};

use clap::{Parser, Subcommand};
use rmcp::model::JsonObject;
use serde_json::Value;

use crate::{
    McpTools, ServerCommand, ServerConfig, ServerPool,
    connection::{RetryPolicy, config},
    tools::{definition, executor::ToolExecutor, manager::ToolManager},
};

/// Command line of `mcp-client`.
#[derive(Debug, Parser)]
#[command(
    name = "mcp-client",
    version,
    about = "Connect to MCP stdio servers, check them, and chat with a model that uses their tools"
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
    /// Start one server and report everything wrong with it: stdout pollution (with the
    /// offending lines), slow start, missing capabilities, tool names and schemas, shutdown.
    Doctor {
        /// Longest wait for `initialize`, in seconds.
        #[arg(long, default_value_t = 60)]
        init_timeout: u64,
        /// The server's command line, after `--`.
        #[arg(required = true, last = true)]
        command: Vec<String>,
    },
    /// Measure one server: start time, latency of sequential calls (p50/p90/p99/max),
    /// throughput with calls in flight, its CPU time per call and peak memory.
    Bench(bench::BenchArgs),
}

/// Runs the command until it ends or the host is asked to stop (SIGTERM, SIGHUP, and SIGINT
/// except in interactive `chat`, where Ctrl-C cancels a question or ends the session itself).
/// On such a signal every server is stopped first; the exit code is then 128 + the signal.
///
/// # Errors
/// A configuration that cannot be read.
pub async fn run_until_stopped(cli: Cli) -> anyhow::Result<ExitCode> {
    let interactive = matches!(&cli.command, CliCommand::Chat(args) if args.once.is_none());
    let work = run(cli);
    tokio::pin!(work);
    let stop = crate::signals::stop_requested(!interactive);
    tokio::select! {
        result = &mut work => result,
        Ok(signal) = stop => {
            tracing::warn!(?signal, "asked to stop; stopping the MCP servers first");
            crate::transport::shutdown_all().await;
            Ok(ExitCode::from(signal.exit_code()))
        }
    }
}

/// Runs the command; the exit code is 0 when everything is fine, 1 when something is wrong.
///
/// # Errors
/// A configuration that cannot be read.
pub async fn run(cli: Cli) -> anyhow::Result<ExitCode> {
    match cli.command {
        CliCommand::Servers { config } => servers(&config).await,
        CliCommand::Doctor {
            init_timeout,
            command,
        } => Ok(doctor::doctor(init_timeout, command).await),
        CliCommand::Tools {
            config,
            tool_files,
            json,
        } => tools(config.as_deref(), &tool_files, json).await,
        CliCommand::Call {
            tool,
            args,
            config,
            tool_files,
        } => call(&tool, &args, config.as_deref(), &tool_files).await,
        CliCommand::Chat(args) => chat::run(args).await,
        CliCommand::History(command) => history::run(command),
        CliCommand::Bench(args) => bench::run(args).await,
    }
}

/// A usage error: the message goes to stderr and the exit code is 2.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct UsageError(pub String);

/// The executor of a host: local tools from `tool_files`, plus the tools of the servers of
/// `config` (connected concurrently; servers that fail are reported on stderr, not fatal).
async fn host(
    config: Option<&std::path::Path>,
    tool_files: &[PathBuf],
) -> anyhow::Result<(ToolExecutor, ServerPool)> {
    let mut manager = ToolManager::new();
    for file in tool_files {
        for tool in definition::load_file(file)? {
            manager.add(tool)?;
        }
    }
    let pool = ServerPool::new(match config {
        Some(path) => config::load(path)?,
        None => Vec::new(),
    });
    let report = pool.connect_all().await;
    for error in report.failed.values() {
        tracing::error!("{error}");
    }
    manager.add_mcp(&McpTools::discover(&pool).await);
    let normalizer = McpTools::normalizer(&pool);
    Ok((
        ToolExecutor::new(manager).with_mcp(pool.clone(), normalizer),
        pool,
    ))
}

async fn tools(
    config: Option<&std::path::Path>,
    tool_files: &[PathBuf],
    json: bool,
) -> anyhow::Result<ExitCode> {
    let (executor, pool) = host(config, tool_files).await?;
    let manager = executor.manager();
    let listed = manager.all();
    if json {
        let tools: Vec<Value> = listed
            .iter()
            .map(|t| {
                serde_json::json!({
                    "name": t.definition.name,
                    "source": t.definition.source(),
                    "originalName": t.definition.original_name(),
                    "description": t.definition.description,
                    "parameters": t.definition.parameters,
                })
            })
            .collect();
        emit(&serde_json::to_string_pretty(&tools)?);
    } else {
        for shadowed in executor.manager().shadowed() {
            emit(&format!(
                "note: MCP server `{}` offers `{}`, the name of a local tool: the local tool keeps the name, the server's is `{}`",
                shadowed.server, shadowed.name, shadowed.exposed_as
            ));
        }
        for tool in listed {
            let description = tool
                .definition
                .description
                .lines()
                .next()
                .unwrap_or_default();
            emit(&format!(
                "{}  [{}]  {description}",
                tool.definition.name,
                tool.definition.source()
            ));
        }
    }
    pool.shutdown().await;
    Ok(ExitCode::SUCCESS)
}

async fn call(
    tool: &str,
    args: &str,
    config: Option<&std::path::Path>,
    tool_files: &[PathBuf],
) -> anyhow::Result<ExitCode> {
    let arguments = parse_arguments(args)?;
    let (executor, pool) = host(config, tool_files).await?;
    let outcome = executor.execute(tool, Value::Object(arguments)).await;
    emit(&serde_json::to_string_pretty(&outcome)?);
    pool.shutdown().await;
    Ok(if outcome.is_success() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

/// The `--args` of a command: a JSON object of named arguments.
fn parse_arguments(args: &str) -> Result<JsonObject, UsageError> {
    match serde_json::from_str(args) {
        Ok(Value::Object(arguments)) => Ok(arguments),
        Ok(other) => Err(UsageError(format!(
            "--args must be a JSON object of named arguments, got {other}"
        ))),
        Err(err) => Err(UsageError(format!(
            "--args is not JSON ({err}): give an object such as '{{\"expression\": \"2+2\"}}'"
        ))),
    }
}

/// One server given on the command line (`doctor`, `bench`): a single connection attempt,
/// so a server that cannot start is reported at once.
fn one_server(command: Vec<String>, init_timeout: Duration) -> ServerConfig {
    let mut parts = command.into_iter();
    let program = parts.next().unwrap_or_default();
    let mut config = ServerConfig::new(ServerCommand::new("server", program, parts));
    config.init_timeout = init_timeout;
    config.retry = RetryPolicy {
        attempts: 1,
        base_delay: Duration::ZERO,
    };
    config
}

/// Writes one line of the command's answer to stdout.
fn emit(text: &str) {
    write_stdout(&format!("{text}\n"));
}

/// Writes the command's answer to stdout, flushed at once (a streamed answer shows as it
/// comes): the one place this CLI writes to stdout. Logs go to stderr.
fn write_stdout(text: &str) {
    let mut stdout = std::io::stdout().lock();
    // A closed stdout (`| head`) ends nothing here: the command finishes its work.
    let _ = std::io::Write::write_all(&mut stdout, text.as_bytes());
    let _ = std::io::Write::flush(&mut stdout);
}

async fn servers(path: &std::path::Path) -> anyhow::Result<ExitCode> {
    let configs = config::load(path)?;
    let pool = ServerPool::new(configs);
    let report = pool.connect_all().await;
    let mut all_up = true;
    for server in pool.servers() {
        let name = server.name();
        if let Some(info) = report.connected.get(name) {
            let tools = server.tools().await.map(|t| t.len()).unwrap_or(0);
            let process = server.process().await;
            let counts = process.as_ref().map(|p| p.counts()).unwrap_or_default();
            emit(&format!(
                "{name}: connected — {} (protocol {}), started in {} ms, {tools} tools, stdout: {} messages, {} lines dropped",
                info.server,
                info.protocol_version,
                info.init_time.as_millis(),
                counts.messages,
                counts.dropped()
            ));
            for line in process.map(|p| p.dropped_lines()).unwrap_or_default() {
                emit(&format!("    dropped {line}"));
            }
        } else if let Some(error) = report.failed.get(name) {
            all_up = false;
            emit(&format!("{name}: down — {error}"));
        } else {
            emit(&format!("{name}: disabled"));
        }
    }
    pool.shutdown().await;
    Ok(if all_up {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}
