//! The audit trail (`audit.jsonl` in the state directory): every write and upkeep call with
//! who asked and what came of it, every grant, sign-in and refusal; read by the owner on the
//! grants page; kept on stdio too when a state directory is given.

use serde_json::{Value, json};

use super::REDIRECT;
use crate::harness::{Conversation, Mcp, OAuthHome, Owner, TOKEN, command};

/// The trail's entries, oldest first.
fn trail(dir: &std::path::Path) -> Vec<Value> {
    std::fs::read_to_string(dir.join("audit.jsonl"))
        .unwrap_or_default()
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect()
}

#[tokio::test]
async fn each_grant_sign_in_write_and_refusal_is_in_the_trail_with_who_asked() {
    let home = OAuthHome::start().await;
    let state = home.key.dir().join("state");
    let owner = Owner::new(&home.issuer);
    let client = owner.register("Kitchen Agent", REDIRECT).await;
    let page = owner
        .page(&Owner::authorize_query(&client, REDIRECT, "read control"))
        .await;
    let form = Owner::form_of(&page);
    let wrong = owner
        .decide(
            &form,
            "approve",
            "0123456789abcdef0123456789abcdef",
            &["read", "control"],
        )
        .await;
    assert_eq!(wrong.status, 403);
    let answer = owner
        .decide(&form, "approve", TOKEN, &["read", "control"])
        .await;
    let code = answer.location_param("code").unwrap();
    let tokens = owner.exchange(&client, &code, REDIRECT).await;
    let agent = Mcp::new(&home.server.url, tokens["access_token"].as_str());
    let session = agent.open(json!({})).await;
    let switched = agent
        .call(
            &session,
            2,
            "control_zwave_device",
            json!({"deviceName": "Switch One", "action": "on"}),
        )
        .await;
    assert!(!switched.tool_text().0, "{switched:?}");
    let refused = agent
        .call(
            &session,
            3,
            "maintain_zwave_device",
            json!({"deviceName": "Switch One", "operation": "check_health"}),
        )
        .await;
    assert_eq!(refused.status, 403);
    // The owner's key too: another who.
    let owners = Mcp::new(&home.server.url, Some(TOKEN));
    let own = owners.open(json!({})).await;
    owners
        .call(
            &own,
            4,
            "control_zwave_device",
            json!({"deviceName": "Switch One", "action": "off"}),
        )
        .await;

    let entries = trail(&state);
    let said: Vec<String> = entries
        .iter()
        .map(|entry| {
            format!(
                "{} | {} | {}",
                entry["who"].as_str().unwrap(),
                entry["what"].as_str().unwrap(),
                entry["outcome"].as_str().unwrap()
            )
        })
        .collect();
    let asking = format!("the client \"Kitchen Agent\" asked to sign in ({client})");
    assert_eq!(
        said[0],
        format!(
            "someone at the approval page, from 127.0.0.1 | {asking} | refused: not the owner's key"
        ),
        "{said:#?}"
    );
    assert!(
        said[1].starts_with(&format!(
            "the owner (approval page) | {asking} | granted read control (grant "
        )),
        "{said:#?}"
    );
    assert!(
        said[2].starts_with("the client \"Kitchen Agent\" (grant ")
            && said[2].contains(" | signed in from 127.0.0.1 | tokens issued for read control"),
        "{said:#?}"
    );
    assert!(
        said[3].contains(
            " | control_zwave_device {\"action\":\"on\",\"deviceName\":\"Switch One\"} | "
        ),
        "{said:#?}"
    );
    let outcome = entries[3]["outcome"].as_str().unwrap();
    assert!(
        outcome.starts_with("confirmed: ") || outcome.starts_with("acknowledged: "),
        "{outcome}"
    );
    assert!(said[4].contains(" | maintain_zwave_device {\"deviceName\":\"Switch One\",\"operation\":\"check_health\"} | refused: this client's grant does not include `maintenance`"), "{said:#?}");
    assert!(
        said[5].starts_with(
            "the owner's key (or loopback without one) | control_zwave_device {\"action\":\"off\""
        ),
        "{said:#?}"
    );
    assert!(
        entries
            .iter()
            .all(|entry| entry["at"].as_str().is_some_and(|at| at.ends_with('Z')))
    );
}

/// On stdio, with `--state-dir`, the host that started the server is who asked.
#[test]
fn on_stdio_a_state_directory_keeps_the_trail_too() {
    let dir = test_support::mosquitto::ScratchDir::new();
    let state = dir.path().join("state");
    let mut session = Conversation::over(&mut command(&[
        "--demo",
        "--state-dir",
        state.to_str().unwrap(),
    ]));
    let (is_error, text, _) = session.call(
        "control_zwave_device",
        json!({"deviceName": "Switch One", "action": "on"}),
    );
    assert!(!is_error, "{text}");
    let (_, _, _) = session.call("get_device_status", json!({"deviceName": "Switch One"}));
    let entries = trail(&state);
    assert_eq!(entries.len(), 1, "only writes: {entries:#?}");
    assert_eq!(entries[0]["who"], "the stdio host");
    assert_eq!(
        entries[0]["what"],
        "control_zwave_device {\"action\":\"on\",\"deviceName\":\"Switch One\"}"
    );
}
