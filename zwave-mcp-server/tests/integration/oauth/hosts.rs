//! Claude's, ChatGPT's and Home Assistant's documented sign-in flows, step by step as each
//! host sends them (`fixtures/hosts/FACTS.md`), against the real binary: the URL a person
//! types, the 401, discovery, registration with the host's own body, the owner's yes on the
//! page, the token request with (or, Home Assistant, without) `resource`, tools within the
//! grant, and a refresh as the host asks it.

use serde_json::{Value, json};

use crate::harness::{Mcp, OAuthHome, Owner, challenge_of};

/// One host's way of signing in, as `fixtures/hosts/FACTS.md` records it.
struct Host {
    /// The name it registers with.
    client_name: &'static str,
    /// Where the person's browser goes back to.
    redirect_uri: &'static str,
    /// Whether it sends RFC 8707 `resource` on the authorization, token and refresh requests.
    sends_resource: bool,
    /// What else it puts in the registration.
    registration_extra: Value,
    /// What else it puts in the authorization request.
    authorize_extra: &'static [(&'static str, &'static str)],
    /// Its `state` (Home Assistant's is a JWT of a few hundred characters).
    state: String,
    /// Its PKCE verifier.
    verifier: String,
}

/// What a host holds once signed in.
struct SignedIn {
    client_id: String,
    tokens: Value,
    registration: Value,
}

/// The value of `name="…"` in a `WWW-Authenticate` header.
fn param(header: &str, name: &str) -> String {
    header
        .split(&format!("{name}=\""))
        .nth(1)
        .and_then(|rest| rest.split('"').next())
        .unwrap_or_else(|| panic!("no {name} in {header}"))
        .to_owned()
}

/// An absolute URL of this server, as a path `Owner` asks for.
fn path_of<'a>(home: &OAuthHome, url: &'a str) -> &'a str {
    url.strip_prefix(&home.issuer)
        .unwrap_or_else(|| panic!("{url} is not on {}", home.issuer))
}

/// `host` signs in to `home` as it documents it, the owner granting `read control`.
async fn sign_in(home: &OAuthHome, host: &Host) -> SignedIn {
    let owner = Owner::new(&home.issuer);
    // What the person types into the host.
    let typed = format!("{}/mcp", home.issuer);

    // 1. The first request has no token: 401, and where to look.
    let refused = Mcp::new(&typed, None).initialize(json!({})).await;
    assert_eq!(refused.status, 401, "{refused:?}");
    let challenge = refused.header("www-authenticate");
    let scope = param(challenge, "scope");
    assert_eq!(scope, "read control");

    // 2. The resource's metadata from the header's URL; Home Assistant also tries the two
    // well-known places and takes none whose `resource` is not exactly the URL typed.
    let metadata_url = param(challenge, "resource_metadata");
    for url in [
        metadata_url.clone(),
        format!("{}/.well-known/oauth-protected-resource/mcp", home.issuer),
        format!("{}/.well-known/oauth-protected-resource", home.issuer),
    ] {
        let resource = owner.get(path_of(home, &url)).await;
        assert_eq!(resource.status, 200, "{url}: {resource:?}");
        assert_eq!(resource.json()["resource"], typed.as_str(), "{url}");
    }
    let resource = owner.get(path_of(home, &metadata_url)).await.json();
    let issuer = resource["authorization_servers"][0].as_str().unwrap();
    assert_eq!(issuer, home.issuer);

    // 3. The server's metadata. Home Assistant asks OpenID's place at the same time and
    // reads its 404 as "not here"; ChatGPT refuses a server without S256; Claude's CIMD
    // wants "none" among the token endpoint's methods.
    let openid = owner.get("/.well-known/openid-configuration").await;
    assert_eq!(openid.status, 404, "{openid:?}");
    let server = owner.get("/.well-known/oauth-authorization-server").await;
    assert_eq!(server.status, 200, "{server:?}");
    let server = server.json();
    assert_eq!(server["issuer"], issuer);
    assert_eq!(server["code_challenge_methods_supported"], json!(["S256"]));
    assert_eq!(
        server["token_endpoint_auth_methods_supported"],
        json!(["none"])
    );
    assert_eq!(server["client_id_metadata_document_supported"], true);

    // 4. Registration with the host's own body, its answer read by Home Assistant's rules.
    let mut asked = json!({
        "client_name": host.client_name,
        "redirect_uris": [host.redirect_uri],
        "token_endpoint_auth_method": "none",
        "grant_types": ["authorization_code", "refresh_token"],
        "response_types": ["code"],
        "scope": scope,
    });
    for (name, value) in host.registration_extra.as_object().unwrap() {
        asked[name] = value.clone();
    }
    let registered = owner
        .post_json(
            path_of(home, server["registration_endpoint"].as_str().unwrap()),
            &asked,
        )
        .await;
    assert_eq!(registered.status, 201, "{registered:?}");
    let registration = registered.json();
    assert_eq!(registration["redirect_uris"], json!([host.redirect_uri]));
    assert_eq!(registration["token_endpoint_auth_method"], "none");
    assert!(
        registration.get("client_secret").is_none(),
        "{registration}"
    );
    assert!(
        registration
            .get("client_secret_expires_at")
            .is_none_or(|at| at == 0),
        "{registration}"
    );
    if let Some(granted) = registration.get("scope") {
        let granted: Vec<&str> = granted.as_str().unwrap().split(' ').collect();
        assert!(
            scope.split(' ').all(|one| granted.contains(&one)),
            "{registration}"
        );
    }
    let client_id = registration["client_id"].as_str().unwrap().to_owned();

    // 5. The authorization request as the host builds it; the owner says yes on the page.
    let mut query = form_urlencoded::Serializer::new(String::new());
    query
        .append_pair("response_type", "code")
        .append_pair("client_id", &client_id)
        .append_pair("redirect_uri", host.redirect_uri)
        .append_pair("state", &host.state)
        .append_pair("scope", &scope)
        .append_pair("code_challenge", &challenge_of(&host.verifier))
        .append_pair("code_challenge_method", "S256")
        .extend_pairs(host.authorize_extra);
    if host.sends_resource {
        query.append_pair("resource", &typed);
    }
    let url = format!(
        "{}?{}",
        server["authorization_endpoint"].as_str().unwrap(),
        query.finish()
    );
    let back = owner
        .answer_url(&url, "approve", &["read", "control"])
        .await;
    let (to, returned) = back.split_once('?').unwrap();
    assert_eq!(to, host.redirect_uri, "{back}");
    let returned: std::collections::HashMap<String, String> =
        form_urlencoded::parse(returned.as_bytes())
            .into_owned()
            .collect();
    assert_eq!(returned["state"], host.state);
    assert_eq!(returned["iss"], issuer);

    // 6. The code for tokens, with the host's parameters.
    let mut exchange = vec![
        ("grant_type", "authorization_code"),
        ("code", returned["code"].as_str()),
        ("redirect_uri", host.redirect_uri),
        ("code_verifier", host.verifier.as_str()),
        ("client_id", client_id.as_str()),
    ];
    if host.sends_resource {
        exchange.push(("resource", &typed));
    }
    let tokens = owner.token(&exchange).await;
    assert_eq!(tokens.status, 200, "{tokens:?}");
    let tokens = tokens.json();
    assert_eq!(tokens["token_type"], "Bearer");
    assert!(tokens["expires_in"].is_u64(), "{tokens}");
    assert_eq!(tokens["scope"], "read control");
    SignedIn {
        client_id,
        tokens,
        registration,
    }
}

