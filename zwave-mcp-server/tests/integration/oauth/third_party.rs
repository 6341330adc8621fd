//! Third-party OAuth clients sign in through the approval page: the official Python SDK
//! (`mcp` 2.3, `fixtures/peers/python_sdk_oauth.py`) and TypeScript SDK (its 2.x client,
//! `@modelcontextprotocol/client`, `ts_sdk_oauth.mjs`) each find the authorization server
//! from the 401, register, and are sent to the page; the owner (this test) grants `read`; the
//! SDK works within it, is refused `control` with 403 `insufficient_scope`, steps up, is
//! granted `read control` the second time, and is cut off by the owner's revocation in the
//! middle of its session (asked to sign in again, the owner denies).
//!
//! The TypeScript SDK 1.x (`@modelcontextprotocol/sdk` 1.32) cannot step up against a server
//! that issues refresh tokens: on the 403 it refreshes (asking no more scope), is given the
//! same grant, and gives up ("Server returned 403 after trying upscoping").

use std::{process::Command, time::Duration};

use serde_json::Value;
use test_support::{child::Live, fixture_path, peers};

use crate::harness::{OAuthHome, Owner};

/// How long one step of a client may take (the venv is installed on first use).
const STEP: Duration = Duration::from_secs(180);

/// Reads the client's next line as JSON.
fn next(client: &mut Live) -> Value {
    let line = client.read_line(STEP);
    serde_json::from_str(&line).unwrap_or_else(|err| panic!("{err}: {line}"))
}

/// What a client saw, and the authorization URLs it sent the owner to.
struct Run {
    seen: Value,
    asked: Vec<String>,
}

/// Drives `command` (a client speaking `python_sdk_oauth.py`'s lines, named `name` in its
/// registration) against `home`, the owner answering each sign-in: `read` first, then (the
/// step-up) `read control`, then (after the revocation) no.
async fn drive(home: &OAuthHome, command: &mut Command, name: &str) -> Run {
    let owner = Owner::new(&home.issuer);
    let mut client = Live::start(command);
    let answers: [(&str, &[&str]); 3] = [
        ("approve", &["read"]),
        ("approve", &["read", "control"]),
        ("deny", &[]),
    ];
    let mut asked = Vec::new();
    let seen = loop {
        let line = next(&mut client);
        if let Some(url) = line["authorize"].as_str() {
            asked.push(url.to_owned());
            let (decision, scopes) = answers
                .get(asked.len() - 1)
                .unwrap_or_else(|| panic!("asked to sign in once too often: {asked:#?}"));
            let back = owner.answer_url(url, decision, scopes).await;
            client.send(format!("{back}\n").as_bytes());
        } else if line["revoke"] == true {
            owner.revoke_on_page(name).await;
            client.send(b"revoked\n");
        } else {
            break line["seen"].clone();
        }
    };
    let output = client.finish(STEP);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(seen.get("tools").is_some(), "{seen:#}\n{stderr}");
    Run { seen, asked }
}

/// The names in `seen[key]`.
fn names<'a>(seen: &'a Value, key: &str) -> Vec<&'a str> {
    seen[key]
        .as_array()
        .unwrap_or_else(|| panic!("no {key}: {seen:#}"))
        .iter()
        .filter_map(Value::as_str)
        .collect()
}

/// What every client shows: within `read` the read tools only and a read answered; the switch
/// refused with 403, then done after the step-up (which asked for `control`, the scope the
/// 403 named); after the revocation asked to sign in again, and no call more answered.
fn within_its_grant_and_cut_off(run: &Run) {
    let seen = &run.seen;
    let tools = names(seen, "tools");
    assert!(tools.contains(&"get_device_status"), "{tools:?}");
    assert!(!tools.contains(&"control_zwave_device"), "{tools:?}");
    assert_eq!(seen["calls"][0]["isError"], false, "{seen:#}");
    let statuses: Vec<u64> = seen["http"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|answer| answer["status"].as_u64())
        .collect();
    assert!(statuses.contains(&403), "{statuses:?}");
    assert_eq!(seen["calls"][1]["tool"], "control_zwave_device", "{seen:#}");
    assert_eq!(seen["calls"][1]["isError"], false, "{seen:#}");
    assert!(
        names(seen, "stepped_up_tools").contains(&"control_zwave_device"),
        "{seen:#}"
    );
    assert!(run.asked[1].contains("control"), "{:#?}", run.asked);
    assert_eq!(run.asked.len(), 3, "{:#?}\n{seen:#}", run.asked);
    assert_eq!(seen["calls"].as_array().unwrap().len(), 2, "{seen:#}");
}

