//! [`NodeId`]: which node, as Z-Wave and Z-Wave JS number them.

use std::fmt;

use serde::{Deserialize, Serialize};

/// A Z-Wave node id (1–232 classic, up to 4000 for Long Range; 255 is the broadcast node).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct NodeId(pub u16);

impl fmt::Display for NodeId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

/// A node id written as a number (`sim.set_stuck(3, true)`).
impl From<u16> for NodeId {
    fn from(id: u16) -> Self {
        Self(id)
    }
}
