//! Device names as a model gives them, resolved against the demo home.
#![no_main]

#[allow(dead_code, reason = "each target checks one of the shared properties")]
#[path = "../../zwave-mcp-server/tests/integration/properties/checks.rs"]
mod checks;

use std::{collections::BTreeMap, sync::OnceLock};

use zwave_mcp_server::network::{NodeId, NodeInfo, parse_nodes};

fn home() -> &'static BTreeMap<NodeId, NodeInfo> {
    static HOME: OnceLock<BTreeMap<NodeId, NodeInfo>> = OnceLock::new();
    HOME.get_or_init(|| {
        parse_nodes(serde_json::Value::Array(
            zwave_mcp_server::sim::home::demo_home(0),
        ))
        .expect("the demo home parses")
    })
}

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    if let Err(violation) = checks::device_name(home(), &String::from_utf8_lossy(data)) {
        panic!("{violation}");
    }
});
