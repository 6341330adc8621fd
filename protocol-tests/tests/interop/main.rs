//! Interop: our client against our server and against third-party servers.
#![allow(clippy::unwrap_used, missing_docs)]

mod client_vs_everything;
mod client_vs_fastmcp;
mod client_vs_zwave;
mod conformance;
mod end_to_end;
mod fixtures_current;
mod preflight;
mod support;
mod third_party_clients;
