//! Every tool's success path and every error path, over MCP, against the simulated home.

mod control;
mod links;
mod list;
mod read;
mod wording;
