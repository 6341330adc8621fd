//! Signing in to remote servers that ask for OAuth, for every command that connects them:
//! the address is printed on stderr for the person to open, and the browser's redirect is
//! received on a loopback port (bounded: one redirect, five minutes). Tokens are kept in
//! the user's state folder; neither they nor the code are ever printed.

use std::{sync::Arc, time::Duration};

use crate::{
    connection::config,
    transport::http::oauth::{
        AuthorizationPrompt, AuthorizeError, OAuthOptions, default_token_dir, receive_redirect,
    },
};

/// The log filter directive that keeps rmcp's OAuth module at info and above: at debug it
/// logs the authorization code (`start exchange code for token`), which no log may hold.
pub const QUIET_OAUTH_LOG: &str = "rmcp::transport::auth=info";

/// How long the person has to sign in in the browser.
const SIGN_IN_WAIT: Duration = Duration::from_secs(300);

/// The command line's way of signing in: the person, at this terminal and a browser; tokens
/// in `$XDG_STATE_HOME/mcp-client/oauth` (or `~/.local/state/mcp-client/oauth`).
pub(super) fn options() -> OAuthOptions {
    OAuthOptions {
        authorizer: Some(Arc::new(|prompt| Box::pin(in_browser(prompt)))),
        token_dir: default_token_dir(
            config::env("XDG_STATE_HOME").as_deref(),
            config::env("HOME").as_deref(),
        ),
    }
}

async fn in_browser(
    prompt: AuthorizationPrompt,
) -> Result<crate::transport::http::oauth::AuthorizationRedirect, AuthorizeError> {
    let Some(listener) = prompt.listener else {
        return Err(AuthorizeError::Unavailable(
            "no port to receive the browser's redirect on".into(),
        ));
    };
    // The person's instructions: stderr, as every line that is not the command's answer.
    eprintln!(
        "mcp-client: server `{server}` asks you to sign in. Open this address in a browser:\n\n  {url}\n\nWaiting up to {minutes} minutes for the browser to come back to {redirect} …",
        server = common::printable(&prompt.server),
        url = common::printable(&prompt.url),
        minutes = SIGN_IN_WAIT.as_secs() / 60,
        redirect = prompt.redirect_uri,
    );
    let redirect =
        receive_redirect(listener, &prompt.redirect_uri, &prompt.url, SIGN_IN_WAIT).await;
    match &redirect {
        // Not signed in yet: the code is exchanged, and the issuer checked, after this.
        Ok(_) => eprintln!(
            "mcp-client: the browser came back; finishing the sign-in to `{}` …",
            common::printable(&prompt.server)
        ),
        Err(err) => eprintln!(
            "mcp-client: signing in to `{}` failed: {err}",
            common::printable(&prompt.server)
        ),
    }
    redirect
}
