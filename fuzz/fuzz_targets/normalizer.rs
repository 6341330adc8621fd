//! Argument normalization: the input is `[schema, arguments]` as JSON.
#![no_main]

#[allow(dead_code, reason = "each target checks one of the shared properties")]
#[path = "../../mcp-client/tests/integration/properties/checks.rs"]
mod checks;

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    if let Ok(serde_json::Value::Array(pair)) = serde_json::from_slice(data)
        && let [schema, arguments] = pair.as_slice()
        && let Err(violation) = checks::normalized_arguments(schema, arguments)
    {
        panic!("{violation}");
    }
});
