//! Small things the server and the client both need and must not build twice: each is a few
//! lines, but two copies drift (three duration grammars and four backoffs existed before).
//!
//! # Layout
//! - [`backoff`]: [`Backoff`], exponential waits with a cap and optional jitter.
//! - [`duration`]: [`parse_duration`], the one duration grammar of flags and files.
//! - [`json`]: [`kind`], a JSON value's kind as error messages name it.
//! - [`text`]: [`clip`], text on one line and cut for logs and errors; [`printable`], text
//!   without the control characters a terminal would obey; [`is_invisible`], the characters
//!   that show nothing (default-ignorable and format).

pub mod backoff;
pub mod duration;
pub mod json;
pub mod text;

pub use backoff::Backoff;
pub use duration::{DurationError, MAX_DURATION, from_seconds, parse_duration};
pub use json::kind;
pub use text::{clip, is_invisible, printable};
