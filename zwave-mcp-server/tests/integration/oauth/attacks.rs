//! Every way around the owner's yes, each refused with words that say why, and nothing
//! granted: codes replayed or stolen, PKCE wrong or missing, redirect URIs off by a
//! character, forged approvals, wrong keys, reused refresh tokens, foreign tokens.

use serde_json::json;

use super::REDIRECT;
use crate::harness::{Mcp, OAuthHome, Owner, TOKEN, VERIFIER, said};

/// The token endpoint's error code and words for `params`.
async fn token_error(owner: &Owner, params: &[(&str, &str)]) -> (u16, String, String) {
    let answer = owner.token(params).await;
    let body = answer.json();
    (
        answer.status,
        body["error"].as_str().unwrap_or_default().to_owned(),
        body["error_description"]
            .as_str()
            .unwrap_or_default()
            .to_owned(),
    )
}

#[tokio::test]
async fn a_code_is_used_once_and_a_replay_revokes_its_grant() {
    let home = OAuthHome::start().await;
    let owner = Owner::new(&home.issuer);
    let (client, code) = owner.code(REDIRECT, &["read"]).await;
    let tokens = owner.exchange(&client, &code, REDIRECT).await;
    let replay = [
        ("grant_type", "authorization_code"),
        ("client_id", client.as_str()),
        ("code", code.as_str()),
        ("redirect_uri", REDIRECT),
        ("code_verifier", VERIFIER),
    ];
    assert_eq!(
        token_error(&owner, &replay).await,
        (
            400,
            "invalid_grant".into(),
            "the code was used already: the grant it made is revoked, sign in again".into()
        )
    );
    // The tokens the first exchange gave no longer work.
    let agent = Mcp::new(&home.server.url, tokens["access_token"].as_str());
    assert_eq!(agent.initialize(json!({})).await.status, 401);
    let refreshed = token_error(
        &owner,
        &[
            ("grant_type", "refresh_token"),
            ("client_id", &client),
            ("refresh_token", tokens["refresh_token"].as_str().unwrap()),
        ],
    )
    .await;
    assert_eq!(refreshed.1, "invalid_grant", "{refreshed:?}");
}

#[tokio::test]
async fn a_code_needs_its_client_its_verifier_and_its_redirect_uri() {
    let home = OAuthHome::start().await;
    let owner = Owner::new(&home.issuer);
    let (client, code) = owner.code(REDIRECT, &["read"]).await;
    let other = owner.register("Other", REDIRECT).await;
    type Expected<'a> = (u16, &'a str, &'a str);
    let cases: Vec<(Vec<(&str, &str)>, Expected)> = vec![
        (
            vec![
                ("grant_type", "authorization_code"),
                ("client_id", &other),
                ("code", &code),
                ("code_verifier", VERIFIER),
            ],
            (
                400,
                "invalid_grant",
                "the code was issued to another client",
            ),
        ),
        (
            vec![
                ("grant_type", "authorization_code"),
                ("client_id", &client),
                ("code", &code),
                (
                    "code_verifier",
                    "x-wrong-verifier-0123456789-0123456789-0123456789",
                ),
            ],
            (
                400,
                "invalid_grant",
                "code_verifier does not match the code_challenge (PKCE S256)",
            ),
        ),
        (
            vec![
                ("grant_type", "authorization_code"),
                ("client_id", &client),
                ("code", &code),
            ],
            (
                400,
                "invalid_request",
                "code_verifier is missing: this server requires PKCE (S256)",
            ),
        ),
        (
            vec![
                ("grant_type", "authorization_code"),
                ("client_id", &client),
                ("code", &code),
                ("code_verifier", VERIFIER),
                ("redirect_uri", "http://127.0.0.1:45871/callbacK"),
            ],
            (
                400,
                "invalid_grant",
                "redirect_uri is not the one the code was issued for",
            ),
        ),
        (
            vec![
                ("grant_type", "authorization_code"),
                ("client_id", &client),
                ("code", &code),
                ("code_verifier", VERIFIER),
                ("resource", "https://other.example/mcp"),
            ],
            (400, "invalid_target", ""),
        ),
        (
            vec![
                ("grant_type", "authorization_code"),
                ("client_id", &client),
                ("code", "zac1.nothing.here"),
                ("code_verifier", VERIFIER),
            ],
            (
                400,
                "invalid_grant",
                "the code is unknown, or its grant was revoked",
            ),
        ),
        (
            vec![
                ("grant_type", "authorization_code"),
                ("code", &code),
                ("code_verifier", VERIFIER),
            ],
            (
                401,
                "invalid_client",
                "client_id is missing: this server's clients are public and name themselves",
            ),
        ),
        (
            vec![("grant_type", "password"), ("client_id", &client)],
            (
                400,
                "unsupported_grant_type",
                "grant_type \"password\" is not supported (authorization_code, refresh_token)",
            ),
        ),
        (
            vec![
                ("grant_type", "authorization_code"),
                ("client_id", &client),
                ("code", &code),
                ("code", &code),
            ],
            (
                400,
                "invalid_request",
                "the parameter \"code\" is given more than once (RFC 6749 §3.1)",
            ),
        ),
    ];
    for (params, (status, error, words)) in cases {
        let (got_status, got_error, got_words) = token_error(&owner, &params).await;
        assert_eq!(
            (got_status, got_error.as_str()),
            (status, error),
            "{params:?}: {got_words}"
        );
        if !words.is_empty() {
            assert_eq!(got_words, words, "{params:?}");
        } else {
            assert!(
                got_words.starts_with("this server issues tokens for http://127.0.0.1:"),
                "{got_words}"
            );
        }
    }
    // None of those spent the code: the right exchange still works.
    owner.exchange(&client, &code, REDIRECT).await;
}

