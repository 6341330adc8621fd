//! Value and status topic payloads from the gateway.
#![no_main]

#[allow(dead_code, reason = "each target checks one of the shared properties")]
#[path = "../../zwave-mcp-server/tests/integration/properties/checks.rs"]
mod checks;

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    if let Err(violation) = checks::payloads(data) {
        panic!("{violation}");
    }
});
