//! What the binary runs, wired from the configuration: the MCP server on stdio against a real
//! home or the demo home, or only the simulated gateway. The one module that knows every
//! layer (config, transport, mcp, network, sim); none of them knows it.
//!
//! | module | owns |
//! |---|---|
//! | `serve` | the MCP session: the backend connected, the server built, stdio served to its end |
//! | `demo` | `--demo`: the simulated home, and its failure to appear |
//! | `simulate` | the `simulate` command: the simulated gateway or zwave-js-server alone |

mod demo;
mod serve;
mod simulate;

use crate::config::{Command, Config};

/// Runs what `config` asks for: the MCP server on stdio (default), against the embedded demo
/// home with `--demo`, or only the simulated gateway with `simulate`.
///
/// # Errors
/// Start-up failures (bad configuration, the demo broker not starting, stdio unusable).
pub async fn run(config: Config) -> anyhow::Result<()> {
    match config.command {
        Some(Command::Simulate {
            topic_type,
            payload_type,
            nodes,
            storm,
            ref stuck,
            ref supervised,
            ref zwave_js_server,
        }) => {
            let devices = simulate::SimDevices {
                stuck: stuck.clone(),
                supervised: supervised.clone(),
            };
            match zwave_js_server {
                Some(address) => simulate::simulate_zwave_js_server(address, nodes, devices).await,
                None => {
                    simulate::simulate(&config, topic_type, payload_type, nodes, storm, devices)
                        .await
                }
            }
        }
        None => serve::serve(config).await,
    }
}
