//! From a configuration file to servers: the file read up to [`MAX_CONFIG_BYTES`], the
//! `mcpServers` object typed by serde, an error naming the file, the server and the key path
//! with the offending value, and the keys this client does not know, warned about and ignored.

use std::{
    collections::BTreeMap,
    io::Read as _,
    path::{Path, PathBuf},
};

use serde_json::Value;
use tracing::warn;

use super::{entry::Entry, error::ConfigError, server::ServerConfig, values::short};

/// Largest configuration file read: a host's file of servers is a few KiB; anything near this
/// is the wrong file, and reading it whole would hold it (and its parsed tree) in memory.
pub const MAX_CONFIG_BYTES: u64 = 1024 * 1024;

/// Reads the servers of an `mcpServers` file, in name order.
///
/// # Errors
/// [`ConfigError`] naming the file, server and key at fault.
pub fn load(path: &Path) -> Result<Vec<ServerConfig>, ConfigError> {
    let text = read(path)?;
    parse(path, &text, &|name| std::env::var(name).ok())
}

/// The text of the configuration file `path`, at most [`MAX_CONFIG_BYTES`] of it: a larger
/// file is refused by its size before anything is read, and a file whose size is unknown (a
/// pipe) is read no further than one byte past the limit.
///
/// # Errors
/// [`ConfigError::Read`], or [`ConfigError::TooLarge`] naming the file, its size and the cap.
pub(super) fn read(path: &Path) -> Result<String, ConfigError> {
    let failed = |reason| ConfigError::Read {
        path: path.to_owned(),
        reason,
    };
    let file = std::fs::File::open(path).map_err(failed)?;
    let too_large = |size| ConfigError::TooLarge {
        path: path.to_owned(),
        size,
        cap: MAX_CONFIG_BYTES,
    };
    if let Ok(meta) = file.metadata()
        && meta.is_file()
        && meta.len() > MAX_CONFIG_BYTES
    {
        return Err(too_large(Some(meta.len())));
    }
    let mut text = String::new();
    file.take(MAX_CONFIG_BYTES + 1)
        .read_to_string(&mut text)
        .map_err(failed)?;
    if text.len() as u64 > MAX_CONFIG_BYTES {
        return Err(too_large(None));
    }
    Ok(text)
}

