//! [`receive_redirect`]: the redirect of a browser sign-in, received on a loopback port
//! (RFC 8252, section 7.3): one small HTTP/1.1 handler that reads a request line, answers a
//! short page and stops at the first request for the redirect path that carries the `state`
//! of this sign-in. Bounded in time, in connections and in bytes read, since any local process
//! can connect to it: one that does not know the state can neither end the wait (a made-up
//! `?error=…`) nor put its words before the person as the authorization server's.

use std::time::Duration;

use tokio::{
    io::{AsyncReadExt as _, AsyncWriteExt as _},
    net::TcpStream,
};

use super::{AuthorizationRedirect, AuthorizeError};

/// Connections served before giving up (a browser also asks for `/favicon.ico`).
const MAX_CONNECTIONS: usize = 32;
/// The most read of one request's head.
const MAX_HEAD: usize = 8 * 1024;
/// The longest one connection may take to send its request.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(10);

/// Waits on `listener` (bound to `redirect_uri`'s port) for the browser to come back to
/// `redirect_uri`'s path with the `state` of `authorization_url` (the address the person
/// opens), at most `within`; answers it with a short page saying to go back to the program,
/// a request with another state (or none) with 400, and other paths with 404.
///
/// # Errors
/// [`AuthorizeError::TimedOut`] after `within`; [`AuthorizeError::Refused`] when the
/// authorization server sent an error back; [`AuthorizeError::Failed`] when the listener
/// cannot be used or too many other connections came.
pub async fn receive_redirect(
    listener: std::net::TcpListener,
    redirect_uri: &str,
    authorization_url: &str,
    within: Duration,
) -> Result<AuthorizationRedirect, AuthorizeError> {
    let failed = |reason: String| AuthorizeError::Failed(reason);
    let state = reqwest::Url::parse(authorization_url)
        .ok()
        .and_then(|url| {
            url.query_pairs()
                .find(|(name, _)| name == "state")
                .map(|(_, value)| value.into_owned())
        })
        .ok_or_else(|| failed("the authorization address carries no `state`".into()))?;
    let path = reqwest::Url::parse(redirect_uri)
        .map(|url| url.path().to_owned())
        .map_err(|err| failed(format!("the redirect address is not a URL: {err}")))?;
    listener
        .set_nonblocking(true)
        .map_err(|err| failed(format!("cannot listen for the redirect: {err}")))?;
    let listener = tokio::net::TcpListener::from_std(listener)
        .map_err(|err| failed(format!("cannot listen for the redirect: {err}")))?;
    let receive = async {
        for _ in 0..MAX_CONNECTIONS {
            let (stream, _) = listener
                .accept()
                .await
                .map_err(|err| failed(format!("cannot accept the browser's connection: {err}")))?;
            if let Some(result) = serve(stream, &path, &state).await {
                return result;
            }
        }
        Err(failed(format!(
            "{MAX_CONNECTIONS} connections came to the redirect port without the redirect"
        )))
    };
    tokio::time::timeout(within, receive)
        .await
        .unwrap_or(Err(AuthorizeError::TimedOut(within)))
}

/// Serves one connection: `Some` with the outcome when it was the redirect of this sign-in
/// (its path, and `state`).
async fn serve(
    mut stream: TcpStream,
    path: &str,
    state: &str,
) -> Option<Result<AuthorizationRedirect, AuthorizeError>> {
    let target = tokio::time::timeout(REQUEST_TIMEOUT, request_target(&mut stream))
        .await
        .ok()
        .flatten();
    let Some(target) = target.filter(|target| target.split('?').next() == Some(path)) else {
        let _ = respond(&mut stream, "404 Not Found", "Not found.").await;
        return None;
    };
    let given = reqwest::Url::parse(&format!("http://127.0.0.1{target}"))
        .ok()
        .and_then(|url| {
            url.query_pairs()
                .find(|(name, _)| name == "state")
                .map(|(_, value)| value.into_owned())
        });
    if given.as_deref() != Some(state) {
        let _ = respond(
            &mut stream,
            "400 Bad Request",
            "This is not the sign-in mcp-client is waiting for (its state does not match): nothing was done.",
        )
        .await;
        return None;
    }
    let outcome = AuthorizationRedirect::from_url(&target);
    // Not "signed in" yet: the code is still to be exchanged, and the issuer checked.
    let page = match &outcome {
        Ok(_) => "mcp-client received the authorization server's answer and finishes signing in; you can close this tab.".to_owned(),
        Err(err) => format!(
            "The authorization server said the sign-in did not go through: {}. Go back to mcp-client.",
            html(&err.to_string())
        ),
    };
    let _ = respond(&mut stream, "200 OK", &page).await;
    Some(outcome)
}

