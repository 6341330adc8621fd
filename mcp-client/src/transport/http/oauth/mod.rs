//! Signing in to remote servers with OAuth 2.1, as the MCP authorization spec has it, on
//! rmcp's `auth` (feature `oauth`): protected-resource metadata (RFC 9728) from the server's
//! 401 or its well-known path, authorization-server metadata (RFC 8414, OpenID discovery),
//! a Client ID Metadata Document or dynamic registration, PKCE S256, the `resource`
//! parameter (RFC 8707), scopes from the challenge or `scopes_supported`, step-up on
//! `insufficient_scope`, refresh, and client credentials where configured. What an entry
//! says ([`OAuthSettings`]) is plain data, built without the feature.
//!
//! | part | what it owns |
//! |---|---|
//! | `settings` | [`OAuthSettings`], [`OAuthGrant`]: the entry's `"oauth"` object |
//! | `prompt` | [`Authorizer`], the host's interactive step: [`AuthorizationPrompt`] in, [`AuthorizationRedirect`] out; [`OAuthOptions`] |
//! | `loopback` | [`receive_redirect`]: the browser's redirect on a loopback port, bounded |
//! | `headless` | [`follow_redirects`]: the step without a browser, for servers that approve at once |
//! | `store` | the token file of each server (0600, atomic), [`default_token_dir`] |
//! | `secure_url` | which addresses signing in may use: https, http only to this machine |
//! | `sign_in` | [`SignIn`]: one server's tokens, sign-ins serialised and bounded |
//! | `requests` | [`SignedInClient`]: rmcp's HTTP client with the token, signing in on 401 or 403 |

mod settings;

#[cfg(feature = "oauth")]
mod headless;
#[cfg(feature = "oauth")]
mod loopback;
#[cfg(feature = "oauth")]
mod prompt;
#[cfg(feature = "oauth")]
mod requests;
#[cfg(feature = "oauth")]
mod secure_url;
#[cfg(feature = "oauth")]
mod sign_in;
#[cfg(feature = "oauth")]
mod store;

pub use settings::{OAuthGrant, OAuthSettings};

#[cfg(feature = "oauth")]
pub use headless::{follow_redirects, headless_authorizer};
#[cfg(feature = "oauth")]
pub use loopback::receive_redirect;
#[cfg(feature = "oauth")]
pub use prompt::{
    AuthorizationPrompt, AuthorizationRedirect, AuthorizeError, Authorizer, OAuthOptions,
};
#[cfg(feature = "oauth")]
pub use requests::SignedInClient;
#[cfg(feature = "oauth")]
pub use sign_in::{MAX_FRUITLESS_SIGN_INS, SignIn};
#[cfg(feature = "oauth")]
pub use store::default_token_dir;
