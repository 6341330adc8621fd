//! The one server `doctor` and `bench` are given on the command line ([`TargetArgs`]): a
//! command to start (after `--`), or a remote server's URL with its headers. Either becomes
//! the [`ServerConfig`] of a single connection attempt, so a server that cannot start is
//! reported at once.

use std::time::Duration;

use clap::Args;
use serde_json::Value;

use crate::{
    ServerCommand, ServerConfig,
    connection::{RetryPolicy, config},
};

/// The server a command examines: `-- COMMAND…` or `--url URL [--header 'Name: value']…`.
#[derive(Debug, Args)]
pub struct TargetArgs {
    /// A remote server's Streamable HTTP endpoint (`https://host/mcp`) instead of a command.
    #[arg(long, conflicts_with = "command")]
    url: Option<String>,
    /// A header for every request to --url, `Name: value`; `${VAR}` in the value is taken
    /// from the environment (write it in single quotes, so the token stays off the
    /// command line). Repeatable.
    // `requires` alone lets a header pass beside a command: clap does not demand an argument
    // that conflicts with one present.
    #[arg(
        long = "header",
        value_name = "NAME: VALUE",
        requires = "url",
        conflicts_with = "command"
    )]
    headers: Vec<String>,
    /// The server's command line, after `--`.
    #[arg(required_unless_present = "url", last = true, value_name = "COMMAND")]
    command: Vec<String>,
}

impl TargetArgs {
    /// The server's configuration: `init_timeout` to start, one connection attempt.
    ///
    /// # Errors
    /// A `--header` without its colon, or a URL or header a configuration file would refuse
    /// (a `${VAR}` that is not set, a URL that is not http(s)): what to fix, naming the flag.
    pub fn into_config(self, init_timeout: Duration) -> Result<ServerConfig, String> {
        let mut config = match self.url {
            Some(url) => remote(&url, &self.headers)?,
            None => {
                let mut parts = self.command.into_iter();
                let program = parts.next().unwrap_or_default();
                ServerConfig::new(ServerCommand::new("server", program, parts))
            }
        };
        config.init_timeout = init_timeout;
        config.retry = RetryPolicy {
            attempts: 1,
            base_delay: Duration::ZERO,
        };
        Ok(config)
    }
}

/// The remote server at `url` as an `mcpServers` entry would give it, so that the URL and the
/// headers are checked, and `${VAR}` expanded, exactly as in a configuration file.
fn remote(url: &str, headers: &[String]) -> Result<ServerConfig, String> {
    let mut named = serde_json::Map::new();
    for header in headers {
        let Some((name, value)) = header.split_once(':') else {
            // Never quote it: it may be the token.
            return Err("a --header has no `:`: write it `Name: value`".to_owned());
        };
        named.insert(name.trim().to_owned(), Value::from(value.trim()));
    }
    let entry = serde_json::json!({"url": url, "headers": named});
    let text = serde_json::json!({"mcpServers": {"server": entry}}).to_string();
    let lookup = |name: &str| std::env::var(name).ok();
    let mut servers =
        config::parse(std::path::Path::new("--url"), &text, &lookup).map_err(flag_problem)?;
    Ok(servers.remove(0))
}

/// A configuration error about the entry built from the flags, said of the flags: `--url …`,
/// `--header `Name` …` (there is no file or server name to point at).
fn flag_problem(err: config::ConfigError) -> String {
    match &err {
        config::ConfigError::Key { key, problem, .. } if key == "url" => {
            format!("--url {problem}")
        }
        config::ConfigError::Key { key, problem, .. } => match key.strip_prefix("headers.") {
            Some(name) => format!("--header `{name}` {problem}"),
            None => err.to_string(),
        },
        _ => err.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::connection::Endpoint;

    fn target(url: &str, headers: &[&str]) -> TargetArgs {
        TargetArgs {
            url: Some(url.to_owned()),
            headers: headers.iter().map(|h| (*h).to_owned()).collect(),
            command: Vec::new(),
        }
    }

    #[test]
    fn a_url_with_headers_is_one_attempt_at_a_remote_server() {
        let config = target(
            "http://127.0.0.1:9/mcp",
            &["X-Test:  yes ", "Accept-Language: en"],
        )
        .into_config(Duration::from_secs(7))
        .unwrap();
        let Endpoint::Http(endpoint) = &config.endpoint else {
            panic!("not remote: {config:?}");
        };
        assert_eq!(endpoint.url, "http://127.0.0.1:9/mcp");
        assert_eq!(endpoint.headers["X-Test"], "yes");
        assert_eq!(endpoint.headers["Accept-Language"], "en");
        assert_eq!(config.init_timeout, Duration::from_secs(7));
        assert_eq!(config.retry.attempts, 1);
    }

    #[test]
    fn a_command_is_a_server_to_start() {
        let args = TargetArgs {
            url: None,
            headers: Vec::new(),
            command: vec!["python3".into(), "server.py".into()],
        };
        let config = args.into_config(Duration::from_secs(3)).unwrap();
        assert_eq!(config.command().unwrap().display(), "python3 server.py");
        assert_eq!(config.retry.attempts, 1);
    }

    #[test]
    fn problems_name_the_flag_and_never_quote_a_header() {
        let problem = |url, headers: &[&str]| {
            target(url, headers)
                .into_config(Duration::from_secs(1))
                .unwrap_err()
        };
        assert_eq!(
            problem("http://h/mcp", &["Authorization Bearer s3cret"]),
            "a --header has no `:`: write it `Name: value`"
        );
        assert_eq!(
            problem("ftp://h/mcp", &[]),
            "--url is not an http:// or https:// URL: give the server's Streamable HTTP endpoint, such as http://127.0.0.1:8080/mcp"
        );
        let unset = problem(
            "http://h/mcp",
            &["Authorization: Bearer ${MCP_CLIENT_TEST_SURELY_UNSET}"],
        );
        assert!(
            unset.starts_with("--header `Authorization` refers to ${MCP_CLIENT_TEST_SURELY_UNSET}, which is not set"),
            "{unset}"
        );
        let bad = problem("http://h/mcp", &["Mcp-Session-Id: s3cret"]);
        assert!(
            bad.starts_with("--header `Mcp-Session-Id` is set by the client"),
            "{bad}"
        );
        assert!(!bad.contains("s3cret"), "{bad}");
    }
}
