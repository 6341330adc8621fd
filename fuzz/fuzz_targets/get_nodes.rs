//! A `getNodes` reply from the gateway: parsing, and topic routing of what it describes.
#![no_main]

#[allow(dead_code, reason = "each target checks one of the shared properties")]
#[path = "../../zwave-mcp-server/tests/integration/properties/checks.rs"]
mod checks;

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    if let Err(violation) = checks::get_nodes_reply(data) {
        panic!("{violation}");
    }
});
