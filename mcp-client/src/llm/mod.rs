//! Talking to models: a provider-neutral message model, one [`Provider`] interface that turns
//! a request into a stream of [`StreamEvent`]s, and its HTTP implementation for Ollama/Qwen,
//! OpenAI-compatible servers and Anthropic.
//!
//! | module | owns |
//! |---|---|
//! | `message` | the conversation: system, user, assistant (text + calls), tool results |
//! | `event` | what a response becomes: text deltas, tool calls, usage, finish reason |
//! | `provider` | the [`Provider`] trait and its [`EventStream`] |
//! | `http_provider` | `HttpProvider`, `ProviderConfig`: the three dialects over HTTP (feature `providers`) |
//! | `http` | reqwest, retries for 429/5xx, status errors, idle and per-turn timeouts (feature `providers`) |
//! | `redirect` | redirects followed within the address's origin only, never with the key elsewhere |
//! | `framing` | NDJSON lines and server-sent events out of bytes, bounded per frame and response |
//! | `ollama`, `openai`, `anthropic` | each dialect's request body and response decoder |
//! | `format` | tool definitions and tool results in each dialect (shared with the CLI) |
//! | `error` | [`ProviderError`], with its retry policy |
//!
//! Nothing here knows about the agent loop; the agent never sees a wire format.

#[cfg(feature = "providers")]
mod anthropic;
pub mod error;
pub mod event;
pub mod format;
#[cfg(feature = "providers")]
mod framing;
#[cfg(feature = "providers")]
mod http;
#[cfg(feature = "providers")]
pub mod http_provider;
pub mod message;
#[cfg(feature = "providers")]
mod ollama;
#[cfg(feature = "providers")]
mod openai;
pub mod provider;
#[cfg(feature = "providers")]
mod redirect;

pub use error::ProviderError;
pub use event::{FinishReason, StreamEvent, ToolCallRequest};
pub use format::Dialect;
#[cfg(feature = "providers")]
pub use http::HttpSettings;
#[cfg(feature = "providers")]
pub use http_provider::{HttpProvider, ProviderConfig, check_base_url};
pub use message::{ChatRequest, Message, ToolChoice, ToolResult, Usage};
pub use provider::{EventStream, Provider};