/// The host works within `read control` with `access`: it lists the control tool, not the
/// upkeep ones, and switches a light.
async fn works_within_its_grant(home: &OAuthHome, access: &str) {
    let agent = Mcp::new(&format!("{}/mcp", home.issuer), Some(access));
    let opened = agent.initialize(json!({})).await;
    assert_eq!(opened.status, 200, "{opened:?}");
    assert!(
        opened.messages()[0]["result"]["capabilities"]["tools"].is_object(),
        "{opened:?}"
    );
    let session = agent.open(json!({})).await;
    let names = agent.tool_names(&session).await;
    assert!(
        names.iter().any(|name| name == "control_zwave_device"),
        "{names:?}"
    );
    assert!(
        !names.iter().any(|name| name == "maintain_zwave_device"),
        "{names:?}"
    );
    let switched = agent
        .call(
            &session,
            3,
            "control_zwave_device",
            json!({"deviceName": "Switch One", "action": "on"}),
        )
        .await;
    assert_eq!(switched.status, 200, "{switched:?}");
    assert!(!switched.tool_text().0, "{switched:?}");
}

/// The host refreshes with `params` (its own); the new access token works.
async fn refreshes(home: &OAuthHome, params: &[(&str, &str)]) -> Value {
    let renewed = Owner::new(&home.issuer).token(params).await;
    assert_eq!(renewed.status, 200, "{renewed:?}");
    let renewed = renewed.json();
    assert!(renewed["expires_in"].is_u64(), "{renewed}");
    works_within_its_grant(home, renewed["access_token"].as_str().unwrap()).await;
    renewed
}

fn verifier(length: usize) -> String {
    "aB3-_.~x9".chars().cycle().take(length).collect()
}

