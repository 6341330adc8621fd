//! A dimmer's level as Z-Wave has it (0–99, 99 = full), and as people read it (a percentage):
//! what the state of a switch and the words of a colour light both say.

use super::kind::{cc, find_value};
use crate::network::NodeInfo;

/// Current level of a dimmer, 0–99.
pub fn level(node: &NodeInfo) -> Option<u8> {
    let value = find_value(node, cc::MULTILEVEL_SWITCH, "currentValue")?
        .value
        .as_ref()?
        .as_f64()?;
    Some(value.clamp(0.0, 99.0).round() as u8)
}

/// A Z-Wave level (0–99, 99 = full) as the percentage people use (99 → 100).
pub fn percent_of_99(level: u8) -> u8 {
    if level >= 99 { 100 } else { level }
}
