//! The owner's page of grants: signed in with the owner's key, it lists each client granted
//! (its name escaped, its scopes, when, from where) and revokes one, whose tokens then stop;
//! a revocation not from the signed-in owner's page revokes nothing.

use serde_json::json;

use super::REDIRECT;
use crate::harness::{Mcp, OAuthHome, Owner, TOKEN, cookies_of};

#[tokio::test]
async fn the_owner_sees_each_grant_and_revokes_it() {
    let home = OAuthHome::start().await;
    let owner = Owner::new(&home.issuer);
    let client = owner.register("Evil <b>App</b>", REDIRECT).await;
    let page = owner
        .page(&Owner::authorize_query(&client, REDIRECT, "read control"))
        .await;
    let answer = owner
        .decide(
            &Owner::form_of(&page),
            "approve",
            TOKEN,
            &["read", "control"],
        )
        .await;
    let code = answer.location_param("code").unwrap();
    let tokens = owner.exchange(&client, &code, REDIRECT).await;

    // Not signed in: the sign-in form, and nothing of the grants.
    let first = owner.get("/oauth/grants").await;
    assert_eq!(first.status, 200);
    assert!(
        first.body.contains("Sign in as the owner"),
        "{}",
        first.body
    );
    assert!(!first.body.contains("Evil"), "{}", first.body);
    let csrf = cookies_of(&first);
    let fields = Owner::fields_after(&first.body, "/oauth/grants/sign-in");
    let sign_in = |key: &'static str| {
        let mut body: Vec<(String, String)> = fields.clone();
        body.push(("owner_key".into(), key.into()));
        body
    };
    let post = |path: &'static str, body: Vec<(String, String)>, cookie: String, origin: String| {
        let owner = &owner;
        async move {
            let pairs: Vec<(&str, &str)> =
                body.iter().map(|(n, v)| (n.as_str(), v.as_str())).collect();
            owner
                .post_form(path, &pairs, &[("cookie", &cookie), ("origin", &origin)])
                .await
        }
    };
    let wrong = post(
        "/oauth/grants/sign-in",
        sign_in("0123456789abcdef0123456789abcdef"),
        csrf.clone(),
        home.issuer.clone(),
    )
    .await;
    assert_eq!(wrong.status, 403);
    assert!(
        wrong.body.contains("That is not the owner&#39;s key."),
        "{}",
        wrong.body
    );
    let signed = post(
        "/oauth/grants/sign-in",
        sign_in(TOKEN),
        csrf.clone(),
        home.issuer.clone(),
    )
    .await;
    assert_eq!(signed.status, 303, "{signed:?}");
    let session = format!("{csrf}; {}", cookies_of(&signed));
    assert!(session.contains("zmcp_owner="), "{session}");

    // Signed in: the grant, its client's own name escaped, its scopes, from where.
    let listed = owner.get_with("/oauth/grants", &session).await;
    assert!(
        listed
            .body
            .contains("<td>Evil &lt;b&gt;App&lt;/b&gt;</td><td>read control</td>"),
        "{}",
        listed.body
    );
    assert!(
        listed.body.contains("<small>from 127.0.0.1</small>"),
        "{}",
        listed.body
    );
    assert!(
        listed
            .header("content-security-policy")
            .contains("frame-ancestors 'none'")
    );
    let revoke = Owner::fields_after(&listed.body, "/oauth/grants/revoke");

    // A revoke posted from another site, or without the owner's session, revokes nothing.
    let cross = post(
        "/oauth/grants/revoke",
        revoke.clone(),
        session.clone(),
        "https://evil.example".into(),
    )
    .await;
    assert_eq!(cross.status, 403);
    let pairs: Vec<(&str, &str)> = revoke
        .iter()
        .map(|(n, v)| (n.as_str(), v.as_str()))
        .collect();
    let unnamed = owner
        .post_form("/oauth/grants/revoke", &pairs, &[("cookie", &session)])
        .await;
    assert_eq!(unnamed.status, 403, "{unnamed:?}");
    assert!(
        unnamed.body.contains("This form was posted from a page that did not say where it was (no Origin or Referer header), not from this server's own page: nothing was done."),
        "{}",
        unnamed.body
    );
    let unsigned = post(
        "/oauth/grants/revoke",
        revoke.clone(),
        csrf.clone(),
        home.issuer.clone(),
    )
    .await;
    assert_eq!(unsigned.status, 403);
    assert!(
        unsigned.body.contains("Sign in as the owner first"),
        "{}",
        unsigned.body
    );
    let agent = Mcp::new(&home.server.url, tokens["access_token"].as_str());
    assert_eq!(agent.initialize(json!({})).await.status, 200);

    // The owner's revoke: the client's tokens stop, the page says no app may use the home.
    let revoked = post(
        "/oauth/grants/revoke",
        revoke,
        session.clone(),
        home.issuer.clone(),
    )
    .await;
    assert_eq!(revoked.status, 303, "{revoked:?}");
    assert_eq!(revoked.header("location"), "/oauth/grants");
    assert_eq!(agent.initialize(json!({})).await.status, 401);
    let after = owner.get_with("/oauth/grants", &session).await;
    assert!(
        after.body.contains("No app may use this home"),
        "{}",
        after.body
    );
}

