//! `mcp-conformance -- <server command...>`: check any MCP stdio server.

use std::process::ExitCode;

use clap::Parser;

/// Checks an MCP stdio server against the spec and prints one line per check.
#[derive(Debug, Parser)]
#[command(name = "mcp-conformance", version)]
struct Cli {
    /// Print the report as JSON.
    #[arg(long)]
    json: bool,
    /// The server's command line, after `--`.
    #[arg(required = true, last = true)]
    command: Vec<String>,
}

#[allow(clippy::print_stdout, reason = "the report is this command's answer")]
fn main() -> ExitCode {
    let cli = Cli::parse();
    let Ok(runtime) = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    else {
        eprintln!("mcp-conformance: cannot start the async runtime");
        return ExitCode::from(2);
    };
    let report = runtime.block_on(protocol_tests::run(&cli.command));
    if cli.json {
        println!(
            "{}",
            serde_json::to_string_pretty(&report).unwrap_or_default()
        );
    } else {
        println!("{}", report.text());
    }
    if report.count(protocol_tests::Verdict::Fail) == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}