/// The folder relative paths of the file `path` start from, made absolute (a server may be
/// started in another `cwd`).
fn folder_of(path: &Path) -> PathBuf {
    let folder = path
        .parent()
        .filter(|parent| !parent.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    std::path::absolute(folder).unwrap_or_else(|_| folder.to_owned())
}

/// Parses `mcpServers` JSON; `lookup` resolves `${VAR}` in `command`, `args`, `env` and
/// `cwd`, and a relative `command` path (`bin/server`) or `cwd` is taken from the folder of
/// `path`. Keys this client does not know are logged as warnings and otherwise ignored.
///
/// # Errors
/// As [`load`].
pub fn parse(
    path: &Path,
    text: &str,
    lookup: &dyn Fn(&str) -> Option<String>,
) -> Result<Vec<ServerConfig>, ConfigError> {
    let (servers, unknown) = parse_with_unknown(path, text, lookup)?;
    for (server, key) in unknown {
        warn!(
            server,
            key, "ignoring an unknown key in the server's configuration"
        );
    }
    Ok(servers)
}

/// A key this client does not know: (server, dotted path below the server).
type UnknownKey = (String, String);

/// [`parse`], returning the unknown keys instead of logging them.
fn parse_with_unknown(
    path: &Path,
    text: &str,
    lookup: &dyn Fn(&str) -> Option<String>,
) -> Result<(Vec<ServerConfig>, Vec<UnknownKey>), ConfigError> {
    let root: Value = serde_json::from_str(text).map_err(|err| ConfigError::Json {
        path: path.to_owned(),
        reason: err.to_string(),
    })?;
    let servers = root
        .get("mcpServers")
        .filter(|servers| servers.is_object())
        .ok_or_else(|| ConfigError::Shape {
            path: path.to_owned(),
            problem: "expected an object with an `mcpServers` object of servers".into(),
        })?;
    let fail = |server: &str, key: &str, problem: String| ConfigError::Key {
        path: path.to_owned(),
        server: server.to_owned(),
        key: key.to_owned(),
        problem,
    };
    let mut track = serde_path_to_error::Track::new();
    let mut unknown = Vec::new();
    let entries: Result<BTreeMap<String, Entry>, _> = serde_ignored::deserialize(
        serde_path_to_error::Deserializer::new(servers, &mut track),
        |ignored| unknown.push(segments(&ignored)),
    );
    let entries = entries.map_err(|err| {
        let at = track.path();
        let mut segments = at.iter().map(ToString::to_string);
        let server = segments.next().unwrap_or_default();
        let key: Vec<String> = segments.collect();
        match pointer(servers, &at) {
            Some(value) if !key.is_empty() => fail(
                &server,
                &key.join("."),
                format!("is {}: {err}", short(value)),
            ),
            _ => ConfigError::Entry {
                path: path.to_owned(),
                server,
                problem: err.to_string(),
            },
        }
    })?;
    let unknown = unknown
        .into_iter()
        .filter_map(|mut path| {
            let server = (!path.is_empty()).then(|| path.remove(0))?;
            Some((server, path.join(".")))
        })
        .collect();
    let folder = folder_of(path);
    let servers = entries
        .into_iter()
        .map(|(name, entry)| {
            entry
                .into_config(&name, lookup, &folder)
                .map_err(|(key, problem)| fail(&name, &key, problem))
        })
        .collect::<Result<_, _>>()?;
    Ok((servers, unknown))
}

/// The keys and indices of an ignored key's path, from the top (`Option`s and newtypes, which
/// add no level in the file, left out).
fn segments(path: &serde_ignored::Path<'_>) -> Vec<String> {
    use serde_ignored::Path;
    match path {
        Path::Root => Vec::new(),
        Path::Map { parent, key } => {
            let mut above = segments(parent);
            above.push(key.clone());
            above
        }
        Path::Seq { parent, index } => {
            let mut above = segments(parent);
            above.push(index.to_string());
            above
        }
        Path::Some { parent }
        | Path::NewtypeStruct { parent }
        | Path::NewtypeVariant { parent } => segments(parent),
    }
}

/// The value at `path` below `root`, to show it in an error.
fn pointer<'a>(root: &'a Value, path: &serde_path_to_error::Path) -> Option<&'a Value> {
    path.iter().try_fold(root, |value, segment| match segment {
        serde_path_to_error::Segment::Map { key } => value.get(key),
        serde_path_to_error::Segment::Seq { index } => value.get(index),
        _ => Some(value),
    })
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::connection::{
        RetryPolicy,
        config::{DEFAULT_CALL_TIMEOUT, DEFAULT_INIT_TIMEOUT},
    };

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
        assert_eq!(zwave.command().unwrap().env["A"], "x-s3cret-y");
        assert_eq!(zwave.command().unwrap().env["B"], "fallback");
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
        assert_eq!(other.command().unwrap().args, ["-y", "pkg"]);
        assert_eq!(other.init_timeout, DEFAULT_INIT_TIMEOUT);
        assert_eq!(other.retry, RetryPolicy::default());
    }

    #[test]
    fn unknown_keys_are_named_with_their_server_and_path_and_nulls_are_absent() {
        let (servers, unknown) = parse_with_unknown(
            Path::new("servers.json"),
            r#"{"llm": {"model": "m"}, "hostSetting": true, "mcpServers": {
                "a": {"command": "x", "autoApprove": ["t"], "timeouts": {"connect": 5, "call": null}, "env": null},
                "b": {"command": "y", "retry": {"jitter": 0.5}}
            }}"#,
            &|_| None,
        )
        .unwrap();
        assert_eq!(
            unknown,
            [
                ("a".to_owned(), "autoApprove".to_owned()),
                ("a".to_owned(), "timeouts.connect".to_owned()),
                ("b".to_owned(), "retry.jitter".to_owned()),
            ]
        );
        assert_eq!(servers[0].call_timeout, DEFAULT_CALL_TIMEOUT);
        assert!(servers[0].command().unwrap().env.is_empty());
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
                "\"servers.json\": server `s`: `timeouts.call` is \"soon\": use a number of seconds (30) or a duration such as 500ms, 30s, 2m or 1h 30m",
            ),
            (
                r#"{"mcpServers": {"s": {"command": "x", "retry": {"attempts": 0}}}}"#,
                "\"servers.json\": server `s`: `retry.attempts` is 0: use a whole number from 1 to 10",
            ),
            (
                r#"{"mcpServers": {"s": {"command": "x", "type": "http"}}}"#,
                "\"servers.json\": server `s`: `type` is \"http\" (a remote server), but the entry gives a `command`: give the server's `url` instead, or write \"type\": \"stdio\"",
            ),
            (
                r#"{"mcpServers": {"s": {"command": "x", "timeouts": {"initialize": "25h"}}}}"#,
                "\"servers.json\": server `s`: `timeouts.initialize` is \"25h\": use 0s to 24h",
            ),
            (
                r#"{"mcpServers": {"s": {"command": "x", "parameterMappings": {"t": {"a": 1}}}}}"#,
                "\"servers.json\": server `s`: `parameterMappings.t.a` is 1: invalid type: integer `1`, expected a string",
            ),
            (
                r#"{"mcpServers": {"s": "x"}}"#,
                "\"servers.json\": server `s`: invalid type: string \"x\", expected an object of settings with a `command` or a `url`",
            ),
            (
                r#"{"mcpServers": {"s": {"command": "x", "timeouts": 5}}}"#,
                "\"servers.json\": server `s`: `timeouts` is 5: invalid type: integer `5`, expected an object with `initialize` and/or `call`",
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

    #[test]
    fn command_args_and_cwd_are_expanded_and_relative_paths_start_at_the_files_folder() {
        let vars = |name: &str| (name == "TOKEN").then(|| "s3cret".to_owned());
        let servers = parse(
            Path::new("/etc/mcp/servers.json"),
            r#"{"mcpServers": {
                "a": {"command": "${TOKEN}-server", "args": ["--token", "${TOKEN}", "${NONE:-x}"]},
                "b": {"command": "bin/server", "args": ["bin/data"]},
                "c": {"command": "./server", "cwd": "srv"},
                "d": {"command": "/opt/server", "cwd": "/abs"},
                "e": {"command": "npx", "cwd": "${NONE:-/tmp}"}
            }}"#,
            &vars,
        )
        .unwrap();
        let get = |name: &str| {
            servers
                .iter()
                .find(|s| s.name() == name)
                .unwrap()
                .command()
                .unwrap()
        };
        assert_eq!(get("a").command, "s3cret-server");
        assert_eq!(get("a").args, ["--token", "s3cret", "x"]);
        // A path in `command` is the file's; an argument is the server's to read.
        assert_eq!(get("b").command, "/etc/mcp/bin/server");
        assert_eq!(get("b").args, ["bin/data"]);
        assert_eq!(get("c").cwd.as_deref(), Some(Path::new("/etc/mcp/srv")));
        assert_eq!(get("c").command, "/etc/mcp/srv/server");
        assert_eq!(get("d").command, "/opt/server");
        assert_eq!(get("d").cwd.as_deref(), Some(Path::new("/abs")));
        assert_eq!(get("e").command, "npx");
        assert_eq!(get("e").cwd.as_deref(), Some(Path::new("/tmp")));
    }

    #[test]
    fn expansion_errors_name_the_key_where_it_failed() {
        let cases = [
            (
                r#"{"mcpServers": {"s": {"command": "${SERVER_BIN}"}}}"#,
                "\"servers.json\": server `s`: `command` refers to ${SERVER_BIN}, which is not set (set it, or write ${SERVER_BIN:-default})",
            ),
            (
                r#"{"mcpServers": {"s": {"command": "x", "args": ["--db", "${DB:?point DB at the database file}"]}}}"#,
                "\"servers.json\": server `s`: `args.1` refers to ${DB}, which is not set: point DB at the database file",
            ),
            (
                r#"{"mcpServers": {"s": {"command": "x", "cwd": "${HOME_DIR}/srv"}}}"#,
                "\"servers.json\": server `s`: `cwd` refers to ${HOME_DIR}, which is not set (set it, or write ${HOME_DIR:-default})",
            ),
            (
                r#"{"mcpServers": {"s": {"command": "x", "env": {"K": "${NOPE:?ask the admin}"}}}}"#,
                "\"servers.json\": server `s`: `env.K` refers to ${NOPE}, which is not set: ask the admin",
            ),
        ];
        for (text, expected) in cases {
            assert_eq!(parse_str(text).unwrap_err().to_string(), expected);
        }
    }

    #[test]
    fn a_file_without_a_size_is_read_no_further_than_the_cap() {
        // Endless, and not a regular file: only the bounded read stops it.
        let err = read(Path::new("/dev/zero")).unwrap_err();
        assert!(
            matches!(err, ConfigError::TooLarge { size: None, .. }),
            "{err}"
        );
        assert_eq!(
            err.to_string(),
            "\"/dev/zero\" is more than the 1048576 bytes (1.0 MiB) a configuration file may be: is it the right file?"
        );
    }
}
