//! How the simulated devices take a write, whichever simulated server carries it (Z-Wave JS
//! UI's MQTT API or zwave-js-server's WebSocket API), as the real driver does
//! (`captures/confirm/FACTS.md`): zwave-js updates its own cache the moment the Set is
//! acknowledged (a restore, 255, only as `targetValue`); without Supervision the answer is
//! 254 and the device's own report follows the verification Get ([`ReportDelays`]), showing
//! its real state: the new one, or the old one when it is stuck. With Supervision the answer
//! is 255 and nothing follows. Each server sends these in its own order.
//!
//! | module | owns |
//! |---|---|
//! | `devices` | [`Devices`]: the home and knobs a write works on; how one node behaves |
//! | `outcome` | `Write` and `Report`: what a write did at once, and what comes after |
//! | `write` | [`write`] (checked, then carried out by the value's class) and [`report`] |
//! | `class` | which behaviour a written value has: switch, motor, lock, setpoint, tone, … |
//! | `switch` | a binary switch or a dimmer, with a plug's power |
//! | `effects` | every other class's effects, and carrying them out |
//!
//! [`ReportDelays`]: super::ReportDelays

mod class;
mod devices;
mod effects;
mod outcome;
mod switch;
mod write;

pub(super) use devices::Devices;
pub(super) use write::{report, write};
