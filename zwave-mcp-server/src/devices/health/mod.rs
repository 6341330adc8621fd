//! A device's link as people ask about it ("is anything dead?", "which devices are weak?"):
//! judged from what zwave-js counts and said in words, the dead first, then the weakest.
//! Pure: the facts come from the network's health book ([`crate::network::health`]).
//!
//! | module | owns |
//! |---|---|
//! | `assess` | [`Condition`], the problems of a link and the thresholds that define them |
//! | `words` | problems, routes and times in words |
//! | `report` | [`DeviceHealth`], [`ControllerHealth`]: the figures and a sentence; the order |
//! | `upkeep` | upkeep operations in words: their outcome, their progress, why one was refused |

mod assess;
mod report;
pub mod upkeep;
mod words;

pub use assess::{Condition, Problem};
pub use report::{ControllerHealth, DeviceHealth, Facts};
pub use words::{clock, millis};
