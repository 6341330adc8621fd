//! The demo and test world: an embedded MQTT broker and a simulated Z-Wave JS UI gateway,
//! and a simulated zwave-js-server.
//!
//! | module | owns |
//! |---|---|
//! | `broker` | [`EmbeddedBroker`]: rumqttd on a free loopback port |
//! | `gateway` | [`SimGateway`]: starting the simulated gateway, and its knobs |
//! | `state` | what the handle, the API and the storm share: settings, home, knobs, requests |
//! | `api` | what the simulated gateway publishes and how it answers API requests |
//! | `change` | finding a node of the home and setting a value: the `Change` both servers publish |
//! | `device` | how the simulated devices take a write, whichever server carries it |
//! | `health` | the gateway's `pingNode`, and the statistics it publishes as commands count |
//! | `upkeep` | re-interviews, lifeline health checks and route rebuilds as zwave-js runs them |
//! | `topics` | its own topic naming, from the captures (shares no code with `network::topics`) |
//! | `home`, `node` | the demo home and generated homes of any size, as `getNodes` shows them |
//! | `statistics` | the driver's communication statistics: recorded at start, counted per command |
//! | `storm` | [`Storm`]: a steady stream of new readings |
//! | `zwave_js_server` | [`SimZwaveJsServer`]: the same home over zwave-js-server's WebSocket API |

mod api;
mod broker;
mod change;
mod device;
mod gateway;
mod health;
pub mod home;
mod node;
mod state;
mod statistics;
mod storm;
pub mod topics;
mod upkeep;
mod zwave_js_server;

pub use broker::{BrokerError, EmbeddedBroker};
pub use gateway::SimGateway;
pub use state::{PayloadType, ReceivedRequest, ReportDelays, SimOptions};
pub use storm::{MAX_STORM_RATE, Storm};
pub use topics::{TopicSettings, TopicType};
pub use zwave_js_server::SimZwaveJsServer;
