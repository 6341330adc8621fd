//! Remote servers over MCP Streamable HTTP: where they are ([`HttpEndpoint`], always built),
//! and with the `http` feature the transport (rmcp's client on reqwest and rustls, guarded
//! against what a server sends back) and what its failures mean for the user ([`HttpProblem`]).
//!
//! The deprecated HTTP+SSE transport (2024-11-05) is not spoken: configurations refuse it.

mod endpoint;

#[cfg(feature = "http")]
mod client;
#[cfg(feature = "http")]
mod failure;
#[cfg(feature = "http")]
mod guarded;
#[cfg(feature = "http")]
mod secrets;

pub use endpoint::HttpEndpoint;

#[cfg(feature = "http")]
pub use client::{HttpError, HttpTransport, connect};
#[cfg(feature = "http")]
pub(crate) use failure::cut_event;
#[cfg(feature = "http")]
pub use failure::{HttpProblem, explain};
#[cfg(feature = "http")]
pub(crate) use guarded::CutEvents;
