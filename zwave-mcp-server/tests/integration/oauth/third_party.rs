//! Third-party OAuth clients sign in through the approval page: the official Python SDK
//! (`mcp` 2.3, `fixtures/peers/python_sdk_oauth.py`) finds the authorization server from the
//! 401, registers, and is sent to the page; the owner (this test) grants `read`; the SDK
//! works within it, is refused `control` with 403 `insufficient_scope`, steps up, is granted
//! `read control` the second time, and is cut off by the owner's revocation in the middle of
//! its session (asked to sign in again, the owner denies).

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

#[tokio::test]
async fn the_python_sdk_signs_in_steps_up_and_is_cut_off() {
    let home = OAuthHome::start().await;
    let owner = Owner::new(&home.issuer);
    let python = peers::python_venv("mcp2", peers::PYTHON_SDK);
    let mut client = Live::start(
        Command::new(python)
            .arg(fixture_path("peers/python_sdk_oauth.py"))
            .arg(&home.server.url),
    );

    // Each time the SDK sends the person to the page, the owner answers: `read` first, then
    // (the step-up) `read control`, then (after the revocation) no.
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
            owner.revoke_on_page("Python SDK").await;
            client.send(b"revoked\n");
        } else {
            break line["seen"].clone();
        }
    };
    let output = client.finish(STEP);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(seen.get("tools").is_some(), "{seen:#}\n{stderr}");

    // Within `read`: the read tools only, and a read answered.
    let tools: Vec<&str> = seen["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(Value::as_str)
        .collect();
    assert!(tools.contains(&"get_device_status"), "{tools:?}");
    assert!(!tools.contains(&"control_zwave_device"), "{tools:?}");
    assert_eq!(seen["calls"][0]["isError"], false, "{seen:#}");
    // The switch: refused with 403 first, then done after the step-up.
    let statuses: Vec<u64> = seen["http"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|answer| answer["status"].as_u64())
        .collect();
    assert!(statuses.contains(&403), "{statuses:?}");
    assert_eq!(seen["calls"][1]["tool"], "control_zwave_device");
    assert_eq!(seen["calls"][1]["isError"], false, "{seen:#}");
    let stepped: Vec<&str> = seen["stepped_up_tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(Value::as_str)
        .collect();
    assert!(stepped.contains(&"control_zwave_device"), "{stepped:?}");
    // The step-up asked for `control` (the scope the 403 named).
    assert!(asked[1].contains("control"), "{asked:#?}");
    // Revoked mid-session: the next call is refused, the SDK asks the person again, the owner
    // says no, and the call fails saying so.
    // (The SDK raises the denial from its transport's task, which cancels the call.)
    assert_eq!(asked.len(), 3, "{asked:#?}\n{seen:#}");
    assert!(seen["after_revoke"].is_string(), "{seen:#}");
    assert_eq!(
        seen["error"], "RuntimeError: the authorization server answered access_denied",
        "{seen:#}"
    );
    assert_eq!(seen["calls"].as_array().unwrap().len(), 2, "{seen:#}");
}
