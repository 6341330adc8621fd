//! The Z-Wave home as people see it: devices, their kinds, states, readings and actions.
//!
//! Pure domain logic over the network's node data: no I/O here. Device kinds come from the
//! command classes a node has, not from its name.
//!
//! | module | owns |
//! |---|---|
//! | `kind` | [`DeviceKind`] from command classes |
//! | `level` | a dimmer's level (0–99) and the percentage people read |
//! | `state` | a device's state as people read it; [`DeviceSummary`] |
//! | `classes` | the state of locks, thermostats, covers, colour lights and sirens in words |
//! | `readings` | every sensor and meter reading with unit and age ([`Reading`]) |
//! | `write` | what can be asked of a device, as a checked write plan ([`WritePlan`]) |
//! | `names` | finding a device by the name a person or model gives ([`Directory`]) |
//! | `exposure` | what the owner lets an agent see and switch ([`Exposure`]) |
//! | [`health`] | a device's link: dead, weak (and why), asleep or fine, in words |

mod classes;
mod exposure;
pub mod health;
mod kind;
mod level;
mod names;
mod readings;
mod state;
mod write;

pub use exposure::{Exposure, Rule, RuleAudit, RuleError, Rules};
pub(crate) use kind::cc;
pub use kind::{DeviceKind, find_value};
pub use level::{level, percent_of_99};
pub use names::{
    Directory, MAX_NAME_CHARS, Purpose, ResolveError, describe, display_name, resolve,
};
pub use readings::{Reading, ago, readings};
pub use state::{DeviceSummary, battery, is_device, is_on, is_online, status_word, summary};
pub use write::{
    Action, ActionError, Expect, Limits, Request, Sensitive, SensitiveClass, Words, WritePlan,
    action_list, actions, modes, plan, tones,
};
