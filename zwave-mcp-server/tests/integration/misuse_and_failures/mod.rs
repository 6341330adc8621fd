//! Issue 20's hostile review, reproduced through the release binary's code path: the real
//! binary against the simulated gateway on an embedded broker, with the gateway's own record
//! of every API request it received as the witness of what was written.

mod bound;
mod broker;
mod classes;
mod confirm;
mod down;
mod late;
mod marked;
mod memory;
mod names;
mod protocol;
mod reads;
mod text;
