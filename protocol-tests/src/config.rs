//! `mcp-conformance`'s flags, parsed once by its `main` and turned into the run's [`Options`].

use clap::Parser;

use crate::options::{Options, Protocol, ToolCall};

/// Checks an MCP stdio server against the spec and prints one line per check.
#[derive(Debug, Parser)]
#[command(name = "mcp-conformance", version)]
pub struct Config {
    /// Print the report as JSON.
    #[arg(long)]
    pub json: bool,
    /// The protocol revisions to check: 2025-11-25 (the initialize handshake and the versions
    /// before it), 2026-07-28 (stateless: server/discover, `_meta` on every request), or both
    /// (2026-07-28 only where the server offers it).
    #[arg(
        long,
        env = "MCP_CONFORMANCE_PROTOCOL",
        value_enum,
        default_value = "both",
        value_name = "REVISION"
    )]
    pub protocol: Protocol,
    /// At 2026-07-28: a call that answers `input_required` (e.g. `control_zwave_device
    /// '{"deviceName":"Front Door Lock","action":"unlock"}'`), for the round trip, tampered
    /// and replayed state checks. The checker answers its questions: accepting with the form's
    /// defaults (a required yes/no field: yes), and declining. Without it, a call of the
    /// checker's own that asked is used.
    #[arg(long, num_args = 2, value_names = ["TOOL", "JSON_ARGS"])]
    pub input_required_call: Option<Vec<String>>,
    /// The server's command line, after `--`.
    #[arg(required = true, last = true)]
    pub command: Vec<String>,
}

impl Config {
    /// The run's options.
    ///
    /// # Errors
    /// A usage error when `--input-required-call`'s arguments are not a JSON object, or when
    /// it is given without 2026-07-28 to check.
    pub fn options(&self) -> Result<Options, clap::Error> {
        let usage = |message: String| {
            <Self as clap::CommandFactory>::command()
                .error(clap::error::ErrorKind::ValueValidation, message)
        };
        let input_required_call = match self.input_required_call.as_deref() {
            Some([tool, arguments]) => Some(ToolCall::parse(tool, arguments).map_err(usage)?),
            Some(_) | None => None,
        };
        if input_required_call.is_some() && !self.protocol.has_stateless() {
            return Err(usage(
                "--input-required-call is a 2026-07-28 check: use --protocol 2026-07-28 or both"
                    .to_owned(),
            ));
        }
        Ok(Options {
            protocol: self.protocol,
            input_required_call,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn options(args: &[&str]) -> Result<Options, String> {
        let config = Config::try_parse_from(
            ["mcp-conformance"]
                .iter()
                .chain(args)
                .chain(&["--", "server"]),
        )
        .map_err(|err| err.to_string())?;
        config.options().map_err(|err| err.to_string())
    }

    #[test]
    fn both_revisions_are_the_default_and_each_can_be_chosen() {
        assert_eq!(options(&[]).unwrap().protocol, Protocol::Both);
        for (flag, protocol) in [
            ("2025-11-25", Protocol::Initialize),
            ("2026-07-28", Protocol::Stateless),
            ("both", Protocol::Both),
        ] {
            assert_eq!(options(&["--protocol", flag]).unwrap().protocol, protocol);
        }
        assert!(
            options(&["--protocol", "2026-01-01"])
                .unwrap_err()
                .contains("invalid value '2026-01-01' for '--protocol <REVISION>'")
        );
    }

    #[test]
    fn the_input_required_call_is_a_tool_and_an_object_of_arguments() {
        let call = options(&["--input-required-call", "lock", r#"{"action":"unlock"}"#])
            .unwrap()
            .input_required_call
            .unwrap();
        assert_eq!(call.to_string(), r#"`lock` {"action":"unlock"}"#);
        let err = options(&["--input-required-call", "lock", "[]"]).unwrap_err();
        assert!(
            err.contains("the arguments of `lock` must be a JSON object, got an array"),
            "{err}"
        );
        let err = options(&[
            "--protocol",
            "2025-11-25",
            "--input-required-call",
            "lock",
            "{}",
        ])
        .unwrap_err();
        assert!(
            err.contains(
                "--input-required-call is a 2026-07-28 check: use --protocol 2026-07-28 or both"
            ),
            "{err}"
        );
    }
}
