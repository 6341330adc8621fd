//! The server as its own OAuth 2.1 authorization server (`--oauth-issuer`), through the real
//! binary: a client signs in with the owner's yes and works within its grant, and every way
//! around the owner is refused.
//!
//! | module | what is shown |
//! |---|---|
//! | `flow` | metadata, registration, the approval page, tokens, scopes in `tools/list` and 403 beyond them, refresh, revocation |
//! | `attacks` | a code replayed or for another client, PKCE wrong or missing, a redirect URI off by a character, a forged or framed approval, a wrong owner's key, a reused refresh token, a token for another resource |
//! | `browser` | the owner's pages in headless Chromium: approve with chosen scopes, deny, revoke on the page of grants; a phone's width |
//! | `third_party` | the official Python SDK's OAuth client through the page: sign-in, step-up on 403, cut off by a revocation mid-session |
//! | `hosts` | Claude's, ChatGPT's and Home Assistant's documented flows as each sends them (`fixtures/hosts/FACTS.md`) |
//! | `sessions` | a session is its opener's (404 to anyone else); a revoked client's listen stream ends |
//! | `client_doc` | clients described by a metadata document (an https client_id): fetched within bounds, never from a private address unless allowed |
//! | `state` | the state directory: two processes on one, a corrupt or loose file, the flags refused at start |

mod attacks;
mod audit;
mod browser;
mod client_doc;
mod flow;
mod grants;
mod hosts;
mod official_suite;
mod sessions;
mod state;
mod third_party;

/// A loopback redirect URI as a native client registers it.
pub const REDIRECT: &str = "http://127.0.0.1:45871/callback";