#[tokio::test]
async fn an_authorization_request_off_by_a_character_is_refused_on_the_page() {
    let home = OAuthHome::start().await;
    let owner = Owner::new(&home.issuer);
    let client = owner.register("App", REDIRECT).await;
    // Said on the page, never sent to an address the client did not register.
    let off = owner
        .page(&Owner::authorize_query(
            &client,
            "http://127.0.0.1:45871/callbacK",
            "read",
        ))
        .await;
    assert_eq!(off.status, 400, "{off:?}");
    assert!(off.header("location").is_empty(), "{off:?}");
    assert!(off.body.contains("The address to go back to, &quot;http://127.0.0.1:45871/callbacK&quot;, is not one the client registered: nothing is sent there."), "{}", off.body);
    let unknown = owner
        .page(&Owner::authorize_query("zc1.unknown", REDIRECT, "read"))
        .await;
    assert_eq!(unknown.status, 400);
    assert!(
        unknown
            .body
            .contains("The client &quot;zc1.unknown&quot; is not registered with this server"),
        "{}",
        unknown.body
    );
    // Anyone may register, so a client the owner never granted is not sent its errors (found
    // by the hostile review: an open redirect); they are said on the page.
    let no_pkce = owner
        .page(&format!(
            "response_type=code&client_id={client}&redirect_uri={REDIRECT}&state=s"
        ))
        .await;
    assert_eq!(no_pkce.status, 400, "{no_pkce:?}");
    assert!(no_pkce.header("location").is_empty(), "{no_pkce:?}");
    assert!(no_pkce.body.contains("The app&#39;s request cannot be answered (invalid_request): code_challenge is missing or malformed: this server requires PKCE with S256."), "{}", no_pkce.body);
    // A client the owner granted is sent its errors, with the state and the issuer.
    let (granted, code) = owner.code(REDIRECT, &["read"]).await;
    owner.exchange(&granted, &code, REDIRECT).await;
    let scope = owner
        .page(&Owner::authorize_query(&granted, REDIRECT, "read admin"))
        .await;
    assert_eq!(scope.status, 303, "{scope:?}");
    assert_eq!(
        scope.location_param("error").as_deref(),
        Some("invalid_scope")
    );
    assert_eq!(
        scope.location_param("error_description").as_deref(),
        Some("\"admin\" is not a scope of this server (read, control, sensitive, maintenance)")
    );
    assert_eq!(scope.location_param("state").as_deref(), Some("st-1"));
    // A registration with a redirect URI a browser would run, or plain http elsewhere.
    for (uri, words) in [
        (
            "javascript:alert(1)",
            "has a scheme a browser would not hand back to an app",
        ),
        ("http://evil.example/cb", "is plain http to another machine"),
    ] {
        let answer = owner.register_with(&json!({"redirect_uris": [uri]})).await;
        assert_eq!(answer.status, 400);
        let body = answer.json();
        assert_eq!(body["error"], "invalid_redirect_uri");
        assert!(
            body["error_description"].as_str().unwrap().contains(words),
            "{body}"
        );
    }
}