#[tokio::test]
async fn claude_signs_in_with_registration_and_is_told_to_register_again() {
    let home = OAuthHome::start().await;
    let claude = Host {
        client_name: "Claude",
        redirect_uri: "https://claude.ai/api/mcp/auth_callback",
        sends_resource: true,
        registration_extra: json!({}),
        authorize_extra: &[],
        state: "c1aude-state".into(),
        verifier: verifier(64),
    };
    let signed = sign_in(&home, &claude).await;
    works_within_its_grant(&home, signed.tokens["access_token"].as_str().unwrap()).await;
    let refresh = signed.tokens["refresh_token"].as_str().unwrap();
    let typed = format!("{}/mcp", home.issuer);
    refreshes(
        &home,
        &[
            ("grant_type", "refresh_token"),
            ("client_id", &signed.client_id),
            ("refresh_token", refresh),
            ("resource", &typed),
        ],
    )
    .await;
    // A client this server does not keep: 401 `invalid_client`, Claude's documented signal
    // to register again (not an `invalid_grant` dead end).
    let gone = Owner::new(&home.issuer)
        .token(&[
            ("grant_type", "refresh_token"),
            ("client_id", "zc1.00000000000000000000000000000000"),
            ("refresh_token", refresh),
            ("resource", &typed),
        ])
        .await;
    assert_eq!(gone.status, 401, "{gone:?}");
    assert_eq!(gone.json()["error"], "invalid_client");
    assert_eq!(
        gone.json()["error_description"],
        "the client \"zc1.00000000000000000000000000000000\" is not registered here (or no longer is): register again"
    );
    // Claude registers again for a fresh connection: both registrations are taken.
    assert_ne!(sign_in(&home, &claude).await.client_id, signed.client_id);
}

#[tokio::test]
async fn chatgpt_signs_in_with_registration_resource_and_pkce() {
    let home = OAuthHome::start().await;
    let chatgpt = Host {
        client_name: "ChatGPT",
        redirect_uri: "https://chatgpt.com/connector_platform_oauth_redirect",
        sends_resource: true,
        registration_extra: json!({}),
        authorize_extra: &[],
        state: "chatgpt-state-1".into(),
        verifier: verifier(43),
    };
    let signed = sign_in(&home, &chatgpt).await;
    works_within_its_grant(&home, signed.tokens["access_token"].as_str().unwrap()).await;
    let typed = format!("{}/mcp", home.issuer);
    refreshes(
        &home,
        &[
            ("grant_type", "refresh_token"),
            ("client_id", &signed.client_id),
            (
                "refresh_token",
                signed.tokens["refresh_token"].as_str().unwrap(),
            ),
            ("resource", &typed),
        ],
    )
    .await;
}

#[tokio::test]
async fn home_assistant_signs_in_without_resource_as_its_config_flow_does() {
    let home = OAuthHome::start().await;
    // Home Assistant's state is a JWT of the flow: three base64url parts, a few hundred long.
    let state = format!(
        "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.{}.{}",
        "eyJmbG93X2lkIjoiMDFKQUJDREVGIiwicmVkaXJlY3RfdXJpIjoiaHR0cHM6Ly9teS5ob21lLWFzc2lzdGFudC5pby9yZWRpcmVjdC9vYXV0aCJ9"
            .repeat(3),
        "c2lnbmF0dXJlLW9mLXRoZS1mbG93LXNpZ25lZC1ieS1ob21lLWFzc2lzdGFudA"
    );
    let ha = Host {
        client_name: "Home Assistant",
        redirect_uri: "https://my.home-assistant.io/redirect/oauth",
        sends_resource: false,
        registration_extra: json!({"application_type": "web"}),
        authorize_extra: &[("access_type", "offline"), ("prompt", "consent")],
        state,
        verifier: verifier(128),
    };
    let signed = sign_in(&home, &ha).await;
    assert_eq!(signed.registration["client_name"], "Home Assistant");
    works_within_its_grant(&home, signed.tokens["access_token"].as_str().unwrap()).await;
    // Its refresh names no scope and no resource.
    let renewed = refreshes(
        &home,
        &[
            ("grant_type", "refresh_token"),
            ("client_id", &signed.client_id),
            (
                "refresh_token",
                signed.tokens["refresh_token"].as_str().unwrap(),
            ),
        ],
    )
    .await;
    assert_eq!(renewed["scope"], "read control");
    // Without `my`, Home Assistant's redirect URI is the browser's own address of it: plain
    // http to another machine is refused at registration, saying what would do.
    let plain = Owner::new(&home.issuer)
        .register_with(&json!({
            "client_name": "Home Assistant",
            "redirect_uris": ["http://homeassistant.local:8123/auth/external/callback"],
            "token_endpoint_auth_method": "none",
            "application_type": "web",
        }))
        .await;
    assert_eq!(plain.status, 400, "{plain:?}");
    assert_eq!(
        plain.json()["error_description"],
        "the redirect URI \"http://homeassistant.local:8123/auth/external/callback\" is plain http to another machine: use https (plain http only to 127.0.0.1, [::1] or localhost)"
    );
}
