//! `mcp-client resources` (the resources and templates of the configured servers) and
//! `mcp-client read URI` (one resource's contents), and [`ServerArgs`], how these commands and
//! `prompts` pick their servers. What a server sends is untrusted: text is shown flattened
//! (no escape sequences reach the terminal) and cut at [`SHOWN_CHARS`]; binary contents are
//! shown as their size; `--json` prints everything, escaped.

use std::{path::PathBuf, process::ExitCode, sync::Arc};

use clap::Args;
use rmcp::model::{ReadResourceResult, ResourceContents};
use serde_json::Value;

use super::{Stop, UsageError, emit};
use crate::{ClientError, Host, connection::ServerConnection};

/// Most characters of one text shown; `--json` shows all.
pub(super) const SHOWN_CHARS: usize = 64 * 1024;

/// Which servers a command asks, and how it prints.
#[derive(Debug, Args)]
pub struct ServerArgs {
    /// `mcpServers` JSON file.
    #[arg(long, env = "MCP_CLIENT_CONFIG", default_value = "mcp-servers.json")]
    config: PathBuf,
    /// Only this server of the file (needed to read or get from a file of several).
    #[arg(long)]
    server: Option<String>,
    /// Print the servers' answers as JSON instead of text.
    #[arg(long)]
    json: bool,
}

impl ServerArgs {
    /// Whether to print JSON.
    pub(super) fn json(&self) -> bool {
        self.json
    }

    /// The host of the configured servers, connected.
    pub(super) async fn host(&self, stop: &Stop) -> anyhow::Result<Host> {
        super::tools::host(Some(&self.config), &[], None, stop).await
    }

    /// The servers asked: the one `--server` names, else all of them.
    pub(super) fn servers(&self, host: &Host) -> Result<Vec<Arc<ServerConnection>>, UsageError> {
        let all: Vec<_> = host.pool().servers().cloned().collect();
        let Some(name) = &self.server else {
            return Ok(all);
        };
        match all.iter().find(|server| server.name() == name) {
            Some(server) => Ok(vec![Arc::clone(server)]),
            None => Err(UsageError(format!(
                "--server `{}` is not in {}: it has {}",
                common::printable(name),
                self.config.display(),
                names(&all)
            ))),
        }
    }

    /// The one server a command about one resource or prompt asks.
    pub(super) fn one(&self, host: &Host) -> Result<Arc<ServerConnection>, UsageError> {
        let mut servers = self.servers(host)?;
        match servers.len() {
            1 => Ok(servers.remove(0)),
            0 => Err(UsageError(format!(
                "{} configures no server",
                self.config.display()
            ))),
            _ => Err(UsageError(format!(
                "{} configures several servers ({}): say which with --server",
                self.config.display(),
                names(&servers)
            ))),
        }
    }
}

/// The servers' names, `a`, `b`.
fn names(servers: &[Arc<ServerConnection>]) -> String {
    let names: Vec<String> = servers
        .iter()
        .map(|server| format!("`{}`", server.name()))
        .collect();
    if names.is_empty() {
        "none".into()
    } else {
        names.join(", ")
    }
}

/// `text` flattened and cut at [`SHOWN_CHARS`], saying what was cut.
pub(super) fn shown(text: &str) -> String {
    let count = text.chars().count();
    // Lines kept (a resource is often a document); escape sequences are not.
    let cut: String = text.chars().take(SHOWN_CHARS).collect();
    let mut shown = common::printable(&cut).into_owned();
    if count > SHOWN_CHARS {
        shown.push_str(&format!(
            "\n… {} more characters (--json shows all)",
            count - SHOWN_CHARS
        ));
    }
    shown
}

/// The first line of an optional description, flattened and short.
pub(super) fn brief(description: Option<&str>) -> String {
    let line = description
        .and_then(|d| d.lines().next())
        .unwrap_or_default();
    common::printable(&common::clip(line, 200)).into_owned()
}

/// A failure of `server` on stderr.
pub(super) fn report(server: &ServerConnection, err: &ClientError) {
    tracing::error!(server = server.name(), "{err}");
}