#[tokio::test]
async fn an_approval_not_from_the_owner_on_this_page_grants_nothing() {
    let home = OAuthHome::start().await;
    let owner = Owner::new(&home.issuer);
    let client = owner.register("App", REDIRECT).await;
    let page = owner
        .page(&Owner::authorize_query(&client, REDIRECT, "read"))
        .await;
    let form = Owner::form_of(&page);
    // A wrong key: the page again, saying so.
    let wrong = owner
        .decide(
            &form,
            "approve",
            "0123456789abcdef0123456789abcdef",
            &["read"],
        )
        .await;
    assert_eq!(wrong.status, 403, "{wrong:?}");
    assert!(
        wrong
            .body
            .contains("That is not the owner&#39;s key: nothing was granted."),
        "{}",
        wrong.body
    );
    // A CSRF cookie planted by another page (cookies are not kept apart by port): not taken
    // up, a signed one of the server's own is set instead (found by the hostile review).
    let planted = "a".repeat(64);
    let query = Owner::authorize_query(&client, REDIRECT, "read");
    let page = owner
        .get_with(
            &format!("/oauth/authorize?{query}"),
            &format!("zmcp_csrf={planted}"),
        )
        .await;
    assert_eq!(page.status, 200, "{page:?}");
    assert!(!page.body.contains(&planted), "{}", page.body);
    let set = page.header("set-cookie");
    assert!(
        set.starts_with("zmcp_csrf=") && !set.contains(&planted),
        "{set}"
    );
    // One planted before the page's own (a longer path is sent first) does not hide it: the
    // answer gets past the form token, to the owner's key.
    let mut tossed = form.clone();
    tossed.cookie = format!("zmcp_csrf=x; {}", form.cookie);
    let answered = owner
        .decide(&tossed, "approve", "not-the-key-0123456789", &["read"])
        .await;
    assert_eq!(answered.status, 403, "{answered:?}");
    assert!(
        answered.body.contains("That is not the owner"),
        "{}",
        answered.body
    );
    // Without the page's cookie (a forged POST from elsewhere).
    let mut no_cookie = form.clone();
    no_cookie.cookie = "zmcp_csrf=".to_owned() + &"0".repeat(64);
    let forged = owner.decide(&no_cookie, "approve", TOKEN, &["read"]).await;
    assert_eq!(forged.status, 403);
    assert!(
        forged.body.contains("its form token does not match"),
        "{}",
        forged.body
    );
    // A field changed (more scopes asked than the page showed): the tag no longer matches.
    let mut altered = form.clone();
    for (name, value) in &mut altered.fields {
        if name == "asked_scope" {
            *value = "read control sensitive".into();
        }
    }
    let forged = owner.decide(&altered, "approve", TOKEN, &["read"]).await;
    assert_eq!(forged.status, 403);
    assert!(
        forged
            .body
            .contains("does not match the page this server showed"),
        "{}",
        forged.body
    );
    // Posted from another site's page.
    let mut body: Vec<(&str, &str)> = form
        .fields
        .iter()
        .map(|(n, v)| (n.as_str(), v.as_str()))
        .collect();
    body.extend([
        ("scope.read", "on"),
        ("owner_key", TOKEN),
        ("decision", "approve"),
    ]);
    // Another site, or (found by the hostile review) a page on another loopback port, whose
    // cookies a browser does not keep apart from this server's.
    for origin in [
        "https://evil.example",
        "http://127.0.0.1:9999",
        "http://localhost:1",
    ] {
        let cross = owner
            .post_form(
                "/oauth/authorize",
                &body,
                &[("cookie", &form.cookie), ("origin", origin)],
            )
            .await;
        assert_eq!(cross.status, 403, "{origin}");
        assert!(
            cross
                .body
                .contains(&format!("posted from a page at &quot;{origin}&quot;")),
            "{}",
            cross.body
        );
    }
    // Found by the hostile review: a POST naming no origin was taken. Without `Origin`, a
    // same-origin `Referer` (the pages send one) must be this server's; naming neither is
    // refused.
    let foreign_referer = "https://evil.example/consent".to_owned();
    for (headers, said) in [
        (
            vec![],
            "posted from a page that did not say where it was (no Origin or Referer header)",
        ),
        (
            vec![("referer", foreign_referer.as_str())],
            "posted from a page at &quot;https://evil.example/consent&quot;",
        ),
    ] {
        let headers: Vec<(&str, &str)> = [("cookie", form.cookie.as_str())]
            .into_iter()
            .chain(headers)
            .collect();
        let unnamed = owner.post_form("/oauth/authorize", &body, &headers).await;
        assert_eq!(unnamed.status, 403, "{unnamed:?}");
        assert!(unnamed.body.contains(said), "{}", unnamed.body);
    }
    // Denied: the client hears access_denied (posted with the page's own Referer only).
    let own_page = format!("{}/oauth/authorize?client_id=x", home.issuer);
    let mut deny: Vec<(&str, &str)> = form
        .fields
        .iter()
        .map(|(n, v)| (n.as_str(), v.as_str()))
        .collect();
    deny.extend([("owner_key", ""), ("decision", "deny")]);
    let denied = owner
        .post_form(
            "/oauth/authorize",
            &deny,
            &[("cookie", &form.cookie), ("referer", &own_page)],
        )
        .await;
    assert_eq!(denied.status, 303);
    assert_eq!(
        denied.location_param("error").as_deref(),
        Some("access_denied")
    );
    // Nothing of this granted anything: the book has no grant.
    let book = std::fs::read_to_string(home.key.dir().join("state/oauth.json")).unwrap();
    let book: serde_json::Value = serde_json::from_str(&book).unwrap();
    assert_eq!(book["grants"], json!([]), "{book}");
}

