//! The client's stdout path: the bounded line reader over the bytes, then each line judged
//! and typed (`mcp-client/tests/integration/properties/checks.rs`).
#![no_main]

#[allow(dead_code, reason = "each target checks one of the shared properties")]
#[path = "../../mcp-client/tests/integration/properties/checks.rs"]
mod checks;

use mcp_client::transport::lines::{Line, LineReader};

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("a runtime");
    runtime.block_on(async {
        let mut reader = LineReader::new(data, 4096);
        while let Ok(Some(line)) = reader.next_line().await {
            if let Line::Complete(bytes) = line {
                assert!(bytes.len() <= 4096, "a line over the limit came out whole");
                if let Err(violation) = checks::stdout_line(&bytes) {
                    panic!("{violation}");
                }
            }
        }
    });
});
