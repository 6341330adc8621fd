//! A granted client's sessions: each is its opener's (another client, or the owner's key,
//! naming it gets the 404 of a session not there, word for word), and its open answers, the listen stream
//! above all, end when its grant is revoked.

use std::time::Duration;

use serde_json::json;

use super::REDIRECT;
use crate::harness::{Events, Mcp, OAuthHome, Owner, TOKEN, TokenFile};

/// A client granted `scopes`, signed in: its access token.
async fn signed_in(owner: &Owner, scopes: &[&str]) -> String {
    let (client, code) = owner.code(REDIRECT, scopes).await;
    let tokens = owner.exchange(&client, &code, REDIRECT).await;
    tokens["access_token"].as_str().unwrap().to_owned()
}

#[tokio::test]
async fn a_revoked_clients_listen_stream_ends() {
    let home = OAuthHome::start().await;
    let owner = Owner::new(&home.issuer);
    let access = signed_in(&owner, &["read"]).await;
    let agent = Mcp::new(&home.server.url, Some(&access));
    let session = agent.open(json!({})).await;
    let listening = agent
        .request(reqwest::Method::GET, Some(&session))
        .send()
        .await
        .unwrap();
    assert_eq!(listening.status().as_u16(), 200, "{listening:?}");
    let mut events = Events::of(listening);

    owner.revoke_on_page("Test Client").await;
    // Ended by the server (within a second of the revocation), nothing sent after it.
    assert_eq!(events.next(Duration::from_secs(20)).await, None);
    let again = agent
        .send(agent.post(
            Some(&session),
            &json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}),
        ))
        .await;
    assert_eq!(again.status, 401, "{again:?}");
}

#[tokio::test]
async fn a_session_is_its_openers_own() {
    let home = OAuthHome::start().await;
    let owner = Owner::new(&home.issuer);
    let first = Mcp::new(&home.server.url, Some(&signed_in(&owner, &["read"]).await));
    let second = Mcp::new(&home.server.url, Some(&signed_in(&owner, &["read"]).await));
    let session = first.open(json!({})).await;
    let list = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"});
    for (who, other) in [
        ("another client", second),
        ("the owner's key", Mcp::new(&home.server.url, Some(TOKEN))),
    ] {
        let refused = other.send(other.post(Some(&session), &list)).await;
        // As for a session that is not there: nothing tells that it exists.
        assert_eq!(refused.status, 404, "{who}: {refused:?}");
        assert_eq!(refused.body, "Not Found: Session not found", "{who}");
        let listen = other
            .request(reqwest::Method::GET, Some(&session))
            .send()
            .await
            .unwrap();
        assert_eq!(listen.status().as_u16(), 404, "{who}");
    }
    let own = first.send(first.post(Some(&session), &list)).await;
    assert_eq!(own.status, 200, "{own:?}");
}

/// Found by the hostile review: a malformed request told which sessions exist (another's
/// got 404, an unknown one rmcp's 406, 415 or 405). Every way of asking now answers the two
/// alike, and the session's own client is answered as rmcp answers it.
#[tokio::test]
async fn a_malformed_request_does_not_tell_whether_a_session_exists() {
    let home = OAuthHome::start().await;
    let owner = Owner::new(&home.issuer);
    let first = signed_in(&owner, &["read"]).await;
    let second = signed_in(&owner, &["read"]).await;
    let session = Mcp::new(&home.server.url, Some(&first))
        .open(json!({}))
        .await;
    let unknown = "0f0e0d0c-0b0a-4909-8807-060504030201";
    let http = reqwest::Client::builder().no_proxy().build().unwrap();
    let list = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}).to_string();
    // (how, method, Accept, Content-Type)
    let malformed = [
        (
            "a POST accepting text only",
            "POST",
            "text/plain",
            "application/json",
        ),
        (
            "a POST of text",
            "POST",
            "application/json, text/event-stream",
            "text/plain",
        ),
        (
            "a PUT",
            "PUT",
            "application/json, text/event-stream",
            "application/json",
        ),
        (
            "a listen stream accepting JSON only",
            "GET",
            "application/json",
            "",
        ),
    ];
    let ask =
        |token: &str, id: &str, (_, method, accept, content_type): (&str, &str, &str, &str)| {
            let mut request = http
                .request(method.parse().unwrap(), &home.server.url)
                .header("authorization", format!("Bearer {token}"))
                .header("mcp-session-id", id)
                .header("accept", accept);
            if !content_type.is_empty() {
                request = request
                    .header("content-type", content_type)
                    .body(list.clone());
            }
            async move {
                let answer = request.send().await.unwrap();
                (answer.status().as_u16(), answer.text().await.unwrap())
            }
        };
    for how in malformed {
        let theirs = ask(&second, &session, how).await;
        let nobodys = ask(&second, unknown, how).await;
        assert_eq!(theirs, nobodys, "{}", how.0);
        assert_eq!(theirs.0, 404, "{}: {theirs:?}", how.0);
        let own = ask(&first, &session, how).await;
        assert!([405, 406, 415].contains(&own.0), "{}: {own:?}", how.0);
    }
}

