//! `mcp-client tools` (every tool a host would offer, with where it comes from) and
//! `mcp-client call` (one call through the executor, its outcome as JSON), and the host both
//! build: local tool files plus the configured servers.

use std::{path::PathBuf, process::ExitCode};

use rmcp::model::JsonObject;
use serde_json::Value;

use super::{Stop, UsageError, emit};
use crate::{Host, connection::Elicitor};

/// The host of a command: local tools from `tool_files`, plus the tools of the servers of
/// `config` (connected concurrently; servers that fail are reported on stderr, not fatal).
pub(super) async fn host(
    config: Option<&std::path::Path>,
    tool_files: &[PathBuf],
    elicitor: Option<Elicitor>,
    stop: &Stop,
) -> anyhow::Result<Host> {
    let mut builder = Host::builder()
        .processes(stop.processes.clone())
        .oauth(super::sign_in::options());
    for file in tool_files {
        builder = builder.tools_from_file(file)?;
    }
    if let Some(config) = config {
        builder = builder.servers_from_file(config)?;
    }
    if let Some(elicitor) = elicitor {
        builder = builder.elicitor(elicitor);
    }
    let host = builder.connect().await?;
    for error in host.report().failed.values() {
        tracing::error!("{error}");
    }
    Ok(host)
}

pub(super) async fn tools(
    config: Option<&std::path::Path>,
    tool_files: &[PathBuf],
    json: bool,
    stop: &Stop,
) -> anyhow::Result<ExitCode> {
    let host = host(config, tool_files, None, stop).await?;
    let executor = host.executor();
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
    // Found by the third hostile review: with every server failed the listing was exit 0, as
    // if the servers offered nothing. Some servers failing is a listing of the others.
    let (failed, connected) = (host.report().failed.len(), host.report().connected.len());
    host.shutdown().await;
    if failed > 0 && connected == 0 {
        eprintln!(
            "mcp-client: no configured server could be reached ({failed} failed): the tools listed are the local ones only"
        );
        return Ok(ExitCode::FAILURE);
    }
    Ok(ExitCode::SUCCESS)
}

pub(super) async fn call(
    tool: &str,
    args: &str,
    config: Option<&std::path::Path>,
    tool_files: &[PathBuf],
    stop: &Stop,
) -> anyhow::Result<ExitCode> {
    let arguments = parse_arguments(args)?;
    let host = host(config, tool_files, None, stop).await?;
    let outcome = host
        .executor()
        .execute(tool, Value::Object(arguments))
        .await;
    emit(&serde_json::to_string_pretty(&outcome)?);
    host.shutdown().await;
    Ok(if outcome.is_success() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

/// The `--args` of a command: a JSON object of named arguments.
pub(super) fn parse_arguments(args: &str) -> Result<JsonObject, UsageError> {
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
