//! `mcp-conformance [--protocol …] -- <server command...>`: check any MCP stdio server.

use std::process::ExitCode;

use clap::Parser;
use protocol_tests::{Config, Verdict};

#[allow(clippy::print_stdout, reason = "the report is this command's answer")]
fn main() -> ExitCode {
    let config = Config::parse();
    let options = config.options().unwrap_or_else(|err| err.exit());
    let Ok(runtime) = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    else {
        eprintln!("mcp-conformance: cannot start the async runtime");
        return ExitCode::from(2);
    };
    let report = runtime.block_on(protocol_tests::run_with(&config.command, &options));
    if config.json {
        println!(
            "{}",
            serde_json::to_string_pretty(&report).unwrap_or_default()
        );
    } else {
        println!("{}", report.text());
    }
    if report.count(Verdict::Fail) == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}
