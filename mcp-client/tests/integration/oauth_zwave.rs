//! Our client signs in to our server's own authorization server (`zwave-mcp-server
//! --oauth-issuer`), end to end: discovery from the 401, dynamic registration, PKCE, the
//! owner's yes on the approval page (an authorizer that does what the owner's browser does),
//! tokens; then it works within the grant, and a revocation in the middle of the session
//! makes it sign in again.

use std::{
    sync::{
        Arc,
        atomic::{AtomicUsize, Ordering},
    },
    time::Duration,
};

use mcp_client::{
    ServerConnection,
    connection::{RetryPolicy, config},
    transport::http::oauth::{AuthorizationRedirect, AuthorizeError, Authorizer, OAuthOptions},
};
use serde_json::json;
use test_support::{daemon::Daemon, mosquitto::ScratchDir};

use crate::harness::{TOKEN, args};

/// What the server logs once it listens.
const SERVING: &str = "serving MCP over Streamable HTTP";

/// The demo home with OAuth on a free loopback port: the daemon, and its issuer.
fn start_home() -> (Daemon, String) {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let dir = ScratchDir::new();
    let key = dir.path().join("key");
    std::fs::write(&key, format!("{TOKEN}\n")).unwrap();
    let issuer = format!("http://127.0.0.1:{port}");
    let mut command = std::process::Command::new(test_support::workspace_bin("zwave-mcp-server"));
    command
        .args([
            "--demo",
            "--http",
            &format!("127.0.0.1:{port}"),
            "--http-token-file",
        ])
        .arg(&key)
        .args(["--oauth-issuer", &issuer, "--state-dir"])
        .arg(dir.path().join("state"))
        .env("RUST_LOG", "info");
    let daemon = Daemon::start_until_logged(
        &command,
        dir,
        SERVING,
        "zwave oauth",
        Duration::from_secs(30),
    );
    (daemon, issuer)
}

/// The owner's browser: the approval page fetched, every scope the client asked for
/// checked, the owner's key typed, Allow pressed; the redirect's code and state read.
async fn approve(url: String) -> Result<AuthorizationRedirect, AuthorizeError> {
    let failed = |why: String| AuthorizeError::Failed(why);
    let http = reqwest::Client::builder()
        .no_proxy()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .map_err(|err| failed(err.to_string()))?;
    let page = http
        .get(&url)
        .send()
        .await
        .map_err(|err| failed(err.to_string()))?;
    let cookie = page
        .headers()
        .get("set-cookie")
        .and_then(|value| value.to_str().ok())
        .and_then(|value| value.split(';').next())
        .unwrap_or_default()
        .to_owned();
    let body = page.text().await.map_err(|err| failed(err.to_string()))?;
    let mut form: Vec<(String, String)> = body
        .split("<input type=\"hidden\" ")
        .skip(1)
        .filter_map(|input| {
            let name = input.split("name=\"").nth(1)?.split('"').next()?;
            let value = input.split("value=\"").nth(1)?.split('"').next()?;
            Some((
                name.to_owned(),
                value.replace("&quot;", "\"").replace("&amp;", "&"),
            ))
        })
        .collect();
    let asked = reqwest::Url::parse(&url)
        .ok()
        .and_then(|url| {
            url.query_pairs()
                .find(|(key, _)| key == "scope")
                .map(|(_, scope)| scope.into_owned())
        })
        .unwrap_or_default();
    for scope in asked.split(' ').filter(|scope| !scope.is_empty()) {
        form.push((format!("scope.{scope}"), "on".into()));
    }
    form.push(("owner_key".into(), TOKEN.into()));
    form.push(("decision".into(), "approve".into()));
    let origin = reqwest::Url::parse(&url).map_err(|err| failed(err.to_string()))?;
    let answer = http
        .post(
            origin
                .join("/oauth/authorize")
                .map_err(|err| failed(err.to_string()))?,
        )
        .header("cookie", cookie)
        .header("origin", origin.origin().ascii_serialization())
        .header("content-type", "application/x-www-form-urlencoded")
        .body(
            form.iter()
                .map(|(name, value)| format!("{}={}", urlencode(name), urlencode(value)))
                .collect::<Vec<_>>()
                .join("&"),
        )
        .send()
        .await
        .map_err(|err| failed(err.to_string()))?;
    let location = answer
        .headers()
        .get("location")
        .and_then(|value| value.to_str().ok())
        .ok_or_else(|| {
            failed(format!(
                "the approval answered {} without a redirect",
                answer.status()
            ))
        })?;
    AuthorizationRedirect::from_url(location)
}

