//! A host in a few lines: start an MCP server, see its tools, call one, stop it (on Ctrl-C
//! too: the servers first).
//!
//! ```text
//! cargo build --release -p zwave-mcp-server
//! cargo run -p mcp-client --example host -- target/release/zwave-mcp-server --demo
//! ```
//!
//! With no command it starts `zwave-mcp-server --demo` from `PATH`. It asks the server for
//! `get_device_status` of "Living Room Light" when the server offers that tool (the demo home
//! does), else it lists the tools only.
#![expect(
    clippy::print_stdout,
    reason = "an example: what it found is its output"
)]

use std::process::ExitCode;

use mcp_client::{Host, ServerCommand, ServerConfig};
use serde_json::json;

#[tokio::main(flavor = "current_thread")]
async fn main() -> ExitCode {
    let mut command = std::env::args().skip(1);
    let program = command
        .next()
        .unwrap_or_else(|| "zwave-mcp-server".to_owned());
    let args: Vec<String> = match command.collect::<Vec<_>>() {
        args if args.is_empty() && program == "zwave-mcp-server" => vec!["--demo".to_owned()],
        args => args,
    };
    let server = ServerConfig::new(ServerCommand::new("home", program, args));

    let host = match Host::builder().server(server).connect().await {
        Ok(host) => host,
        Err(err) => {
            eprintln!("host: {err}");
            return ExitCode::from(2);
        }
    };
    if let Some(err) = host.report().failed.values().next() {
        eprintln!("host: {err}");
        host.shutdown().await;
        return ExitCode::FAILURE;
    }

    // Ctrl-C stops the servers first (and every process they started), then the example.
    let processes = host.processes().clone();
    let code = tokio::select! {
        code = list_and_call(&host) => code,
        _ = tokio::signal::ctrl_c() => {
            processes.shutdown_all().await;
            return ExitCode::from(130);
        }
    };
    host.shutdown().await;
    code
}

/// Prints the tools, then calls `get_device_status` if the server has it.
async fn list_and_call(host: &Host) -> ExitCode {
    let tools = host.executor().manager();
    for tool in tools.all() {
        println!(
            "tool {} [{}]",
            tool.definition.name,
            tool.definition.source()
        );
    }
    if tools.find("get_device_status").is_none() {
        return ExitCode::SUCCESS;
    }
    let outcome = host
        .executor()
        .execute(
            "get_device_status",
            json!({"device_name": "Living Room Light"}),
        )
        .await;
    println!(
        "{}",
        serde_json::to_string_pretty(&outcome).unwrap_or_default()
    );
    if outcome.is_success() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}
