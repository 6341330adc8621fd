//! The `mcpServers` configuration hosts already use, plus our optional per-server keys.
//!
//! ```json
//! { "mcpServers": { "zwave": {
//!     "command": "zwave-mcp-server", "args": ["--demo"], "env": {"TOKEN": "${TOKEN}"}, "cwd": "/srv",
//!     "timeouts": {"initialize": "60s", "call": "30s"}, "retry": {"attempts": 3, "baseDelay": "2s"},
//!     "parameterMappings": {"control_zwave_device": {"device_name": "deviceName"}},
//!     "toolPrefix": "home", "disabled": false, "maxLineBytes": 16777216 } } }
//! ```
//! Keys are checked one by one so an error names the file, the server and the key. Unknown
//! keys are ignored with a warning (hosts add their own).

use std::{
    collections::BTreeMap,
    path::{Path, PathBuf},
    time::Duration,
};

use serde::de::DeserializeOwned;
use serde_json::{Map, Value};
use tracing::warn;

use super::retry::RetryPolicy;
use crate::transport::{DEFAULT_MAX_LINE, ServerCommand};

/// Default time for a server to start and answer `initialize` (first `npx`/`uvx` runs are slow).
pub const DEFAULT_INIT_TIMEOUT: Duration = Duration::from_secs(60);
/// Default time for one request.
pub const DEFAULT_CALL_TIMEOUT: Duration = Duration::from_secs(30);

/// One configured server.
#[derive(Debug, Clone, PartialEq)]
pub struct ServerConfig {
    /// How to start it.
    pub command: ServerCommand,
    /// Time allowed for start-up and `initialize`.
    pub init_timeout: Duration,
    /// Time allowed for each request.
    pub call_timeout: Duration,
    /// Connection attempts and delays.
    pub retry: RetryPolicy,
    /// Per tool: argument renames applied before the server sees them.
    pub parameter_mappings: BTreeMap<String, BTreeMap<String, String>>,
    /// Prefix for this server's tool names (`<prefix>__<tool>`).
    pub tool_prefix: Option<String>,
    /// Whether the host should skip it.
    pub disabled: bool,
}

impl ServerConfig {
    /// A server with the default timeouts and retry policy.
    pub fn new(command: ServerCommand) -> Self {
        Self {
            command,
            init_timeout: DEFAULT_INIT_TIMEOUT,
            call_timeout: DEFAULT_CALL_TIMEOUT,
            retry: RetryPolicy::default(),
            parameter_mappings: BTreeMap::new(),
            tool_prefix: None,
            disabled: false,
        }
    }

    /// The server's name.
    pub fn name(&self) -> &str {
        &self.command.name
    }
}

/// A configuration problem, naming where it is.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ConfigError {
    /// The file could not be read.
    #[error("cannot read {path:?}: {reason}")]
    Read {
        /// The file.
        path: PathBuf,
        /// Why (part of the message, so not also chained as a source).
        reason: std::io::Error,
    },
    /// The file is not JSON.
    #[error("{path:?} is not valid JSON: {reason}")]
    Json {
        /// The file.
        path: PathBuf,
        /// The parser's message.
        reason: String,
    },
    /// A key has a wrong value.
    #[error("{path:?}: server `{server}`: `{key}` {problem}")]
    Key {
        /// The file.
        path: PathBuf,
        /// The server.
        server: String,
        /// The key, dotted for nested keys.
        key: String,
        /// What is wrong and what would be valid.
        problem: String,
    },
    /// The top level is wrong.
    #[error("{path:?}: {problem}")]
    Shape {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        problem: String,
    },
}

/// Reads the servers of an `mcpServers` file, in name order.
///
/// # Errors
/// [`ConfigError`] naming the file, server and key at fault.
pub fn load(path: &Path) -> Result<Vec<ServerConfig>, ConfigError> {
    let text = std::fs::read_to_string(path).map_err(|reason| ConfigError::Read {
        path: path.to_owned(),
        reason,
    })?;
    parse(path, &text, &|name| std::env::var(name).ok())
}

/// The optional `"llm"` section of the same file: which model `mcp-client chat` talks to when
/// no flag or environment variable says.
///
/// ```json
/// {"llm": {"provider": "ollama", "model": "qwen3:8b", "baseUrl": "http://127.0.0.1:11434"},
///  "mcpServers": {...}}
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct LlmSection {
    /// `ollama`, `openai` or `anthropic`.
    pub provider: Option<String>,
    /// The model's name.
    pub model: Option<String>,
    /// The provider's base URL.
    pub base_url: Option<String>,
}