#[tokio::test]
async fn a_refresh_token_used_twice_revokes_the_grant() {
    let home = OAuthHome::start().await;
    let owner = Owner::new(&home.issuer);
    let (client, code) = owner.code(REDIRECT, &["read"]).await;
    let tokens = owner.exchange(&client, &code, REDIRECT).await;
    let first = tokens["refresh_token"].as_str().unwrap();
    let refresh = |token: &str| {
        vec![
            ("grant_type".to_owned(), "refresh_token".to_owned()),
            ("client_id".to_owned(), client.clone()),
            ("refresh_token".to_owned(), token.to_owned()),
        ]
    };
    let as_refs = |pairs: &[(String, String)]| -> Vec<(String, String)> { pairs.to_vec() };
    let pairs = as_refs(&refresh(first));
    let params: Vec<(&str, &str)> = pairs
        .iter()
        .map(|(n, v)| (n.as_str(), v.as_str()))
        .collect();
    let renewed = owner.token(&params).await.json();
    let reused = token_error(&owner, &params).await;
    assert_eq!(
        reused,
        (400, "invalid_grant".into(), "the refresh token was used already (each is used once): the grant is revoked, sign in again".into())
    );
    // The thief's use ended the rightful holder's grant too.
    let agent = Mcp::new(&home.server.url, renewed["access_token"].as_str());
    let after = agent.initialize(json!({})).await;
    assert_eq!(after.status, 401);
    assert_eq!(
        said(&after.body),
        "the access token's grant was revoked by the owner: sign in again (nothing was done)"
    );
}

#[tokio::test]
async fn a_token_not_issued_here_for_this_resource_is_refused() {
    let home = OAuthHome::start().await;
    let owner = Owner::new(&home.issuer);
    let (client, code) = owner.code(REDIRECT, &["read"]).await;
    let tokens = owner.exchange(&client, &code, REDIRECT).await;
    let access = tokens["access_token"].as_str().unwrap();
    // Its scopes raised by hand: the signature no longer matches.
    let parts: Vec<&str> = access.split('.').collect();
    let raised = format!("{}.{}.15.{}.{}", parts[0], parts[1], parts[3], parts[4]);
    // A token signed by another server (another key, same shape).
    let other = OAuthHome::start().await;
    let other_owner = Owner::new(&other.issuer);
    let (other_client, other_code) = other_owner.code(REDIRECT, &["read"]).await;
    let foreign = other_owner
        .exchange(&other_client, &other_code, REDIRECT)
        .await;
    for token in [raised.as_str(), foreign["access_token"].as_str().unwrap()] {
        let reply = Mcp::new(&home.server.url, Some(token))
            .initialize(json!({}))
            .await;
        assert_eq!(reply.status, 401, "{token}");
        assert_eq!(
            said(&reply.body),
            "the bearer token is not this server's: nothing was done"
        );
        assert!(
            reply
                .header("www-authenticate")
                .ends_with(", error=\"invalid_token\""),
            "{reply:?}"
        );
    }
}
