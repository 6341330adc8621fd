//! A client signs in as hosts do (metadata, registration, the owner's yes, PKCE) and then
//! works within what the owner granted, no further.

use serde_json::json;

use super::REDIRECT;
use crate::harness::{Mcp, OAuthHome, Owner, TOKEN, TokenFile, tool_call};

#[tokio::test]
async fn the_metadata_and_the_401_point_a_client_at_signing_in() {
    let home = OAuthHome::start().await;
    let owner = Owner::new(&home.issuer);
    let issuer = &home.issuer;
    for path in [
        "/.well-known/oauth-protected-resource/mcp",
        "/.well-known/oauth-protected-resource",
    ] {
        let resource = owner.get(path).await;
        assert_eq!(resource.status, 200, "{resource:?}");
        assert_eq!(
            resource.json(),
            json!({
                "resource": format!("{issuer}/mcp"),
                "authorization_servers": [issuer],
                "scopes_supported": ["read", "control", "sensitive", "maintenance"],
                "bearer_methods_supported": ["header"],
                "resource_name": "Z-Wave home (zwave-mcp-server)",
            })
        );
    }
    let server = owner
        .get("/.well-known/oauth-authorization-server")
        .await
        .json();
    assert_eq!(server["issuer"], *issuer);
    assert_eq!(
        server["authorization_endpoint"],
        format!("{issuer}/oauth/authorize")
    );
    assert_eq!(server["token_endpoint"], format!("{issuer}/oauth/token"));
    assert_eq!(
        server["registration_endpoint"],
        format!("{issuer}/oauth/register")
    );
    assert_eq!(
        server["revocation_endpoint"],
        format!("{issuer}/oauth/revoke")
    );
    assert_eq!(server["code_challenge_methods_supported"], json!(["S256"]));
    assert_eq!(
        server["authorization_response_iss_parameter_supported"],
        true
    );
    // Without a token, /mcp says where to sign in.
    let refused = Mcp::new(&home.server.url, None)
        .send(
            Mcp::new(&home.server.url, None)
                .post(None, &tool_call(1, "list_zwave_devices", json!({}))),
        )
        .await;
    assert_eq!(refused.status, 401);
    assert_eq!(
        refused.header("www-authenticate"),
        format!(
            "Bearer resource_metadata=\"{issuer}/.well-known/oauth-protected-resource/mcp\", scope=\"read control\""
        )
    );
    let unknown = owner.get("/oauth/nothing").await;
    assert_eq!(unknown.status, 404);
    assert_eq!(
        unknown.json()["error_description"],
        "nothing is served at \"/oauth/nothing\""
    );
}

