//! One server's entry as the file has it, typed: every key optional and `null` as absent,
//! durations and attempts checked as they are read, then turned into a [`ServerConfig`]:
//! `${VAR}` expanded in `command`, `args`, `env` and `cwd` (a program to start), or in `url`
//! and each of `headers` (a remote server), and a relative `command` path or `cwd` taken from
//! the file's folder.

use std::{
    collections::BTreeMap,
    path::{Path, PathBuf},
    time::Duration,
};

use serde_json::Value;

use super::{
    ServerConfig,
    error::KeyError,
    remote::{self, Transport},
    values::{duration, expand},
};
use crate::transport::{DEFAULT_MAX_LINE, ServerCommand};

/// One server of `mcpServers` as the file has it; every key optional, `null` as absent.
#[derive(Debug, serde::Deserialize)]
#[serde(
    rename_all = "camelCase",
    expecting = "an object of settings with a `command` or a `url`"
)]
pub(super) struct Entry {
    #[serde(rename = "type")]
    kind: Option<String>,
    command: Option<String>,
    url: Option<String>,
    headers: Option<BTreeMap<String, String>>,
    oauth: Option<remote::OAuthEntry>,
    args: Option<Vec<String>>,
    env: Option<BTreeMap<String, String>>,
    cwd: Option<PathBuf>,
    max_line_bytes: Option<usize>,
    timeouts: Option<Timeouts>,
    retry: Option<Retry>,
    parameter_mappings: Option<BTreeMap<String, BTreeMap<String, String>>>,
    tool_prefix: Option<String>,
    disabled: Option<bool>,
    protocol_version: Option<String>,
}

#[derive(Debug, serde::Deserialize)]
#[serde(
    rename_all = "camelCase",
    expecting = "an object with `initialize` and/or `call`"
)]
struct Timeouts {
    initialize: Option<FileDuration>,
    call: Option<FileDuration>,
}

#[derive(Debug, serde::Deserialize)]
#[serde(
    rename_all = "camelCase",
    expecting = "an object with `attempts` and/or `baseDelay`"
)]
struct Retry {
    attempts: Option<Attempts>,
    base_delay: Option<FileDuration>,
}

/// A duration as [`duration`] reads it.
#[derive(Debug)]
struct FileDuration(Duration);

impl<'de> serde::Deserialize<'de> for FileDuration {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let value = Value::deserialize(deserializer)?;
        duration(&value).map(Self).map_err(serde::de::Error::custom)
    }
}

/// Connection attempts: a whole number from 1 to 10.
#[derive(Debug)]
struct Attempts(u32);

impl<'de> serde::Deserialize<'de> for Attempts {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let value = Value::deserialize(deserializer)?;
        value
            .as_u64()
            .and_then(|n| u32::try_from(n).ok())
            .filter(|n| (1..=10).contains(n))
            .map(Self)
            .ok_or_else(|| serde::de::Error::custom("use a whole number from 1 to 10"))
    }
}