/// Found by the Python SDK's step-up: a client granted again (more scopes) kept its first,
/// narrower grant beside the new one, so the owner's revocation of one row left the app in.
/// Its new tokens now end its earlier grants: the page shows the app once.
#[tokio::test]
async fn a_client_granted_again_holds_one_grant() {
    let home = OAuthHome::start().await;
    let owner = Owner::new(&home.issuer);
    let client = owner.register("Stepping App", REDIRECT).await;
    let mut access = Vec::new();
    for scopes in [&["read"][..], &["read", "control"][..]] {
        let page = owner
            .page(&Owner::authorize_query(
                &client,
                REDIRECT,
                &scopes.join(" "),
            ))
            .await;
        // The owner is told when the app holds a grant already (found by the hostile
        // review: another app on the machine may be using its id).
        assert_eq!(
            page.body
                .contains("This app already holds a grant (<strong>read</strong>, since "),
            access.len() == 1,
            "{}",
            page.body
        );
        let answer = owner
            .decide(&Owner::form_of(&page), "approve", TOKEN, scopes)
            .await;
        let code = answer.location_param("code").unwrap();
        let tokens = owner.exchange(&client, &code, REDIRECT).await;
        access.push(tokens["access_token"].as_str().unwrap().to_owned());
    }
    let first = Mcp::new(&home.server.url, Some(&access[0]));
    assert_eq!(first.initialize(json!({})).await.status, 401);
    let second = Mcp::new(&home.server.url, Some(&access[1]));
    assert_eq!(second.initialize(json!({})).await.status, 200);
    owner.revoke_on_page("Stepping App").await;
    assert_eq!(second.initialize(json!({})).await.status, 401);
    let audit = std::fs::read_to_string(home.key.dir().join("state/audit.jsonl")).unwrap();
    assert!(
        audit.contains("replaced the client's earlier grant"),
        "{audit}"
    );
}

