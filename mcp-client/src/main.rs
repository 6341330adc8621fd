//! `mcp-client`: connect to MCP stdio servers and check them. See the library docs.

use std::process::ExitCode;

use clap::Parser as _;
use mcp_client::cli::{Cli, run_until_stopped};

fn main() -> ExitCode {
    let cli = Cli::parse();
    // rmcp's OAuth logs the authorization code at debug: never below info, whatever is asked.
    // The cap only ever lowers what is shown: at the default level (warn) its info lines
    // ("Refreshed access token.", once per request for a token that expires at once) stay out.
    let mut filter = tracing_subscriber::EnvFilter::try_new(&cli.log_level)
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn"));
    if filter
        .max_level_hint()
        .is_none_or(|level| level > tracing_subscriber::filter::LevelFilter::INFO)
    {
        filter = filter.add_directive(
            mcp_client::cli::QUIET_OAUTH_LOG
                .parse()
                .expect("a valid directive"),
        );
    }
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_ansi(false)
        .with_env_filter(filter)
        .init();
    // One thread: the client waits on pipes and sockets, and a call's hand-offs (caller →
    // rmcp's service loop → caller) then never wake another thread. Against `mcp-floor` this
    // halved the client's CPU per call and cut context switches by 70%.
    // Blocking work (terminal reads, history writes) has threads of its own.
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(err) => {
            eprintln!("mcp-client: cannot start the async runtime: {err}");
            return ExitCode::FAILURE;
        }
    };
    let result = runtime.block_on(run_until_stopped(cli));
    // A read of stdin may still be blocked (chat left with Ctrl-C): don't wait for it.
    runtime.shutdown_background();
    match result {
        Ok(code) => code,
        // Usage errors and unreadable configuration both exit 2: nothing was attempted.
        Err(err) => {
            eprintln!("mcp-client: {}", common::printable(&format!("{err:#}")));
            ExitCode::from(2)
        }
    }
}