/// Found by the hostile review: one client could open every session the server keeps, and
/// its revocation left them in place until they expired, keeping the owner out; then, two
/// clients at 16 each filled a cap of 30. One client holds at most 16, granted clients
/// together all but a quarter, kept for the owner's key; a revoked client's sessions are
/// closed when room is needed.
#[tokio::test]
async fn clients_cannot_keep_the_owner_out() {
    let key = TokenFile::new(TOKEN);
    let state = key.dir().join("state");
    let home = OAuthHome::start_with(key, &state, &["--http-max-sessions", "40"]).await;
    let owner = Owner::new(&home.issuer);
    let first = Mcp::new(&home.server.url, Some(&signed_in(&owner, &["read"]).await));
    for _ in 0..16 {
        first.open(json!({})).await;
    }
    let refused = first.initialize(json!({})).await;
    assert_eq!(refused.status, 503, "{refused:?}");
    assert!(
        refused
            .body
            .contains("this client holds 16 MCP sessions, the most one client may"),
        "{}",
        refused.body
    );
    let second = Mcp::new(&home.server.url, Some(&signed_in(&owner, &["read"]).await));
    for _ in 0..14 {
        second.open(json!({})).await;
    }
    let refused = second.initialize(json!({})).await;
    assert_eq!(refused.status, 503, "{refused:?}");
    assert_eq!(refused.header("retry-after"), "30");
    assert!(
        refused.body.contains("granted apps hold 30 MCP sessions together, the most they may (the owner's key keeps 10 more): try again when one has ended or expired"),
        "{}",
        refused.body
    );
    let keyholder = Mcp::new(&home.server.url, Some(TOKEN));
    for _ in 0..10 {
        keyholder.open(json!({})).await;
    }
    assert_eq!(keyholder.initialize(json!({})).await.status, 503);
    owner.revoke_on_page("Test Client").await;
    let room = keyholder.initialize(json!({})).await;
    assert_eq!(room.status, 200, "{room:?}");
}

/// Found by the hostile review: a revoked client's sessions kept the clients' share full
/// until they expired, and a cap below 4 kept the owner's key nothing. With 3 places, clients
/// hold 2 and the owner's key keeps 1; a revocation makes room in the share at once.
#[tokio::test]
async fn a_revocation_makes_room_in_the_clients_share() {
    let key = TokenFile::new(TOKEN);
    let state = key.dir().join("state");
    let home = OAuthHome::start_with(key, &state, &["--http-max-sessions", "3"]).await;
    let owner = Owner::new(&home.issuer);
    let first = Mcp::new(&home.server.url, Some(&signed_in(&owner, &["read"]).await));
    first.open(json!({})).await;
    first.open(json!({})).await;
    let second = Mcp::new(&home.server.url, Some(&signed_in(&owner, &["read"]).await));
    let refused = second.initialize(json!({})).await;
    assert_eq!(refused.status, 503, "{refused:?}");
    assert!(
        refused.body.contains("granted apps hold 2 MCP sessions together, the most they may (the owner's key keeps 1 more)"),
        "{}",
        refused.body
    );
    Mcp::new(&home.server.url, Some(TOKEN))
        .open(json!({}))
        .await;
    owner.revoke_on_page("Test Client").await;
    let room = second.initialize(json!({})).await;
    assert_eq!(room.status, 200, "{room:?}");
}

/// Found by the re-check: with one place, clients could take it and leave the owner's key
/// none. The one place is the owner's key's.
#[tokio::test]
async fn with_one_place_it_is_the_owners() {
    let key = TokenFile::new(TOKEN);
    let state = key.dir().join("state");
    let home = OAuthHome::start_with(key, &state, &["--http-max-sessions", "1"]).await;
    let owner = Owner::new(&home.issuer);
    let client = Mcp::new(&home.server.url, Some(&signed_in(&owner, &["read"]).await));
    let refused = client.initialize(json!({})).await;
    assert_eq!(refused.status, 503, "{refused:?}");
    assert_eq!(
        crate::harness::said(&refused.body),
        "granted apps hold 0 MCP sessions together, the most they may (the owner's key keeps 1 more): try again when one has ended or expired"
    );
    Mcp::new(&home.server.url, Some(TOKEN))
        .open(json!({}))
        .await;
}

/// Found by the hostile review: the cap counted the sessions recorded, so 30 `initialize`s
/// sent at once all passed it. A place is now taken before rmcp opens the session.
#[tokio::test]
async fn a_client_opening_many_sessions_at_once_gets_sixteen() {
    let key = TokenFile::new(TOKEN);
    let state = key.dir().join("state");
    let home = OAuthHome::start_with(key, &state, &["--http-max-sessions", "40"]).await;
    let owner = Owner::new(&home.issuer);
    let access = signed_in(&owner, &["read"]).await;
    let opening: Vec<_> = (0..30)
        .map(|_| {
            let client = Mcp::new(&home.server.url, Some(&access));
            tokio::spawn(async move { client.initialize(json!({})).await.status })
        })
        .collect();
    let mut opened = 0;
    for status in opening {
        match status.await.unwrap() {
            200 => opened += 1,
            503 => {}
            other => panic!("HTTP {other}"),
        }
    }
    assert_eq!(opened, 16);
}
