//! The demo and simulation flags: `--demo` (the server against a built-in simulated home) and
//! the `simulate` command (only the simulated gateway or zwave-js-server). The one part of the
//! configuration that knows [`crate::sim`]; the production flags never need it.

use crate::sim::{
    MAX_STORM_RATE, PayloadType, TopicType,
    home::{MAX_NODES, MIN_NODES},
};

/// The built-in simulated home.
#[derive(Debug, Clone, clap::Args)]
#[command(next_help_heading = "Demo")]
pub struct DemoFlags {
    /// Run against a built-in simulated home: an embedded MQTT broker on a free loopback port
    /// plus a simulated Z-Wave JS UI gateway (the MQTT options above are then ignored).
    #[arg(long, env = "ZWAVE_MCP_DEMO")]
    pub demo: bool,

    /// With --demo: which way the server reaches the demo home: Z-Wave JS UI's MQTT gateway
    /// on an embedded broker, or a simulated zwave-js-server on a free loopback port.
    #[arg(
        long,
        env = "ZWAVE_MCP_DEMO_BACKEND",
        requires = "demo",
        value_enum,
        default_value_t
    )]
    pub demo_backend: DemoBackend,

    /// With --demo: a generated home of this many nodes (2–232, the controller included;
    /// plugs, dimmers, multisensors, switches and meters) instead of the small demo home.
    #[arg(long, env = "ZWAVE_MCP_DEMO_NODES", requires = "demo", value_name = "N", value_parser = home_size)]
    pub demo_nodes: Option<u16>,
}

/// The way to the demo home.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum DemoBackend {
    /// Z-Wave JS UI's MQTT gateway, simulated, on an embedded broker.
    #[default]
    Mqtt,
    /// zwave-js-server's WebSocket API, simulated.
    // `zwave-js` and `ws` were its names before issue 32: command lines using them still work.
    #[value(name = "zwave-js-server", aliases = ["zwave-js", "ws"])]
    ZwaveJsServer,
}

/// Other things the binary can run.
#[derive(Debug, Clone, clap::Subcommand)]
pub enum Command {
    /// Run only the simulated Z-Wave JS UI gateway (the demo home) against the broker given by
    /// --mqtt-url, or with --zwave-js-server a simulated zwave-js-server, until interrupted; for trying MCP
    /// hosts or other tools against a real broker or WebSocket client.
    Simulate {
        /// Value topic names, as Z-Wave JS UI's gateway "type" (0 or 1 are accepted too).
        #[arg(long, value_enum, default_value_t)]
        topic_type: TopicType,
        /// Value payloads, as Z-Wave JS UI's "payloadType" (0, 1 or 2 are accepted too).
        #[arg(long, value_enum, default_value_t)]
        payload_type: PayloadType,
        /// Serve a generated home of this many nodes (2–232, the controller included) instead
        /// of the small demo home.
        #[arg(long, value_name = "N", value_parser = home_size)]
        nodes: Option<u16>,
        /// Once the home is published, report this many new sensor and meter readings per
        /// second (round robin over every such value), to measure what a busy network costs.
        #[arg(long, value_name = "PER_SECOND",
              value_parser = clap::value_parser!(u32).range(1..=i64::from(MAX_STORM_RATE)))]
        storm: Option<u32>,
        /// Nodes that acknowledge every Set and ignore it, as a stuck relay or a dead bulb
        /// behind a live module does (repeat, or comma-separated).
        #[arg(long, value_name = "NODE", value_delimiter = ',')]
        stuck: Vec<u16>,
        /// Nodes with Supervision: a Set is answered 255 once the device did it (repeat, or
        /// comma-separated).
        #[arg(long, value_name = "NODE", value_delimiter = ',')]
        supervised: Vec<u16>,
        /// Serve the home as zwave-js-server does, over WebSocket on this address (e.g.
        /// 127.0.0.1:3000), instead of as Z-Wave JS UI's gateway on the MQTT broker.
        // `--ws` was its name before issue 32: command lines using it still work.
        #[arg(long, alias = "ws", value_name = "ADDRESS", conflicts_with_all = ["topic_type", "payload_type", "storm"])]
        zwave_js_server: Option<String>,
    },
}

/// A node count for a generated home: the Z-Wave range, controller included.
fn home_size(text: &str) -> Result<u16, String> {
    let valid = || {
        format!(
            "use {MIN_NODES} to {MAX_NODES} (a Z-Wave network holds at most {MAX_NODES} nodes, the controller included)"
        )
    };
    let nodes: u16 = text
        .trim()
        .parse()
        .map_err(|_| format!("`{text}` is not a node count: {}", valid()))?;
    if (MIN_NODES..=MAX_NODES).contains(&nodes) {
        Ok(nodes)
    } else {
        Err(format!("{nodes} nodes is out of range: {}", valid()))
    }
}

#[cfg(test)]
mod tests {
    use clap::Parser as _;

    use super::*;
    use crate::config::Config;

    #[test]
    fn simulate_takes_z_wave_js_ui_numbers_or_names_for_topic_and_payload_types() {
        for (topic, payload, expected) in [
            ("1", "2", (TopicType::Named, PayloadType::Raw)),
            (
                "value-id",
                "entire-value-id",
                (TopicType::ValueId, PayloadType::EntireValueId),
            ),
        ] {
            let config = Config::try_parse_from([
                "zwave-mcp-server",
                "simulate",
                "--topic-type",
                topic,
                "--payload-type",
                payload,
            ])
            .unwrap();
            let Some(Command::Simulate {
                topic_type,
                payload_type,
                ..
            }) = config.command
            else {
                panic!("not simulate: {:?}", config.command);
            };
            assert_eq!((topic_type, payload_type), expected);
        }
    }

    #[test]
    fn the_websocket_backend_has_one_name_and_its_old_names_still_parse() {
        for value in ["zwave-js-server", "zwave-js", "ws"] {
            let config =
                Config::try_parse_from(["zwave-mcp-server", "--demo", "--demo-backend", value])
                    .unwrap();
            assert_eq!(
                config.demo.demo_backend,
                DemoBackend::ZwaveJsServer,
                "{value}"
            );
        }
        for flag in ["--zwave-js-server", "--ws"] {
            let config =
                Config::try_parse_from(["zwave-mcp-server", "simulate", flag, "127.0.0.1:0"])
                    .unwrap();
            let Some(Command::Simulate {
                zwave_js_server, ..
            }) = config.command
            else {
                panic!("not simulate: {:?}", config.command);
            };
            assert_eq!(zwave_js_server.as_deref(), Some("127.0.0.1:0"), "{flag}");
        }
        let help = <Config as clap::CommandFactory>::command()
            .render_long_help()
            .to_string();
        assert!(help.contains("zwave-js-server"), "{help}");
        assert!(
            !help.contains("- zwave-js:") && !help.contains("- ws:"),
            "{help}"
        );
    }
}