#[tokio::test]
async fn a_client_signs_in_with_the_owners_yes_and_works_within_its_grant() {
    let home = OAuthHome::start().await;
    let owner = Owner::new(&home.issuer);
    let client = owner.register("Kitchen <Agent>", REDIRECT).await;
    let page = owner
        .page(&Owner::authorize_query(&client, REDIRECT, "read"))
        .await;
    // The page says who asks (escaped) and where the person goes back, and cannot be framed.
    assert!(page.body.contains("An app that calls itself <strong>Kitchen &lt;Agent&gt;</strong> asks to use this home. When you answer, your browser goes back to <strong>http://127.0.0.1:45871</strong>."), "{}", page.body);
    assert!(
        page.header("content-security-policy")
            .contains("frame-ancestors 'none'")
    );
    assert_eq!(page.header("x-frame-options"), "DENY");
    assert!(
        page.header("set-cookie")
            .contains("HttpOnly; SameSite=Strict"),
        "{page:?}"
    );
    assert!(
        page.body
            .contains("name=\"scope.read\" value=\"on\" checked"),
        "{}",
        page.body
    );
    assert!(
        !page
            .body
            .contains("name=\"scope.control\" value=\"on\" checked"),
        "{}",
        page.body
    );
    let form = Owner::form_of(&page);
    let answer = owner.decide(&form, "approve", TOKEN, &["read"]).await;
    assert_eq!(answer.status, 303, "{answer:?}");
    assert!(
        answer
            .header("location")
            .starts_with(&format!("{REDIRECT}?code=zac1.")),
        "{answer:?}"
    );
    assert_eq!(answer.location_param("state").as_deref(), Some("st-1"));
    assert_eq!(
        answer.location_param("iss").as_deref(),
        Some(home.issuer.as_str())
    );
    let code = answer.location_param("code").unwrap();
    let tokens = owner.exchange(&client, &code, REDIRECT).await;
    assert_eq!(tokens["token_type"], "Bearer");
    assert_eq!(tokens["expires_in"], 600);
    assert_eq!(tokens["scope"], "read");
    let access = tokens["access_token"].as_str().unwrap();

    // Within the grant: the read tools only, listed and called.
    let agent = Mcp::new(&home.server.url, Some(access));
    let session = agent.open(json!({})).await;
    let names = agent.tool_names(&session).await;
    assert_eq!(names.len(), 4, "{names:?}");
    assert!(
        !names.iter().any(|name| name == "control_zwave_device"),
        "{names:?}"
    );
    let status = agent
        .call(
            &session,
            3,
            "get_device_status",
            json!({"deviceName": "Switch One"}),
        )
        .await;
    assert_eq!(status.status, 200, "{status:?}");
    assert!(!status.tool_text().0, "{status:?}");
    // Beyond it: 403 naming the scope, so that the client can ask for it.
    let control = agent
        .call(
            &session,
            4,
            "control_zwave_device",
            json!({"deviceName": "Switch One", "action": "on"}),
        )
        .await;
    assert_eq!(control.status, 403, "{control:?}");
    assert_eq!(
        control.header("www-authenticate"),
        format!(
            "Bearer error=\"insufficient_scope\", scope=\"read control\", resource_metadata=\"{}/.well-known/oauth-protected-resource/mcp\"",
            home.issuer
        )
    );
    assert_eq!(
        crate::harness::said(&control.body),
        "this client's grant does not include `control`, which tools/call needs: the owner can grant it when the client signs in again asking for it (nothing was done)"
    );
    // With the request's id (found against the real Z-Wave JS UI: it was null).
    let refused: serde_json::Value = serde_json::from_str(&control.body).unwrap();
    assert_eq!(refused["id"], 4, "{refused}");

    // The refresh token rotates; the new access token works, the old refresh token is spent.
    let refresh = tokens["refresh_token"].as_str().unwrap();
    let renewed = owner
        .token(&[
            ("grant_type", "refresh_token"),
            ("client_id", &client),
            ("refresh_token", refresh),
        ])
        .await;
    assert_eq!(renewed.status, 200, "{renewed:?}");
    let renewed = renewed.json();
    assert_ne!(renewed["refresh_token"], tokens["refresh_token"]);
    let again = Mcp::new(&home.server.url, renewed["access_token"].as_str());
    again.open(json!({})).await;

    // RFC 7009: the client revokes; its tokens are refused at the next request.
    let revoked = owner
        .post_form(
            "/oauth/revoke",
            &[
                ("token", renewed["refresh_token"].as_str().unwrap()),
                ("client_id", &client),
            ],
            &[],
        )
        .await;
    assert_eq!(revoked.status, 200, "{revoked:?}");
    let after = again.initialize(json!({})).await;
    assert_eq!(after.status, 401, "{after:?}");
    assert_eq!(
        crate::harness::said(&after.body),
        "the access token's grant was revoked by the owner: sign in again (nothing was done)"
    );
}

/// A grant of `control` but not `sensitive`: unlocking is refused inside the call, saying
/// which scope it lacks, before any person is asked; where the owner does not allow unlocking
/// at all, the client is told that instead (found against the real Z-Wave JS UI: it was sent
/// to sign in again for a scope that could not help).
#[tokio::test]
async fn a_sensitive_action_needs_the_sensitive_scope() {
    for (flags, expected) in [
        (
            &["--allow-sensitive", "lock"][..],
            "is a sensitive action (it opens the home), and the owner's grant to this client does not include `sensitive`: nothing was sent.",
        ),
        (
            &[][..],
            "is a sensitive action (it opens the home) and the owner of this server has not allowed it: nothing was sent. The owner can allow it with --allow-sensitive lock",
        ),
    ] {
        let key = TokenFile::new(TOKEN);
        let state = key.dir().join("state");
        let home = OAuthHome::start_with(key, &state, flags).await;
        let owner = Owner::new(&home.issuer);
        let (client, code) = owner.code(REDIRECT, &["read", "control"]).await;
        let tokens = owner.exchange(&client, &code, REDIRECT).await;
        let agent = Mcp::new(&home.server.url, tokens["access_token"].as_str());
        let session = agent.open(json!({"elicitation": {}})).await;
        let unlock = agent
            .call(
                &session,
                2,
                "control_zwave_device",
                json!({"deviceName": "Front Door Lock", "action": "unlock"}),
            )
            .await;
        let (is_error, text) = unlock.tool_text();
        assert!(is_error, "{unlock:?}");
        assert!(text.contains(expected), "{flags:?}: {text}");
    }
}
