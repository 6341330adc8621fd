//! The state directory: two server processes on one share grants (a token from one works on
//! the other; a revocation in one holds in the other within 5 s); a corrupt or loose file
//! stops the server with words naming it; the flags are refused at start when they cannot
//! work.

use std::time::{Duration, Instant};

use serde_json::json;

use super::REDIRECT;
use crate::harness::{Mcp, OAuthHome, Owner, TOKEN, TokenFile, http_command};

/// The binary with `args`, expected to exit at once.
fn run(args: &[&str]) -> std::process::Output {
    test_support::child::output(&mut http_command(args), Duration::from_secs(20))
}

#[tokio::test]
async fn two_processes_on_one_state_directory_share_grants_and_revocations() {
    let first = OAuthHome::start().await;
    let state = first.key.dir().join("state");
    let second = OAuthHome::start_on(TokenFile::new(TOKEN), &state).await;
    // Both name the same issuer in real use; here each has its own port, so a token is
    // checked against the resource URL of the process it is sent to. Two processes behind a
    // balancer share one public URL: give both the same --oauth-issuer.
    assert_ne!(first.issuer, second.issuer);
    drop(second);
    let port = crate::harness::free_port();
    let issuer = format!("http://127.0.0.1:{port}");
    let key = TokenFile::new(TOKEN);
    let shared = |addr: String| {
        http_command(&[
            "--demo",
            "--http",
            &addr,
            "--http-token-file",
            &key.path(),
            "--oauth-issuer",
            &issuer,
            "--state-dir",
            state.to_str().unwrap(),
        ])
    };
    // Process A on the issuer's port signs the client in; process B, on another port with
    // the same issuer and state, takes its token.
    let a = crate::harness::HttpServer::start(shared(format!("127.0.0.1:{port}"))).await;
    let b = crate::harness::HttpServer::start(shared("127.0.0.1:0".into())).await;
    let owner = Owner::new(&issuer);
    let (client, code) = owner.code(REDIRECT, &["read"]).await;
    let tokens = owner.exchange(&client, &code, REDIRECT).await;
    let on_b = Mcp::new(&b.url, tokens["access_token"].as_str());
    assert_eq!(on_b.initialize(json!({})).await.status, 200);
    // Revoked through A; B refuses within 5 s.
    let revoked = owner
        .post_form(
            "/oauth/revoke",
            &[("token", tokens["refresh_token"].as_str().unwrap())],
            &[],
        )
        .await;
    assert_eq!(revoked.status, 200);
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let status = on_b.initialize(json!({})).await.status;
        if status == 401 {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "B still takes a revoked grant's token after 5 s"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    drop((a, b, first));
}

#[test]
fn a_state_file_that_cannot_be_read_stops_the_server_naming_it() {
    let key = TokenFile::new(TOKEN);
    let state = key.dir().join("state");
    std::fs::create_dir_all(&state).unwrap();
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::set_permissions(&state, std::fs::Permissions::from_mode(0o700)).unwrap();
    std::fs::write(state.join("oauth.json"), "{\"grants\": 7}").unwrap();
    std::fs::set_permissions(
        state.join("oauth.json"),
        std::fs::Permissions::from_mode(0o600),
    )
    .unwrap();
    let port = crate::harness::free_port();
    let args = [
        "--demo",
        "--http",
        &format!("127.0.0.1:{port}"),
        "--http-token-file",
        &key.path(),
        "--oauth-issuer",
        &format!("http://127.0.0.1:{port}"),
        "--state-dir",
        state.to_str().unwrap(),
    ];
    let output = run(&args);
    assert_ne!(output.status.code(), Some(0));
    assert!(output.stdout.is_empty());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains(&format!("the state file {}/oauth.json cannot be read as one: invalid type: integer `7`, expected a sequence", state.display())),
        "{stderr}"
    );
    // Loose permissions: refused too.
    std::fs::write(state.join("oauth.json"), "{}").unwrap();
    std::fs::set_permissions(
        state.join("oauth.json"),
        std::fs::Permissions::from_mode(0o644),
    )
    .unwrap();
    let output = run(&args);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains(
            "oauth.json can be read or written by other users of this machine (mode 644)"
        ),
        "{stderr}"
    );
}

#[test]
fn flags_that_cannot_work_are_refused_at_start() {
    let key = TokenFile::new(TOKEN);
    let cases: [(Vec<&str>, &str); 3] = [
        (
            vec![
                "--demo",
                "--http",
                "127.0.0.1:0",
                "--oauth-issuer",
                "http://127.0.0.1:1",
            ],
            "--oauth-issuer needs the owner's key: give --http-token-file FILE (or ZWAVE_MCP_HTTP_TOKEN); the owner approves each client with it",
        ),
        (
            vec![
                "--demo",
                "--http",
                "127.0.0.1:0",
                "--oauth-issuer",
                "http://home.example",
            ],
            "\"http://home.example\" is plain http to another machine (OAuth 2.1 needs TLS there): give the origin hosts reach the server at, e.g. https://home.example.com (http only to 127.0.0.1, [::1] or localhost)",
        ),
        (
            vec![
                "--demo",
                "--http",
                "127.0.0.1:0",
                "--oauth-issuer",
                "https://home.example/mcp",
            ],
            "\"https://home.example/mcp\" is not an origin (it has a path, a query, a fragment or a user)",
        ),
    ];
    let _ = &key;
    for (args, words) in cases {
        let output = run(&args);
        assert_eq!(output.status.code(), Some(2), "{args:?}");
        assert!(output.stdout.is_empty(), "{args:?}");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(stderr.contains(words), "{args:?}: {stderr}");
    }
}
