//! Interop: our client against our server and against third-party servers.
#![expect(
    clippy::unwrap_used,
    reason = "tests: an unexpected error should fail the test with its message"
)]

mod client_vs_everything;
mod client_vs_fastmcp;
mod client_vs_peers_http;
mod client_vs_zwave;
mod conformance;
mod conformance_stateless;
mod end_to_end;
mod fixtures_current;
mod official_suite;
mod official_suite_client;
mod preflight;
mod real_driver_yes;
mod support;
mod third_party_clients;
mod third_party_clients_http;
