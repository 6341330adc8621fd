//! A simulated zwave-js-server: the demo home (or any home of the simulator) served over
//! zwave-js-server's WebSocket API, as the recorded sessions show it
//! (`fixtures/zwave-js-server/`, `captures/ws/FACTS.md`), with its own code: none of the
//! backend's (`crate::network::zwave_js_server`) is used to build what it sends.
//!
//! Per connection: the `version` message, `set_api_schema`, `start_listening` (the whole
//! state: every node with its values and their metadata), then commands and events. Writes
//! go through the simulated devices (`device`) and come back in the real server's order:
//! without Supervision the result first and then zwave-js's optimistic `value updated`
//! events; with it the target value's event, the result, then the current value's. The
//! device's own report follows after its delay, to every listening client. Knobs as for the
//! MQTT simulator: stuck and supervised nodes, reports off, the start-up sequence (the port
//! open at driver ready, nodes not interviewed yet, then each node's `ready` with its whole
//! state), the server stopped (every connection closed and new ones refused) and started
//! again, and the server frozen (a stopped process: connections stay open and nothing is read
//! or answered, not even a ping) and thawed.
//!
//! | module | owns |
//! |---|---|
//! | `server` | [`SimZwaveJsServer`]: starting it, and its knobs |
//! | `shared` | what the handle, the connections and the commands share: home, knobs, events |
//! | `connection` | one client: the `version` message, its commands answered, everyone's events |
//! | `commands` | each command answered as the real server does, in its order |
//! | `state` | the home as the server describes it: the whole state, a node, a value, an event |
//! | `upkeep` | `node.refresh_info`, `node.check_lifeline_health`, `node.abort_health_check`, `controller.rebuild_node_routes` |

mod commands;
mod connection;
mod server;
mod shared;
mod state;
mod upkeep;

pub use server::SimZwaveJsServer;