/// The target of a `GET` request line (path and query), or `None` for anything else.
async fn request_target(stream: &mut TcpStream) -> Option<String> {
    let mut head = Vec::with_capacity(1024);
    let mut buffer = [0_u8; 1024];
    while !head.windows(4).any(|window| window == b"\r\n\r\n") {
        let read = stream.read(&mut buffer).await.ok()?;
        if read == 0 || head.len() + read > MAX_HEAD {
            return None;
        }
        head.extend_from_slice(&buffer[..read]);
    }
    let line = head.split(|&byte| byte == b'\r').next()?;
    let line = std::str::from_utf8(line).ok()?;
    let mut words = line.split(' ');
    match (words.next(), words.next(), words.next()) {
        (Some("GET"), Some(target), Some(version)) if version.starts_with("HTTP/1.") => {
            Some(target.to_owned())
        }
        _ => None,
    }
}

async fn respond(stream: &mut TcpStream, status: &str, text: &str) -> std::io::Result<()> {
    let body =
        format!("<!doctype html><meta charset=utf-8><title>mcp-client</title><p>{text}</p>\n");
    let response = format!(
        "HTTP/1.1 {status}\r\nContent-Type: text/html; charset=utf-8\r\nContent-Length: {}\r\nCache-Control: no-store\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    stream.write_all(response.as_bytes()).await?;
    stream.shutdown().await
}

/// `text` safe inside an HTML paragraph.
fn html(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn get(port: u16, target: &str) -> String {
        let mut stream = TcpStream::connect(("127.0.0.1", port)).await.unwrap();
        stream
            .write_all(format!("GET {target} HTTP/1.1\r\nHost: x\r\n\r\n").as_bytes())
            .await
            .unwrap();
        let mut answer = String::new();
        stream.read_to_string(&mut answer).await.unwrap();
        answer
    }

    #[tokio::test]
    async fn the_redirect_is_received_after_other_requests_and_answered_with_a_page() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let uri = format!("http://127.0.0.1:{port}/callback");
        let receiving = tokio::spawn(async move {
            let authorize = "https://as.example/authorize?client_id=c&state=s1";
            receive_redirect(listener, &uri, authorize, Duration::from_secs(10)).await
        });
        assert!(get(port, "/favicon.ico").await.starts_with("HTTP/1.1 404"));
        // Found by the third hostile review: any local process could end the wait with an
        // error of its own, shown as the authorization server's words.
        for forged in [
            "/callback?error=access_denied&error_description=call+this+number",
            "/callback?error=x&state=s2",
            "/callback?code=abc&state=s2",
            "/callback?code=abc",
        ] {
            let page = get(port, forged).await;
            assert!(page.starts_with("HTTP/1.1 400"), "{forged}: {page}");
            assert!(
                page.contains("not the sign-in mcp-client is waiting for"),
                "{page}"
            );
        }
        let page = get(port, "/callback?code=abc&state=s1").await;
        assert!(page.starts_with("HTTP/1.1 200"), "{page}");
        assert!(page.contains("finishes signing in"), "{page}");
        let redirect = receiving.await.unwrap().unwrap();
        assert_eq!(
            (redirect.code.as_str(), redirect.state.as_str()),
            ("abc", "s1")
        );
    }

    #[tokio::test(start_paused = true)]
    async fn nobody_coming_back_ends_the_wait() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let result = receive_redirect(
            listener,
            "http://127.0.0.1:1/callback",
            "https://as.example/authorize?state=s",
            Duration::from_secs(300),
        )
        .await;
        assert_eq!(
            result,
            Err(AuthorizeError::TimedOut(Duration::from_secs(300)))
        );
    }
}
