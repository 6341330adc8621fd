//! DNS rebinding and cross-site pages: a request whose `Host` is not a loopback name, the bound
//! address or one the owner added (`--http-allowed-host`) is refused with 403, as is one whose
//! `Origin` is not a loopback page or one the owner added (`--http-allowed-origin`), with or
//! without a token. Programs, which send no `Origin`, pass.

use serde_json::json;

use crate::harness::{
    HttpServer, Raw, TOKEN, TokenFile, initialize, json_headers, raw_request, said, serve_demo,
};

/// The refusal of a request whose `Host` is `host`.
fn foreign_host(host: &str) -> String {
    let name = host.rsplit_once(':').map_or(host, |(name, _)| name);
    format!(
        "the Host header {host:?} is not a name this server answers to (a guard against DNS rebinding): if clients reach it by that name, start it with --http-allowed-host {name}"
    )
}

/// The refusal of a request whose `Origin` is `origin`.
fn foreign_origin(origin: &str) -> String {
    format!(
        "requests from the web page at {origin:?} are refused (a guard against cross-site requests): to allow that page, start the server with --http-allowed-origin {origin}"
    )
}

/// The status and body of an `initialize` sent with `headers` (and the token when given).
async fn initialize_with(
    server: &HttpServer,
    token: Option<&str>,
    headers: &[(&str, &str)],
) -> (u16, String) {
    let mut all: Vec<(&str, String)> = json_headers(token.unwrap_or_default());
    if token.is_none() {
        all.retain(|(name, _)| *name != "Authorization");
    }
    all.extend(
        headers
            .iter()
            .map(|(name, value)| (*name, (*value).to_owned())),
    );
    let all: Vec<(&str, &str)> = all
        .iter()
        .map(|(name, value)| (*name, value.as_str()))
        .collect();
    let mut connection = Raw::connect(server.addr).await;
    let body = initialize(json!({})).to_string();
    connection
        .send(&raw_request("POST", &all, &body))
        .await
        .unwrap();
    let reply = connection.reply().await;
    (reply.status, said(&reply.body))
}

/// The refusals every server makes, token or not.
async fn refuses_foreign_hosts_and_origins(server: &HttpServer, token: Option<&str>) {
    let port = server.addr.port();
    let evil_with_port = format!("evil.example:{port}");
    let rebound = format!("localhost.evil.example:{port}");
    for host in [
        "evil.example",
        &evil_with_port,
        &rebound,
        "127.0.0.1.nip.io",
        "0.0.0.0",
    ] {
        assert_eq!(
            initialize_with(server, token, &[("Host", host)]).await,
            (403, foreign_host(host)),
            "Host: {host}"
        );
    }
    for origin in [
        "https://evil.example",
        "http://localhost.evil.example:3000",
        "http://127.0.0.1.evil.example",
        "null",
    ] {
        assert_eq!(
            initialize_with(server, token, &[("Origin", origin)]).await,
            (403, foreign_origin(origin)),
            "Origin: {origin}"
        );
    }
    let localhost = format!("localhost:{port}");
    let ipv6 = format!("[::1]:{port}");
    for (name, value) in [
        ("Host", localhost.as_str()),
        ("Host", ipv6.as_str()),
        ("Origin", "http://localhost:3000"),
        ("Origin", "http://127.0.0.1:5173"),
        ("Origin", "http://[::1]:8080"),
        ("Origin", "https://localhost"),
    ] {
        let (status, body) = initialize_with(server, token, &[(name, value)]).await;
        assert_eq!(status, 200, "{name}: {value}: {body}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn foreign_hosts_and_origins_are_refused_with_a_token() {
    let token = TokenFile::new(TOKEN);
    let server = serve_demo(&["--http-token-file", &token.path()]).await;
    refuses_foreign_hosts_and_origins(&server, Some(TOKEN)).await;
    // The token is checked first: a page that has no token learns nothing more.
    assert_eq!(
        initialize_with(&server, None, &[("Origin", "https://evil.example")])
            .await
            .0,
        401
    );
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn foreign_hosts_and_origins_are_refused_without_a_token() {
    // On loopback without a token, Host and Origin are all that stop a web page the owner
    // visits from driving the server through the browser.
    let server = serve_demo(&[]).await;
    refuses_foreign_hosts_and_origins(&server, None).await;
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_owners_hosts_and_origins_pass_and_only_those() {
    let token = TokenFile::new(TOKEN);
    let server = serve_demo(&[
        "--http-token-file",
        &token.path(),
        "--http-allowed-host",
        "home.example,proxy.example:8443",
        "--http-allowed-origin",
        "https://app.example:443",
        "--http-allowed-origin",
        "https://dash.example:*",
    ])
    .await;
    for (name, value) in [
        ("Host", "home.example"),
        ("Host", "home.example:9999"),
        ("Host", "proxy.example:8443"),
        ("Origin", "https://app.example"),
        ("Origin", "https://dash.example:4000"),
    ] {
        let (status, body) = initialize_with(&server, Some(TOKEN), &[(name, value)]).await;
        assert_eq!(status, 200, "{name}: {value}: {body}");
    }
    for (name, value) in [
        ("Host", "proxy.example:8444"),
        ("Host", "evil.example"),
        ("Origin", "https://app.example:8443"),
        ("Origin", "http://app.example"),
        ("Origin", "https://dash.example.evil.example"),
    ] {
        let why = if name == "Host" {
            foreign_host(value)
        } else {
            foreign_origin(value)
        };
        assert_eq!(
            initialize_with(&server, Some(TOKEN), &[(name, value)]).await,
            (403, why),
            "{name}: {value}"
        );
    }
    server.stop().await;
}
