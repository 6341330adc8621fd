//! The bearer token (`--http-token-file`): a request without it, with a wrong one, with
//! `Basic` credentials or with the token in the URL is refused with 401 and
//! `WWW-Authenticate: Bearer` before anything of MCP runs, so a write so sent reaches no
//! device; the same write with the token switches the device.

use serde_json::json;

use crate::harness::{GatewayHome, Mcp, TOKEN, TokenFile, said, serve_home};

const MISSING: &str = "this server needs `Authorization: Bearer TOKEN` (the token of --http-token-file): nothing was done";
const WRONG: &str = "the bearer token is not this server's: nothing was done";
const HELD: &str = "10 wrong keys came from this address in the last minute: wait a minute, then try again (nothing was done)";
const IN_URL: &str = "a token in the URL is not accepted (URLs are logged along the way): send it as `Authorization: Bearer TOKEN`";

/// Every way a client can fail to present the token, with the 401's text for it.
fn intruders(url: &str) -> Vec<(String, Mcp, &'static str)> {
    let last_changed = format!("{}0", &TOKEN[..TOKEN.len() - 1]);
    let prefix = &TOKEN[..TOKEN.len() - 1];
    let longer = format!("{TOKEN}0");
    vec![
        (
            "no Authorization".into(),
            Mcp::authorized(url, None),
            MISSING,
        ),
        (
            "another token".into(),
            Mcp::new(url, Some("0123456789abcdef0123456789abcdef")),
            WRONG,
        ),
        (
            "the token's last character changed".into(),
            Mcp::new(url, Some(&last_changed)),
            WRONG,
        ),
        (
            "a prefix of the token".into(),
            Mcp::new(url, Some(prefix)),
            WRONG,
        ),
        (
            "the token and more".into(),
            Mcp::new(url, Some(&longer)),
            WRONG,
        ),
        (
            "an empty bearer".into(),
            Mcp::authorized(url, Some("Bearer ")),
            WRONG,
        ),
        (
            "Basic credentials".into(),
            Mcp::authorized(url, Some("Basic dXNlcjpwYXNzd29yZA==")),
            WRONG,
        ),
        (
            "the token as Basic".into(),
            Mcp::authorized(url, Some(&format!("Basic {TOKEN}"))),
            WRONG,
        ),
        (
            "the token without a scheme".into(),
            Mcp::authorized(url, Some(TOKEN)),
            WRONG,
        ),
        (
            "?token=".into(),
            Mcp::authorized(&format!("{url}?token={TOKEN}"), None),
            IN_URL,
        ),
        (
            "?access_token=".into(),
            Mcp::authorized(&format!("{url}?access_token={TOKEN}"), None),
            IN_URL,
        ),
        (
            "&access_token= after another parameter".into(),
            Mcp::authorized(&format!("{url}?x=1&access_token={TOKEN}"), None),
            IN_URL,
        ),
    ]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn requests_without_the_token_get_401_and_switch_nothing() {
    let home = GatewayHome::renamed(&[]).await;
    let token = TokenFile::new(TOKEN);
    let server = serve_home(&home, &["--http-token-file", &token.path()]).await;
    let owner = Mcp::new(&server.url, Some(TOKEN));
    let session = owner.open(json!({})).await;
    let switch_on = json!({"deviceName": "Switch One", "action": "on"});
    let reply = owner
        .call(&session, 9, "control_zwave_device", switch_on.clone())
        .await;
    assert_eq!(reply.status, 200, "{reply:?}");
    let (error, text) = reply.tool_text();
    assert!(!error, "{text}");

    // Each says why it is refused. The wrong keys are counted: past ten a minute from this
    // machine the rest are held back with 429 (`wrong_keys_from_one_address_are_refused_for_a_minute`),
    // refused all the same.
    for (how, intruder, why) in intruders(&server.url) {
        let opened = intruder.initialize(json!({})).await;
        assert_eq!(opened.status, 401, "{how}: {opened:?}");
        assert_eq!(
            opened.header("www-authenticate"),
            "Bearer realm=\"zwave-mcp-server\"",
            "{how}"
        );
        assert_eq!(said(&opened.body), why, "{how}");
        assert_eq!(opened.header("mcp-session-id"), "", "{how}: no session");
    }
    for (how, intruder, why) in intruders(&server.url) {
        let write = intruder
            .call(&session, 7, "control_zwave_device", switch_on.clone())
            .await;
        let stateless_write = intruder
            .send(intruder.stateless(
                8,
                "tools/call",
                json!({"name": "control_zwave_device", "arguments": switch_on}),
            ))
            .await;
        for reply in [write, stateless_write] {
            match reply.status {
                401 => assert_eq!(said(&reply.body), why, "{how}"),
                429 => assert_eq!(said(&reply.body), HELD, "{how}"),
                other => panic!("{how}: HTTP {other}: {reply:?}"),
            }
            assert_eq!(reply.header("mcp-session-id"), "", "{how}: no session");
        }
    }
    // Nothing the intruders sent reached a device: the owner's own write (made first: the
    // wrong keys hold this machine's requests back for a minute, the owner's too) is the
    // gateway's only one.
    assert_eq!(
        home.writes(),
        [("2-37-0-targetValue".to_owned(), json!(true))],
        "only the owner's write"
    );
    let output = server.stop().await;
    assert!(output.stdout.is_empty(), "{:?}", output.stdout);
}

/// Found by the hostile review: the pages counted wrong owner's keys by address, `/mcp` let
/// the same key be guessed without end. Past ten wrong ones a minute, an address (all of
/// loopback being one) gets 429 without its key being looked at (its right key too, for that
/// minute); requests naming no key are not held back. (Another address is not held back:
/// `bearer`'s unit test, as this machine's only addresses here are loopback ones.)
#[tokio::test]
async fn wrong_keys_from_one_address_are_refused_for_a_minute() {
    let token = TokenFile::new(TOKEN);
    let server = crate::harness::serve_demo(&["--http-token-file", &token.path()]).await;
    let guesser = Mcp::new(&server.url, Some("0123456789abcdef0123456789abcdef"));
    for _ in 0..10 {
        let wrong = guesser.initialize(json!({})).await;
        assert_eq!(wrong.status, 401, "{wrong:?}");
        assert_eq!(said(&wrong.body), WRONG);
    }
    for who in [
        guesser,
        Mcp::new(&server.url, Some(TOKEN)),
        Mcp::authorized(&server.url, Some("Basic dXNlcjpwYXNzd29yZA==")),
    ] {
        let held = who.initialize(json!({})).await;
        assert_eq!(held.status, 429, "{held:?}");
        assert_eq!(held.header("retry-after"), "60");
        assert_eq!(said(&held.body), HELD);
    }
    let unnamed = Mcp::authorized(&server.url, None)
        .initialize(json!({}))
        .await;
    assert_eq!(unnamed.status, 401, "{unnamed:?}");
    // Another loopback address is this machine still.
    let elsewhere = Mcp::new(&server.url, Some(TOKEN)).sending_from("127.0.0.9");
    assert_eq!(elsewhere.initialize(json!({})).await.status, 429);
}
