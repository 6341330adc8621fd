//! The demo and test world: an embedded MQTT broker and a simulated Z-Wave JS UI gateway.

mod broker;
mod gateway;
pub mod home;
mod node;
mod storm;

pub use broker::{BrokerError, EmbeddedBroker};
pub use gateway::{PayloadType, ReceivedRequest, SimControl, SimOptions};
pub use storm::{MAX_STORM_RATE, Storm};
