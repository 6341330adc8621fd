//! `mcp-client servers`: connect every configured server and show how each one is doing.

use std::process::ExitCode;

use super::{Stop, emit};
use crate::{
    ServerPool,
    connection::{Endpoint, config},
};

/// Connects every server of the `mcpServers` file at `path` and prints one status line each
/// (with the stdout lines it dropped); fails when any server is down.
pub(super) async fn servers(path: &std::path::Path, stop: &Stop) -> anyhow::Result<ExitCode> {
    let configs = config::load(path)?;
    let pool = ServerPool::signing_in(
        configs,
        None,
        stop.processes.clone(),
        &super::sign_in::options(),
    );
    let report = pool.connect_all().await;
    let mut all_up = true;
    for server in pool.servers() {
        let name = server.name();
        if let Some(info) = report.connected.get(name) {
            let tools = server.tools().await.map(|t| t.len()).unwrap_or(0);
            if let Endpoint::Http(endpoint) = &server.config().endpoint {
                emit(&format!(
                    "{name}: connected — {} (protocol {}) at {}, answered in {} ms, {tools} tools",
                    info.server,
                    info.protocol_version,
                    endpoint.shown_url(),
                    info.init_time.as_millis()
                ));
                continue;
            }
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