/// Reads the `"llm"` section of a configuration file (empty when there is none).
///
/// # Errors
/// The file cannot be read, is not JSON, or the section has unknown keys.
pub fn load_llm(path: &Path) -> Result<LlmSection, ConfigError> {
    let text = std::fs::read_to_string(path).map_err(|reason| ConfigError::Read {
        path: path.to_owned(),
        reason,
    })?;
    let root: Value = serde_json::from_str(&text).map_err(|err| ConfigError::Json {
        path: path.to_owned(),
        reason: err.to_string(),
    })?;
    match root.get("llm") {
        None => Ok(LlmSection::default()),
        Some(section) => {
            serde_json::from_value(section.clone()).map_err(|err| ConfigError::Shape {
                path: path.to_owned(),
                problem: format!("`llm`: {err}"),
            })
        }
    }
}

/// Reads an environment variable (the one place the client does).
pub fn env(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|value| !value.is_empty())
}

/// Parses `mcpServers` JSON; `lookup` resolves `${VAR}` in env values.
///
/// # Errors
/// As [`load`].
pub fn parse(
    path: &Path,
    text: &str,
    lookup: &dyn Fn(&str) -> Option<String>,
) -> Result<Vec<ServerConfig>, ConfigError> {
    let root: Value = serde_json::from_str(text).map_err(|err| ConfigError::Json {
        path: path.to_owned(),
        reason: err.to_string(),
    })?;
    let servers = root
        .get("mcpServers")
        .and_then(Value::as_object)
        .ok_or_else(|| ConfigError::Shape {
            path: path.to_owned(),
            problem: "expected an object with an `mcpServers` object of servers".into(),
        })?;
    servers
        .iter()
        .map(|(name, entry)| {
            let fail = |key: &str, problem: String| ConfigError::Key {
                path: path.to_owned(),
                server: name.clone(),
                key: key.to_owned(),
                problem,
            };
            let entry = entry
                .as_object()
                .ok_or_else(|| fail("", "must be an object".into()))?;
            server(name, entry, lookup).map_err(|(key, problem)| fail(&key, problem))
        })
        .collect()
}

type KeyError = (String, String);

fn server(
    name: &str,
    entry: &Map<String, Value>,
    lookup: &dyn Fn(&str) -> Option<String>,
) -> Result<ServerConfig, KeyError> {
    const KNOWN: [&str; 11] = [
        "command",
        "args",
        "env",
        "cwd",
        "timeouts",
        "retry",
        "parameterMappings",
        "toolPrefix",
        "disabled",
        "maxLineBytes",
        "type",
    ];
    for key in entry.keys().filter(|key| !KNOWN.contains(&key.as_str())) {
        warn!(
            server = name,
            key, "ignoring an unknown key in the server's configuration"
        );
    }
    if let Some(kind) = field::<String>(entry, "type")?
        && kind != "stdio"
    {
        return Err((
            "type".into(),
            format!("is \"{kind}\", but only \"stdio\" servers are supported"),
        ));
    }
    let command: String = field(entry, "command")?.ok_or_else(|| {
        (
            "command".to_owned(),
            "is missing: give the program to run".to_owned(),
        )
    })?;
    if command.trim().is_empty() {
        return Err(("command".into(), "is empty: give the program to run".into()));
    }
    let mut env = BTreeMap::new();
    for (key, value) in field::<BTreeMap<String, String>>(entry, "env")?.unwrap_or_default() {
        let expanded = expand(&value, lookup).map_err(|problem| (format!("env.{key}"), problem))?;
        env.insert(key, expanded);
    }
    let mut config = ServerConfig::new(ServerCommand {
        name: name.to_owned(),
        command,
        args: field(entry, "args")?.unwrap_or_default(),
        env,
        cwd: field::<PathBuf>(entry, "cwd")?,
        max_line: field::<usize>(entry, "maxLineBytes")?.unwrap_or(DEFAULT_MAX_LINE),
    });
    if let Some(timeouts) = field::<Map<String, Value>>(entry, "timeouts")? {
        if let Some(value) = timeouts.get("initialize") {
            config.init_timeout =
                duration(value).map_err(|p| ("timeouts.initialize".to_owned(), p))?;
        }
        if let Some(value) = timeouts.get("call") {
            config.call_timeout = duration(value).map_err(|p| ("timeouts.call".to_owned(), p))?;
        }
    }
    if let Some(retry) = field::<Map<String, Value>>(entry, "retry")? {
        if let Some(value) = retry.get("attempts") {
            config.retry.attempts = value
                .as_u64()
                .and_then(|n| u32::try_from(n).ok())
                .filter(|n| (1..=10).contains(n))
                .ok_or_else(|| {
                    (
                        "retry.attempts".to_owned(),
                        format!("is {value}: use a whole number from 1 to 10"),
                    )
                })?;
        }
        if let Some(value) = retry.get("baseDelay") {
            config.retry.base_delay =
                duration(value).map_err(|p| ("retry.baseDelay".to_owned(), p))?;
        }
    }
    config.parameter_mappings = field(entry, "parameterMappings")?.unwrap_or_default();
    config.tool_prefix = field(entry, "toolPrefix")?;
    config.disabled = field(entry, "disabled")?.unwrap_or(false);
    Ok(config)
}

