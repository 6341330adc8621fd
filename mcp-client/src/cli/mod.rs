//! The `mcp-client` command line. This file runs a command (stopping every server first when
//! the host is asked to stop) and holds the output helpers; each command has its file.
//!
//! | module | owns |
//! |---|---|
//! | `args` | [`Cli`], [`CliCommand`]: the flags |
//! | `servers` | `servers`: the status of every configured server |
//! | `doctor` | `doctor`: everything wrong with one server |
//! | `tools` | `tools` and `call`, and the host both build |
//! | `resources`, `prompts`, `complete` | `resources`, `read`, `prompts`, `prompt` and `complete`: what servers offer besides tools, shown as untrusted text |
//! | `chat`, `view` | `chat`: talking to a model that calls the tools, and what the terminal shows |
//! | `approval` | what a person reads before a tool runs: the server, the tool, every argument bounded and escaped |
//! | `rows` | a server's or a model's lines cut to the terminal's width, so it never wraps them |
//! | `shown` | a server's or a model's text escaped for the terminal (invisible characters, runs of white space) |
//! | `attach` | `chat --attach`: resources the person attaches to the first question, between random markers |
//! | `source` | which server a resource named on the command line is taken from: one that lists it |
//! | `history` | `history`: the stored conversations |
//! | `input`, `elicit` | the one reader of stdin; a server's questions to the user asked on the terminal |
//! | `bench` | `bench`: how fast one server answers |
//! | `sign_in` | signing in to remote servers with OAuth: the address on stderr, the redirect on a loopback port |
//! | `target` | the one server `doctor` and `bench` are given: a command, or `--url` |
//! | `signals` | the signals that ask the CLI to stop |

mod approval;
mod args;
mod attach;
mod bench;
mod chat;
mod complete;
mod doctor;
mod elicit;
mod history;
mod input;
mod prompts;
mod resources;
mod rows;
mod servers;
mod shown;
mod sign_in;
mod signals;
mod source;
mod target;
mod tools;
mod view;
mod watch;

use std::process::ExitCode;

pub use args::{Cli, CliCommand};
pub use sign_in::QUIET_OAUTH_LOG;

use tokio_util::sync::CancellationToken;

use crate::transport::ServerProcesses;

/// What a command shares with the signal handling around it: where the servers it starts are
/// registered, and the request to stop that work able to end cleanly watches.
#[derive(Debug, Clone, Default)]
pub struct Stop {
    /// Every server process the command started: stopped all at once on a signal.
    pub processes: ServerProcesses,
    /// Cancelled when the CLI is asked to stop (SIGTERM, SIGHUP): `chat` then cancels its
    /// question and stores it, within a grace period, before the servers are stopped.
    pub requested: CancellationToken,
    /// Cancelled by `chat` once its own Ctrl-C handler listens (a Ctrl-C then cancels a
    /// question, or ends the session between them); before that, Ctrl-C stops the CLI.
    pub ctrl_c_taken: CancellationToken,
}

/// Runs the command until it ends or the host is asked to stop (SIGTERM, SIGHUP, and SIGINT
/// except in interactive `chat`, where Ctrl-C cancels a question or ends the session itself).
/// On such a signal every server is stopped first; the exit code is then 128 + the signal.
///
/// # Errors
/// A configuration that cannot be read.
pub async fn run_until_stopped(cli: Cli) -> anyhow::Result<ExitCode> {
    // `chat` owns Ctrl-C (it cancels the question being answered, and is stored as such).
    let chat = matches!(&cli.command, CliCommand::Chat(_));
    let stop = Stop::default();
    let work = run(cli, &stop);
    tokio::pin!(work);
    let signal = signals::stop_requested(chat.then(|| stop.ctrl_c_taken.clone()));
    tokio::select! {
        result = &mut work => result,
        Ok(signal) = signal => {
            if chat && stop.ctrl_c_taken.is_cancelled() {
                // A session runs: a grace in which its question is cancelled (its servers
                // told) and stored.
                stop.requested.cancel();
                let _ = tokio::time::timeout(STOP_GRACE, &mut work).await;
            }
            tracing::warn!(?signal, "asked to stop; stopping the MCP servers first");
            stop.processes.shutdown_all().await;
            Ok(ExitCode::from(signal.exit_code()))
        }
    }
}

/// How long `chat` may take to cancel and store its question when asked to stop.
const STOP_GRACE: std::time::Duration = std::time::Duration::from_secs(3);

/// Runs the command; the exit code is 0 when everything is fine, 1 when something is wrong.
///
/// # Errors
/// A configuration that cannot be read.
pub async fn run(cli: Cli, stop: &Stop) -> anyhow::Result<ExitCode> {
    match cli.command {
        CliCommand::Servers { config } => servers::servers(&config, stop).await,
        CliCommand::Doctor {
            init_timeout,
            target,
        } => Ok(doctor::doctor(target.into_config(init_timeout), stop).await),
        CliCommand::Tools {
            config,
            tool_files,
            json,
        } => tools::tools(config.as_deref(), &tool_files, json, stop).await,
        CliCommand::Call {
            tool,
            args,
            config,
            tool_files,
        } => tools::call(&tool, &args, config.as_deref(), &tool_files, stop).await,
        CliCommand::Resources(args) => resources::list(&args, stop).await,
        CliCommand::Read { uri, from } => resources::read(&uri, &from, stop).await,
        CliCommand::Prompts(args) => prompts::list(&args, stop).await,
        CliCommand::Prompt {
            name,
            arguments,
            from,
        } => prompts::get(&name, &arguments, &from, stop).await,
        CliCommand::Complete {
            reference,
            argument,
            typed,
            context,
            from,
        } => complete::complete(&reference, &argument, &typed, &context, &from, stop).await,
        CliCommand::Chat(args) => chat::run(args, stop).await,
        CliCommand::History(command) => history::run(command),
        CliCommand::Bench(args) => bench::run(args, stop).await,
    }
}

/// A usage error: the message goes to stderr and the exit code is 2.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct UsageError(pub String);

/// Writes one line of the command's answer to stdout.
pub(super) fn emit(text: &str) {
    write_stdout(&format!("{text}\n"));
}

/// Writes the command's answer to stdout, flushed at once (a streamed answer shows as it
/// comes): the one place this CLI writes to stdout. Logs go to stderr. Control characters
/// are dropped: what a model or a server wrote never reaches a terminal as escape sequences
/// (JSON output has none to drop: its strings escape them).
pub(super) fn write_stdout(text: &str) {
    let mut stdout = std::io::stdout().lock();
    // A closed stdout (`| head`) ends nothing here: the command finishes its work.
    let _ = std::io::Write::write_all(&mut stdout, common::printable(text).as_bytes());
    let _ = std::io::Write::flush(&mut stdout);
}
