//! Which MQTT topic carries which value: built from `getNodes`, never guessed from names.
//!
//! Z-Wave JS UI sanitizes names into topics (spaces become `_`, other special characters are
//! dropped, `/` is kept so `Coffee/Plug` adds a level), so a topic cannot be parsed back into a
//! node reliably. Instead every topic a value may be published on is computed from the node list,
//! for both value-topic styles (0 "ValueID" and 1 "named"), with and without the location, and
//! with the node as name, `nodeID_<id>` or bare id. That needs no knowledge of the gateway's
//! settings, and a topic that is not in the index is simply not ours to interpret.
//!
//! Two nodes can share a topic: "Light" in the Kitchen and "Light" with no location both
//! publish `zwave/Light/...` when locations are left out. Such a topic cannot say which node
//! spoke, so it is kept out of the index (and the collision reported) rather than let the
//! last node win: one device's report must never move another device's state.
//!
//! | module | owns |
//! |---|---|
//! | `index` | [`TopicIndex`]: topic → value, built from the node list; collisions left out |
//! | `naming` | how Z-Wave JS UI names topics in every style ([`TopicStyle`]) |
//! | `payloads` | what a status or value payload says, in all three payload types |

mod index;
mod naming;
mod payloads;

pub use index::{Route, TopicIndex, ValueRef};
pub use naming::{TopicKind, TopicStyle, node_path, sanitize, value_path, value_tails};
pub use payloads::{decode_epoch_ms, decode_flag, decode_node_status, decode_value};