/// Found by the hostile review: the owner's session on the page, once begun, could not be
/// ended before its hour (a shared or lost device stayed signed in). "Sign out everywhere"
/// ends it in this browser and every other, in every process on the state directory.
#[tokio::test]
async fn the_owner_signs_out_everywhere() {
    let home = OAuthHome::start().await;
    let owner = Owner::new(&home.issuer);
    // Two browsers sign in; each sees the page of grants.
    let mut browsers = Vec::new();
    for _ in 0..2 {
        let first = owner.get("/oauth/grants").await;
        let csrf = cookies_of(&first);
        let mut body = Owner::fields_after(&first.body, "/oauth/grants/sign-in");
        body.push(("owner_key".into(), TOKEN.into()));
        let pairs: Vec<(&str, &str)> = body.iter().map(|(n, v)| (n.as_str(), v.as_str())).collect();
        let signed = owner
            .post_form(
                "/oauth/grants/sign-in",
                &pairs,
                &[("cookie", &csrf), ("origin", &home.issuer)],
            )
            .await;
        assert_eq!(signed.status, 303, "{signed:?}");
        browsers.push(format!("{csrf}; {}", cookies_of(&signed)));
    }
    // Found by the hostile review: a cookie planted by a page on another port (sent first,
    // for a longer path) hid the owner's own session. The first one signed here is taken.
    let planted = format!(
        "zmcp_owner=x; zmcp_owner=99999999999999.{}; {}",
        "0".repeat(64),
        browsers[0]
    );
    let shadowed = owner.get_with("/oauth/grants", &planted).await;
    assert!(
        shadowed.body.contains("Sign out everywhere"),
        "{}",
        shadowed.body
    );
    let mut forms = Vec::new();
    for browser in &browsers {
        let page = owner.get_with("/oauth/grants", browser).await;
        assert!(page.body.contains("Sign out everywhere"), "{}", page.body);
        forms.push(Owner::fields_after(&page.body, "/oauth/grants/sign-out"));
    }
    let (first_form, second_form) = (&forms[0], &forms[1]);
    let pairs: Vec<(&str, &str)> = first_form
        .iter()
        .map(|(n, v)| (n.as_str(), v.as_str()))
        .collect();
    // A form whose tag is not this server's signs nobody out, nor in.
    let forged: Vec<(&str, &str)> = pairs
        .iter()
        .map(|&(name, value)| (name, if name == "tag" { "0000" } else { value }))
        .collect();
    for (path, said) in [
        (
            "/oauth/grants/sign-out",
            "This form was not this server&#39;s: nobody was signed out.",
        ),
        (
            "/oauth/grants/sign-in",
            "This form was not this server&#39;s: sign in again.",
        ),
    ] {
        let refused = owner
            .post_form(
                path,
                &forged,
                &[("cookie", &browsers[0]), ("origin", &home.issuer)],
            )
            .await;
        assert_eq!(refused.status, 403, "{path}: {refused:?}");
        assert!(refused.body.contains(said), "{path}: {}", refused.body);
    }
    let still = owner.get_with("/oauth/grants", &browsers[0]).await;
    assert!(still.body.contains("Sign out everywhere"), "{}", still.body);
    let out = owner
        .post_form(
            "/oauth/grants/sign-out",
            &pairs,
            &[("cookie", &browsers[0]), ("origin", &home.issuer)],
        )
        .await;
    assert_eq!(out.status, 303, "{out:?}");
    assert!(
        out.header("set-cookie")
            .starts_with("zmcp_owner=; Path=/oauth; HttpOnly; SameSite=Strict; Max-Age=0"),
        "{out:?}"
    );
    // Both browsers' sessions have ended, the old cookie kept or not.
    for browser in &browsers {
        let after = owner.get_with("/oauth/grants", browser).await;
        assert!(
            after.body.contains("Sign in as the owner to see"),
            "{}",
            after.body
        );
    }
    // A sign-out from a browser not signed in signs nobody out, and says so.
    let pairs: Vec<(&str, &str)> = second_form
        .iter()
        .map(|(n, v)| (n.as_str(), v.as_str()))
        .collect();
    let again = owner
        .post_form(
            "/oauth/grants/sign-out",
            &pairs,
            &[("cookie", &browsers[1]), ("origin", &home.issuer)],
        )
        .await;
    assert_eq!(again.status, 403, "{again:?}");
    assert!(
        again
            .body
            .contains("Sign in as the owner first: nobody was signed out."),
        "{}",
        again.body
    );
    let audit = std::fs::read_to_string(home.key.dir().join("state/audit.jsonl")).unwrap();
    assert!(audit.contains("signed out everywhere"), "{audit}");
}
