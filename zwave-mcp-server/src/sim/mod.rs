//! The demo and test world: an embedded MQTT broker and a simulated Z-Wave JS UI gateway.
//!
//! | module | owns |
//! |---|---|
//! | `broker` | [`EmbeddedBroker`]: rumqttd on a free loopback port |
//! | `gateway` | [`SimControl`]: starting the simulated gateway, and its knobs |
//! | `state` | what the handle, the API and the storm share: settings, home, knobs, requests |
//! | `api` | what the simulated gateway publishes and how it answers API requests |
//! | `topics` | its own topic naming, from the captures (shares no code with `gateway::topics`) |
//! | `home`, `node` | the demo home and generated homes of any size, as `getNodes` shows them |
//! | `storm` | [`Storm`]: a steady stream of new readings |

mod api;
mod broker;
mod gateway;
pub mod home;
mod node;
mod state;
mod storm;
pub mod topics;

pub use broker::{BrokerError, EmbeddedBroker};
pub use gateway::SimControl;
pub use state::{PayloadType, ReceivedRequest, ReportDelays, SimOptions};
pub use storm::{MAX_STORM_RATE, Storm};
pub use topics::{TopicSettings, TopicType};
