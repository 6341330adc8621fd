//! `math_eval`'s expression evaluator.
#![no_main]

#[allow(dead_code, reason = "each target checks one of the shared properties")]
#[path = "../../mcp-client/tests/integration/properties/checks.rs"]
mod checks;

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    if let Err(violation) = checks::math_expression(&String::from_utf8_lossy(data)) {
        panic!("{violation}");
    }
});