/// `mcp-client resources`: every resource and template of the servers asked.
pub(super) async fn list(args: &ServerArgs, stop: &Stop) -> anyhow::Result<ExitCode> {
    let host = args.host(stop).await?;
    let servers = args.servers(&host)?;
    let mut failed = false;
    let mut listed = Vec::new();
    for server in &servers {
        let answer = match server.resources().await {
            Ok(resources) => server
                .resource_templates()
                .await
                .map(|templates| (resources, templates)),
            Err(err) => Err(err),
        };
        match answer {
            Ok(answer) => listed.push((server.name().to_owned(), answer)),
            Err(err @ ClientError::NotSent { .. }) if args.server.is_none() => {
                tracing::info!(server = server.name(), "{err}");
            }
            Err(err) => {
                report(server, &err);
                failed = true;
            }
        }
    }
    if args.json() {
        let json: Vec<Value> = listed
            .iter()
            .map(|(server, (resources, templates))| {
                serde_json::json!({"server": server, "resources": resources, "resourceTemplates": templates})
            })
            .collect();
        emit(&serde_json::to_string_pretty(&json)?);
    } else {
        for (server, (resources, templates)) in &listed {
            for resource in resources {
                let mime = resource.mime_type.as_deref().unwrap_or("-");
                emit(&format!(
                    "{server}  {}  {}  ({})  {}",
                    shown_short(&resource.uri),
                    shown_short(&resource.name),
                    shown_short(mime),
                    brief(resource.description.as_deref())
                ));
            }
            for template in templates {
                emit(&format!(
                    "{server}  {}  {}  [template]  {}",
                    shown_short(&template.uri_template),
                    shown_short(&template.name),
                    brief(template.description.as_deref())
                ));
            }
        }
    }
    host.shutdown().await;
    Ok(if failed {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    })
}

/// A name or URI of a listing, flattened and at most 200 characters.
pub(super) fn shown_short(text: &str) -> String {
    common::printable(&common::clip(text, 200)).into_owned()
}

/// `mcp-client read URI`: the contents of one resource.
pub(super) async fn read(uri: &str, args: &ServerArgs, stop: &Stop) -> anyhow::Result<ExitCode> {
    ask_one(
        args,
        stop,
        |server| async move { server.read_resource(uri).await },
        contents,
    )
    .await
}

/// Asks the one server `args` names (`ask`), prints its answer (as JSON with `--json`, else
/// as `text` makes it) or says why there is none, and stops the servers: `read`, `prompt`
/// and `complete`.
pub(super) async fn ask_one<T, F, A>(
    args: &ServerArgs,
    stop: &Stop,
    ask: A,
    text: impl FnOnce(&T) -> String,
) -> anyhow::Result<ExitCode>
where
    T: serde::Serialize,
    F: std::future::Future<Output = Result<T, ClientError>>,
    A: FnOnce(Arc<ServerConnection>) -> F,
{
    let host = args.host(stop).await?;
    let server = args.one(&host)?;
    let code = match ask(Arc::clone(&server)).await {
        Ok(answer) => {
            if args.json() {
                emit(&serde_json::to_string_pretty(&answer)?);
            } else {
                emit(&text(&answer));
            }
            ExitCode::SUCCESS
        }
        Err(err) => {
            report(&server, &err);
            ExitCode::FAILURE
        }
    };
    host.shutdown().await;
    Ok(code)
}

/// The contents of a read as text for the terminal: each text as it is (flattened, cut),
/// each blob as its size, under a line naming its URI when there are several.
pub(super) fn contents(result: &ReadResourceResult) -> String {
    let several = result.contents.len() > 1;
    let mut parts = Vec::new();
    for content in &result.contents {
        let (uri, mime, body) = match content {
            ResourceContents::TextResourceContents {
                uri,
                mime_type,
                text,
                ..
            } => (uri.as_str(), mime_type.as_deref(), shown(text)),
            ResourceContents::BlobResourceContents {
                uri,
                mime_type,
                blob,
                ..
            } => (
                uri.as_str(),
                mime_type.as_deref(),
                format!(
                    "[binary contents: {} bytes of base64; --json shows them]",
                    blob.len()
                ),
            ),
            _ => (
                "",
                None,
                "[contents of a kind this client does not know; --json shows them]".to_owned(),
            ),
        };
        if several {
            parts.push(format!(
                "--- {} ({})",
                shown_short(uri),
                shown_short(mime.unwrap_or("-"))
            ));
        }
        parts.push(body);
    }
    if parts.is_empty() {
        return "[the resource has no contents]".into();
    }
    parts.join("\n")
}