fn urlencode(text: &str) -> String {
    text.bytes()
        .map(|byte| match byte {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' => {
                char::from(byte).to_string()
            }
            other => format!("%{other:02X}"),
        })
        .collect()
}

/// [`approve`] as an authorizer, counting the sign-ins.
fn owner_approves(count: &Arc<AtomicUsize>) -> Authorizer {
    let count = Arc::clone(count);
    Arc::new(move |prompt| {
        count.fetch_add(1, Ordering::SeqCst);
        Box::pin(approve(prompt.url))
    })
}

#[tokio::test]
async fn the_client_signs_in_through_the_owners_approval_and_again_after_a_revocation() {
    let (daemon, issuer) = start_home();
    let state = ScratchDir::new();
    let sign_ins = Arc::new(AtomicUsize::new(0));
    let options = OAuthOptions {
        authorizer: Some(owner_approves(&sign_ins)),
        token_dir: Some(state.path().join("oauth")),
    };
    let text =
        json!({"mcpServers": {"home": {"url": format!("{issuer}/mcp"), "oauth": {}}}}).to_string();
    let mut server = config::parse(std::path::Path::new("servers.json"), &text, &|_| None)
        .unwrap()
        .remove(0);
    server.init_timeout = Duration::from_secs(20);
    server.retry = RetryPolicy {
        attempts: 1,
        base_delay: Duration::ZERO,
    };
    let connection = ServerConnection::new(server).with_oauth(options);
    connection.connect().await.unwrap();
    assert_eq!(sign_ins.load(Ordering::SeqCst), 1);
    // The 401 asked for read and control: the grant covers the reads and the control tool.
    let mut names: Vec<String> = connection
        .tools()
        .await
        .unwrap()
        .iter()
        .map(|tool| tool.name.to_string())
        .collect();
    names.sort();
    assert_eq!(
        names,
        [
            "control_zwave_device",
            "get_device_sensor_data",
            "get_device_status",
            "get_zwave_health",
            "list_zwave_devices"
        ]
    );
    let switched = connection
        .call_tool(
            "control_zwave_device",
            args(json!({"deviceName": "Switch One", "action": "on"})),
        )
        .await
        .unwrap();
    assert_ne!(switched.is_error, Some(true), "{switched:?}");

    // The owner's side revokes the grant (RFC 7009, with the refresh token the client kept).
    let file = std::fs::read_dir(state.path().join("oauth"))
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .find(|path| path.extension().is_some_and(|ext| ext == "json"))
        .unwrap();
    let kept: serde_json::Value = serde_json::from_slice(&std::fs::read(file).unwrap()).unwrap();
    let refresh = kept["credentials"]["token_response"]["refresh_token"]
        .as_str()
        .unwrap();
    let revoked = reqwest::Client::builder()
        .no_proxy()
        .build()
        .unwrap()
        .post(format!("{issuer}/oauth/revoke"))
        .header("content-type", "application/x-www-form-urlencoded")
        .body(format!("token={}", urlencode(refresh)))
        .send()
        .await
        .unwrap();
    assert_eq!(revoked.status().as_u16(), 200);
    // The next call is refused (401); the client signs in again, the owner approves, the call
    // goes through.
    let status = connection
        .call_tool(
            "get_device_status",
            args(json!({"deviceName": "Switch One"})),
        )
        .await
        .unwrap();
    assert_ne!(status.is_error, Some(true), "{status:?}");
    assert_eq!(sign_ins.load(Ordering::SeqCst), 2);
    connection.shutdown().await;
    let log = daemon.log();
    assert!(
        !log.contains(TOKEN),
        "the owner's key reached the server's log"
    );
}
