//! The server over MCP Streamable HTTP (`--http`), attacked through the real binary: each
//! file one defence, each test failing if that defence broke.
//!
//! | module | what is attacked |
//! |---|---|
//! | `token` | the bearer token: missing, wrong, `Basic`, in the URL; a write so sent reaches no device |
//! | `origin` | DNS rebinding and cross-site pages: foreign `Host` and `Origin` headers |
//! | `startup` | configurations refused at start: exit 2, the message on stderr, nothing on stdout |
//! | `body` | bodies over 1 MiB, declared or chunked |
//! | `heads` | heads read two ways (two Hosts, two Origins, a foreign absolute target, TE with CL); DELETE of no session |
//! | `memory` | what a request costs and what a session or listen stream keeps, as peak RSS |
//! | `sessions` | the cap on sessions (503 with `Retry-After`) and their expiry |
//! | `slow_clients` | connections that trickle their headers or never finish them |
//! | `logs` | the token in no log line, at any level, on stderr or in the log file; refusals not a line each |
//! | `sensitive` | sensitive actions: refused without a token, asked over HTTP with one |
//! | `input_required` | the person's yes on 2026-07-28: the question as the answer, the yes on the retried call |
//! | `protocol` | what else a client may send: DELETE, stateless requests, HTTP/1.0, pipelining, huge headers |
//! | `subscriptions` | each session's subscriptions its own; a stateless listen stream |

mod body;
mod heads;
mod input_required;
mod logs;
mod memory;
mod origin;
mod protocol;
mod sensitive;
mod sessions;
mod slow_clients;
mod startup;
mod subscriptions;
mod token;