#[tokio::test]
async fn the_python_sdk_signs_in_steps_up_and_is_cut_off() {
    let home = OAuthHome::start().await;
    let python = peers::python_venv("mcp2", peers::PYTHON_SDK);
    let run = drive(
        &home,
        Command::new(python)
            .arg(fixture_path("peers/python_sdk_oauth.py"))
            .arg(&home.server.url),
        "Python SDK",
    )
    .await;
    within_its_grant_and_cut_off(&run);
    // The SDK raises the denial from its transport's task, which cancels the call.
    assert!(run.seen["after_revoke"].is_string(), "{:#}", run.seen);
    assert_eq!(
        run.seen["error"],
        "RuntimeError: the authorization server answered access_denied"
    );
}

#[tokio::test]
async fn the_typescript_sdk_signs_in_steps_up_and_is_cut_off() {
    let home = OAuthHome::start().await;
    let run = drive(
        &home,
        Command::new("node")
            .arg(fixture_path("peers/ts_sdk_oauth.mjs"))
            .arg(peers::typescript_client())
            .arg(&home.server.url),
        "TypeScript SDK",
    )
    .await;
    within_its_grant_and_cut_off(&run);
    assert_eq!(
        run.seen["after_revoke"], "Error: the authorization server answered access_denied",
        "{:#}",
        run.seen
    );
    assert_eq!(run.seen.get("error"), None, "{:#}", run.seen);
}

/// Claude's and ChatGPT's way: the SDK names itself by a Client ID Metadata Document (here
/// served over TLS by a test CA the server trusts, on loopback, which the owner allows).
#[tokio::test]
async fn the_python_sdk_signs_in_by_its_metadata_document() {
    use super::client_doc::{document, document_server, home_trusting};
    let (origin, ca, hits, _dir) = document_server(|origin| {
        let id = format!("{origin}/python-sdk.json");
        let described = serde_json::json!({
            "client_name": "Python SDK",
            "redirect_uris": ["http://127.0.0.1:45872/callback"],
            "grant_types": ["authorization_code", "refresh_token"],
        });
        std::collections::HashMap::from([(
            "/python-sdk.json".to_owned(),
            ("200 OK".into(), String::new(), document(&id, described)),
        )])
    })
    .await;
    let home = home_trusting(&ca, &["--oauth-client-metadata-private"]).await;
    let client_document = format!("{origin}/python-sdk.json");
    let python = peers::python_venv("mcp2", peers::PYTHON_SDK);
    let run = drive(
        &home,
        Command::new(python)
            .arg(fixture_path("peers/python_sdk_oauth.py"))
            .arg(&home.server.url)
            .arg(&client_document),
        "Python SDK",
    )
    .await;
    within_its_grant_and_cut_off(&run);
    let named = form_urlencoded::Serializer::new(String::new())
        .append_pair("client_id", &client_document)
        .finish();
    assert!(run.asked[0].contains(&named), "{:#?}", run.asked);
    // No registration: the document was fetched instead.
    let posts: Vec<&serde_json::Value> = run.seen["http"].as_array().unwrap().iter().collect();
    assert!(
        !posts.iter().any(|answer| answer["status"] == 201),
        "{posts:?}"
    );
    assert!(hits.load(std::sync::atomic::Ordering::SeqCst) >= 1);
}