/// Deserializes one key, with an error that names it and the expected type.
fn field<T: DeserializeOwned>(
    entry: &Map<String, Value>,
    key: &str,
) -> Result<Option<T>, KeyError> {
    match entry.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(value) => serde_json::from_value(value.clone())
            .map(Some)
            .map_err(|err| (key.to_owned(), format!("is {}: {err}", short(value)))),
    }
}

fn short(value: &Value) -> String {
    let text = value.to_string();
    if text.len() > 60 {
        format!("{}…", &text[..text.floor_char_boundary(60)])
    } else {
        text
    }
}

/// A duration, 0 to 24 h: seconds as a number (`30`, `0.5`, `"30"`) or a duration in jiff's
/// friendly or ISO 8601 format (`"500ms"`, `"30s"`, `"2m"`, `"1h 30m"`, `"PT5M"`). The one
/// duration grammar of this crate (`mcpServers`, tool definitions, `chat --timeout`).
pub(crate) fn duration(value: &Value) -> Result<Duration, String> {
    let invalid = || {
        format!(
            "is {}: use seconds (30) or a string such as \"500ms\", \"30s\" or \"2m\"",
            short(value)
        )
    };
    let seconds = match value {
        Value::Number(n) => n.as_f64().ok_or_else(invalid)?,
        Value::String(text) => {
            let text = text.trim();
            match text.parse::<f64>() {
                Ok(seconds) => seconds,
                Err(_) => text
                    .parse::<jiff::SignedDuration>()
                    .map_err(|_| invalid())?
                    .as_secs_f64(),
            }
        }
        _ => return Err(invalid()),
    };
    if !(0.0..=86_400.0).contains(&seconds) {
        return Err(format!("is {}: use 0 s to 24 h", short(value)));
    }
    Ok(Duration::from_secs_f64(seconds))
}

/// Expands `${VAR}` and `${VAR:-default}` in an env value. Errors never quote the value:
/// env values are where secrets live.
fn expand(value: &str, lookup: &dyn Fn(&str) -> Option<String>) -> Result<String, String> {
    let mut out = String::with_capacity(value.len());
    let mut rest = value;
    while let Some(start) = rest.find("${") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        let end = after
            .find('}')
            .ok_or_else(|| {
                format!(
                    "has an unclosed `${{` (character {} of the value): write ${{NAME}} or ${{NAME:-default}}",
                    value.len() - rest.len() + start + 1
                )
            })?;
        let expression = &after[..end];
        let (name, default) = match expression.split_once(":-") {
            Some((name, default)) => (name, Some(default)),
            None => (expression, None),
        };
        if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
            return Err(
                "has a `${…}` that is not a variable name: use letters, digits and _ (e.g. ${MQTT_PASSWORD})"
                    .to_owned(),
            );
        }
        match (lookup(name), default) {
            (Some(found), _) => out.push_str(&found),
            (None, Some(default)) => out.push_str(default),
            (None, None) => {
                return Err(format!(
                    "refers to ${{{name}}}, which is not set (set it, or write ${{{name}:-default}})"
                ));
            }
        }
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

#[cfg(test)]
mod duration_tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn durations_are_seconds_or_what_jiff_reads_up_to_a_day() {
        for (value, seconds) in [
            (json!(30), 30.0),
            (json!(0.5), 0.5),
            (json!("30"), 30.0),
            (json!("500ms"), 0.5),
            (json!("2m"), 120.0),
            (json!("1h 30m"), 5400.0),
            (json!("PT5M"), 300.0),
        ] {
            assert_eq!(
                duration(&value),
                Ok(Duration::from_secs_f64(seconds)),
                "{value}"
            );
        }
        assert_eq!(
            duration(&json!("soon")).unwrap_err(),
            "is \"soon\": use seconds (30) or a string such as \"500ms\", \"30s\" or \"2m\""
        );
        assert_eq!(
            duration(&json!(true)).unwrap_err(),
            "is true: use seconds (30) or a string such as \"500ms\", \"30s\" or \"2m\""
        );
        assert_eq!(
            duration(&json!("25h")).unwrap_err(),
            "is \"25h\": use 0 s to 24 h"
        );
        assert_eq!(duration(&json!(-1)).unwrap_err(), "is -1: use 0 s to 24 h");
    }
}

