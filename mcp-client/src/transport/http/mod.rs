//! Remote servers over MCP Streamable HTTP: where they are ([`HttpEndpoint`], always built),
//! and with the `http` feature the transport (rmcp's client on reqwest and rustls, guarded
//! against what a server sends back) and what its failures mean for the user
//! ([`HttpProblem`]); with `oauth`, signing in ([`oauth`]).
//!
//! The deprecated HTTP+SSE transport (2024-11-05) is not spoken: configurations refuse it.

mod endpoint;
pub mod oauth;

#[cfg(feature = "http")]
mod client;
#[cfg(feature = "http")]
mod failure;
#[cfg(feature = "http")]
mod guarded;
#[cfg(feature = "http")]
mod raw;
#[cfg(feature = "http")]
mod secrets;
#[cfg(feature = "http")]
mod session_client;
#[cfg(feature = "http")]
mod tls;

pub use endpoint::HttpEndpoint;

#[cfg(feature = "http")]
pub use client::{HttpError, http_client};
#[cfg(feature = "http")]
pub(crate) use client::{HttpTransport, connect};
#[cfg(feature = "http")]
pub(crate) use failure::cut_event;
#[cfg(feature = "http")]
pub use failure::{HttpProblem, explain};
#[cfg(feature = "http")]
pub(crate) use guarded::CutEvents;
#[cfg(feature = "http")]
pub(crate) use session_client::SessionClient;