impl Entry {
    /// The server `name` as the host runs it; `folder` is the (absolute) folder of the file,
    /// which relative paths start from.
    pub(super) fn into_config(
        self,
        name: &str,
        lookup: &dyn Fn(&str) -> Option<String>,
        folder: &Path,
    ) -> Result<ServerConfig, KeyError> {
        let transport = remote::transport(
            self.kind.as_deref(),
            self.command.is_some(),
            self.url.is_some(),
        )?;
        let mut config = match transport {
            Transport::Http => {
                for (key, given) in [
                    ("args", self.args.is_some()),
                    ("env", self.env.is_some()),
                    ("cwd", self.cwd.is_some()),
                ] {
                    if given {
                        return Err((key.to_owned(), "is for a program started with `command`; a remote server (`url`) takes `headers`".to_owned()));
                    }
                }
                let url = self.url.unwrap_or_default();
                let headers = self.headers.unwrap_or_default();
                let mut endpoint =
                    remote::endpoint(name, &url, headers, self.max_line_bytes, lookup)?;
                if let Some(oauth) = self.oauth {
                    endpoint.oauth = Some(remote::oauth(oauth, &endpoint, lookup)?);
                }
                ServerConfig::http(endpoint)
            }
            Transport::Stdio => {
                for (key, given) in [
                    ("headers", self.headers.is_some()),
                    ("oauth", self.oauth.is_some()),
                ] {
                    if given {
                        return Err((key.to_owned(), "is for a remote server (`url`); a program started with `command` takes `env`".to_owned()));
                    }
                }
                ServerConfig::new(self.command_of(name, lookup, folder)?)
            }
        };
        if let Some(timeouts) = self.timeouts {
            if let Some(FileDuration(timeout)) = timeouts.initialize {
                config.init_timeout = timeout;
            }
            if let Some(FileDuration(timeout)) = timeouts.call {
                config.call_timeout = timeout;
            }
        }
        if let Some(retry) = self.retry {
            if let Some(Attempts(attempts)) = retry.attempts {
                config.retry.attempts = attempts;
            }
            if let Some(FileDuration(delay)) = retry.base_delay {
                config.retry.base_delay = delay;
            }
        }
        config.parameter_mappings = self.parameter_mappings.unwrap_or_default();
        config.tool_prefix = self.tool_prefix;
        config.disabled = self.disabled.unwrap_or(false);
        if let Some(version) = self.protocol_version {
            config.protocol_version = Some(
                crate::connection::lifecycle::parse(&version)
                    .map_err(|problem| ("protocolVersion".to_owned(), problem))?,
            );
        }
        Ok(config)
    }

    /// The program to start, its `${VAR}`s expanded and its relative paths resolved.
    fn command_of(
        &self,
        name: &str,
        lookup: &dyn Fn(&str) -> Option<String>,
        folder: &Path,
    ) -> Result<ServerCommand, KeyError> {
        let command = self.command.as_deref().ok_or_else(|| {
            (
                "command".to_owned(),
                "is missing: give the program to run".to_owned(),
            )
        })?;
        let command = expand(command, lookup).map_err(|problem| ("command".to_owned(), problem))?;
        if command.trim().is_empty() {
            return Err(("command".into(), "is empty: give the program to run".into()));
        }
        let args = self
            .args
            .iter()
            .flatten()
            .enumerate()
            .map(|(n, arg)| expand(arg, lookup).map_err(|problem| (format!("args.{n}"), problem)))
            .collect::<Result<Vec<_>, _>>()?;
        let cwd: Option<PathBuf> = match self.cwd.clone() {
            Some(cwd) => {
                let cwd = match cwd.to_str() {
                    Some(text) => PathBuf::from(
                        expand(text, lookup).map_err(|problem| ("cwd".to_owned(), problem))?,
                    ),
                    None => cwd,
                };
                Some(folder.join(cwd).components().collect())
            }
            None => None,
        };
        // `./server`, `bin/server`: from `cwd` when given (as the system would start it there),
        // else from the file's folder, never from wherever the host happens to run. A bare
        // name is looked up on PATH.
        let command = if command.contains('/') && Path::new(&command).is_relative() {
            let path: PathBuf = cwd
                .as_deref()
                .unwrap_or(folder)
                .join(&command)
                .components()
                .collect();
            path.to_string_lossy().into_owned()
        } else {
            command
        };
        let mut env = BTreeMap::new();
        for (key, value) in self.env.iter().flatten() {
            let expanded =
                expand(value, lookup).map_err(|problem| (format!("env.{key}"), problem))?;
            env.insert(key.clone(), expanded);
        }
        Ok(ServerCommand {
            name: name.to_owned(),
            command,
            args,
            env,
            cwd,
            max_line: self.max_line_bytes.unwrap_or(DEFAULT_MAX_LINE),
        })
    }
}