#[cfg(test)]
mod expand_tests {
    use super::*;

    #[test]
    fn expansion_errors_never_quote_the_value() {
        let none = |_: &str| None;
        let unclosed = expand("hunter2${OOPS", &none).unwrap_err();
        assert_eq!(
            unclosed,
            "has an unclosed `${` (character 8 of the value): write ${NAME} or ${NAME:-default}"
        );
        let odd = expand("hunter2${my secret}", &none).unwrap_err();
        assert_eq!(
            odd,
            "has a `${…}` that is not a variable name: use letters, digits and _ (e.g. ${MQTT_PASSWORD})"
        );
        assert!(!unclosed.contains("hunter2") && !odd.contains("my secret"));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_str(text: &str) -> Result<Vec<ServerConfig>, ConfigError> {
        let vars = |name: &str| match name {
            "TOKEN" => Some("s3cret".to_owned()),
            _ => None,
        };
        parse(Path::new("servers.json"), text, &vars)
    }

    #[test]
    fn host_format_and_our_keys_parse() {
        let servers = parse_str(
            r#"{"mcpServers": {
                "zwave": {"command": "zwave-mcp-server", "args": ["--demo"], "env": {"A": "x-${TOKEN}-y", "B": "${MISSING:-fallback}"},
                          "timeouts": {"initialize": "90s", "call": 5}, "retry": {"attempts": 2, "baseDelay": "500ms"},
                          "parameterMappings": {"t": {"a_b": "aB"}}, "toolPrefix": "home", "disabled": true, "extra": 1},
                "other": {"command": "npx", "args": ["-y", "pkg"]}
            }}"#,
        )
        .unwrap();
        assert_eq!(servers.len(), 2);
        let zwave = servers.iter().find(|s| s.name() == "zwave").unwrap();
        assert_eq!(zwave.command.env["A"], "x-s3cret-y");
        assert_eq!(zwave.command.env["B"], "fallback");
        assert_eq!(zwave.init_timeout, Duration::from_secs(90));
        assert_eq!(zwave.call_timeout, Duration::from_secs(5));
        assert_eq!(
            zwave.retry,
            RetryPolicy {
                attempts: 2,
                base_delay: Duration::from_millis(500)
            }
        );
        assert_eq!(zwave.parameter_mappings["t"]["a_b"], "aB");
        assert_eq!(zwave.tool_prefix.as_deref(), Some("home"));
        assert!(zwave.disabled);
        let other = servers.iter().find(|s| s.name() == "other").unwrap();
        assert_eq!(other.init_timeout, DEFAULT_INIT_TIMEOUT);
        assert_eq!(other.retry, RetryPolicy::default());
    }

    #[test]
    fn errors_name_the_file_server_and_key() {
        let cases = [
            (
                r#"{"mcpServers": {"s": {"args": []}}}"#,
                "\"servers.json\": server `s`: `command` is missing: give the program to run",
            ),
            (
                r#"{"mcpServers": {"s": {"command": "x", "args": "--demo"}}}"#,
                "\"servers.json\": server `s`: `args` is \"--demo\": invalid type: string \"--demo\", expected a sequence",
            ),
            (
                r#"{"mcpServers": {"s": {"command": "x", "env": {"K": "${NOPE}"}}}}"#,
                "\"servers.json\": server `s`: `env.K` refers to ${NOPE}, which is not set (set it, or write ${NOPE:-default})",
            ),
            (
                r#"{"mcpServers": {"s": {"command": "x", "timeouts": {"call": "soon"}}}}"#,
                "\"servers.json\": server `s`: `timeouts.call` is \"soon\": use seconds (30) or a string such as \"500ms\", \"30s\" or \"2m\"",
            ),
            (
                r#"{"mcpServers": {"s": {"command": "x", "retry": {"attempts": 0}}}}"#,
                "\"servers.json\": server `s`: `retry.attempts` is 0: use a whole number from 1 to 10",
            ),
            (
                r#"{"mcpServers": {"s": {"command": "x", "type": "http"}}}"#,
                "\"servers.json\": server `s`: `type` is \"http\", but only \"stdio\" servers are supported",
            ),
            (
                r#"{"servers": {}}"#,
                "\"servers.json\": expected an object with an `mcpServers` object of servers",
            ),
        ];
        for (text, expected) in cases {
            assert_eq!(parse_str(text).unwrap_err().to_string(), expected);
        }
        let err = parse_str("{not json").unwrap_err().to_string();
        assert!(
            err.starts_with("\"servers.json\" is not valid JSON: key must be a string"),
            "{err}"
        );
    }
}
