//! Signing in to remote servers with OAuth (feature `oauth`): a scripted authorization server
//! and a protected resource on loopback, the resource an axum proxy in front of our real
//! `zwave-mcp-server --demo --http`. What the authorization server received is asserted
//! (discovery, registration, PKCE S256, the `resource` parameter, scopes), and so are the
//! token file (0600 in a 0700 folder, reused by the next run without a browser), refresh, a
//! refused refresh, step-up, client credentials, the bound on sign-ins when the server keeps
//! refusing, and that no token ever reaches stderr.

use std::{
    collections::HashMap,
    os::unix::fs::PermissionsExt as _,
    path::{Path, PathBuf},
    process::{Command, Stdio},
    sync::{
        Arc, Mutex,
        atomic::{AtomicUsize, Ordering},
    },
    time::Duration,
};

use axum::{
    Router,
    body::{Body, Bytes},
    extract::{Query, State},
    http::{HeaderMap, Method, StatusCode, header},
    response::{IntoResponse, Response},
    routing::{any, get, post},
};
use mcp_client::{
    ClientError, ServerConfig, ServerConnection,
    connection::{RetryPolicy, config},
    transport::http::oauth::{AuthorizeError, Authorizer, OAuthOptions, follow_redirects},
};
use serde_json::{Value, json};
use test_support::{daemon::Daemon, mosquitto::ScratchDir};

use crate::harness::args;

/// What `zwave-mcp-server --http` logs once it listens, followed by its URL.
const SERVING: &str = "serving MCP over Streamable HTTP";

/// How the scripted servers behave.
#[derive(Clone, Default)]
struct Script {
    /// `expires_in` of the access tokens issued (seconds).
    expires_in: u64,
    /// The token endpoint refuses refresh tokens (`invalid_grant`).
    refuse_refresh: bool,
    /// The resource refuses every token (401, as for a revoked one).
    refuse_all: bool,
    /// A scope `tools/call` needs beyond the first one (403 `insufficient_scope` without).
    call_scope: Option<&'static str>,
    /// The resource quotes the tokens back at `tools/call` (see [`echo`]).
    echo: bool,
    /// The authorization server's metadata names this authorization endpoint.
    authorization_endpoint: Option<&'static str>,
    /// … and this token endpoint.
    token_endpoint: Option<&'static str>,
    /// The metadata leaves out `code_challenge_methods_supported`.
    no_pkce_methods: bool,
    /// The tokens issued are of this type (Bearer when not given).
    token_type: Option<&'static str>,
}

/// What the authorization server received.
#[derive(Default)]
struct Record {
    registrations: Vec<Value>,
    authorizations: Vec<HashMap<String, String>>,
    tokens: Vec<HashMap<String, String>>,
    /// Access tokens issued, with their scopes; refresh tokens issued.
    access: HashMap<String, Vec<String>>,
    refresh: Vec<String>,
    /// Codes issued: (PKCE challenge, scope).
    codes: HashMap<String, (String, String)>,
    /// The bearer tokens the resource was sent.
    seen_tokens: Vec<String>,
}

/// The authorization server and the protected resource, each on its own loopback port.
struct Home {
    script: Script,
    record: Mutex<Record>,
    issuer: String,
    resource: String,
    upstream: String,
    http: reqwest::Client,
    _zwave: Daemon,
}

impl Home {
    async fn start(script: Script) -> Arc<Self> {
        // The test's own reqwest clients (the proxy, the "browser"), as the library's.
        let _ = rustls::crypto::ring::default_provider().install_default();
        let zwave = tokio::task::spawn_blocking(start_zwave).await.unwrap();
        let auth = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let resource = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let home = Arc::new(Self {
            script,
            record: Mutex::default(),
            issuer: format!("http://{}", auth.local_addr().unwrap()),
            resource: format!("http://{}/mcp", resource.local_addr().unwrap()),
            upstream: zwave.1,
            http: reqwest::Client::new(),
            _zwave: zwave.0,
        });
        let auth_routes = Router::new()
            .route("/.well-known/oauth-authorization-server", get(as_metadata))
            .route("/register", post(register))
            .route("/authorize", get(authorize))
            .route("/token", post(token))
            .with_state(Arc::clone(&home));
        let resource_routes = Router::new()
            .route("/.well-known/oauth-protected-resource/mcp", get(prm))
            .route("/mcp", any(mcp))
            .with_state(Arc::clone(&home));
        tokio::spawn(async move { axum::serve(auth, auth_routes).await.unwrap() });
        tokio::spawn(async move { axum::serve(resource, resource_routes).await.unwrap() });
        home
    }

    fn prm_url(&self) -> String {
        self.resource
            .replace("/mcp", "/.well-known/oauth-protected-resource/mcp")
    }

    fn record(&self) -> std::sync::MutexGuard<'_, Record> {
        self.record.lock().unwrap()
    }

    /// Every access and refresh token issued so far.
    fn secrets(&self) -> Vec<String> {
        let record = self.record();
        record
            .access
            .keys()
            .chain(&record.refresh)
            .cloned()
            .collect()
    }

    /// A refusal naming the resource's metadata and the scopes needed.
    fn challenge(&self, status: StatusCode, scope: &str, extra: &str) -> Response {
        let value = format!(
            "Bearer resource_metadata=\"{}\", scope=\"{scope}\"{extra}",
            self.prm_url()
        );
        (status, [(header::WWW_AUTHENTICATE, value)], "").into_response()
    }
}

/// `zwave-mcp-server --demo --http 127.0.0.1:0` (no token: loopback), and its URL.
fn start_zwave() -> (Daemon, String) {
    let dir = ScratchDir::new();
    let mut command = Command::new(test_support::workspace_bin("zwave-mcp-server"));
    command
        .args(["--demo", "--http", "127.0.0.1:0"])
        .env("RUST_LOG", "info");
    let daemon = Daemon::start_until_logged(
        &command,
        dir,
        SERVING,
        "zwave http",
        Duration::from_secs(30),
    );
    let log = std::fs::read_to_string(daemon.dir().join("zwave-http.log")).unwrap();
    let url = log
        .lines()
        .find(|line| line.contains(SERVING))
        .and_then(|line| line.split("url=").nth(1))
        .and_then(|rest| rest.split_whitespace().next())
        .unwrap()
        .to_owned();
    (daemon, url)
}

async fn as_metadata(State(home): State<Arc<Home>>) -> Response {
    let at = |path: &str| format!("{}{path}", home.issuer);
    let mut metadata = json!({
        "issuer": home.issuer,
        "authorization_endpoint": home.script.authorization_endpoint.map_or_else(|| at("/authorize"), str::to_owned),
        "token_endpoint": home.script.token_endpoint.map_or_else(|| at("/token"), str::to_owned),
        "registration_endpoint": at("/register"),
        "response_types_supported": ["code"],
        "grant_types_supported": ["authorization_code", "refresh_token", "client_credentials"],
        "code_challenge_methods_supported": ["S256"],
        "token_endpoint_auth_methods_supported": ["none", "client_secret_post"],
        "scopes_supported": ["home.read", "home.write"],
    });
    if home.script.no_pkce_methods {
        metadata
            .as_object_mut()
            .unwrap()
            .remove("code_challenge_methods_supported");
    }
    axum::Json(metadata).into_response()
}

async fn prm(State(home): State<Arc<Home>>) -> Response {
    axum::Json(json!({
        "resource": home.resource,
        "authorization_servers": [home.issuer],
        "scopes_supported": ["home.read"],
    }))
    .into_response()
}

async fn register(State(home): State<Arc<Home>>, body: axum::Json<Value>) -> Response {
    let mut record = home.record();
    record.registrations.push(body.0.clone());
    let id = format!("dyn-{}", record.registrations.len());
    (
        StatusCode::CREATED,
        axum::Json(json!({"client_id": id, "redirect_uris": body.0["redirect_uris"]})),
    )
        .into_response()
}

async fn authorize(
    State(home): State<Arc<Home>>,
    Query(query): Query<HashMap<String, String>>,
) -> Response {
    let mut record = home.record();
    record.authorizations.push(query.clone());
    let code = format!("code-{}", record.authorizations.len());
    record.codes.insert(
        code.clone(),
        (
            query.get("code_challenge").cloned().unwrap_or_default(),
            query.get("scope").cloned().unwrap_or_default(),
        ),
    );
    let mut back = reqwest::Url::parse(&query["redirect_uri"]).unwrap();
    back.query_pairs_mut()
        .append_pair("code", &code)
        .append_pair("state", &query["state"])
        .append_pair("iss", &home.issuer);
    (StatusCode::FOUND, [(header::LOCATION, back.to_string())]).into_response()
}

async fn token(
    State(home): State<Arc<Home>>,
    axum::Form(form): axum::Form<HashMap<String, String>>,
) -> Response {
    let mut record = home.record();
    record.tokens.push(form.clone());
    let refused = |error: &str| {
        (StatusCode::BAD_REQUEST, axum::Json(json!({"error": error}))).into_response()
    };
    let scope = match form.get("grant_type").map(String::as_str) {
        Some("authorization_code") => {
            let Some((challenge, scope)) = record.codes.remove(&form["code"]) else {
                return refused("invalid_grant");
            };
            if pkce_s256(form.get("code_verifier").map_or("", String::as_str)) != challenge {
                return refused("invalid_grant");
            }
            scope
        }
        Some("refresh_token") => {
            if home.script.refuse_refresh || !record.refresh.contains(&form["refresh_token"]) {
                return refused("invalid_grant");
            }
            "home.read".to_owned()
        }
        Some("client_credentials") => {
            if form.get("client_secret").map(String::as_str) != Some("machine-s3cret") {
                return refused("invalid_client");
            }
            form.get("scope").cloned().unwrap_or_default()
        }
        _ => return refused("unsupported_grant_type"),
    };
    let n = record.tokens.len();
    // With characters a URL writes escaped (`/`, `+`, `=`), as base64 tokens have.
    let access = format!("at-{n}-{:x}/+=", rand_number());
    let refresh = format!("rt-{n}-{:x}", rand_number());
    record.access.insert(
        access.clone(),
        scope.split_whitespace().map(str::to_owned).collect(),
    );
    record.refresh.push(refresh.clone());
    axum::Json(json!({
        "access_token": access,
        "token_type": home.script.token_type.unwrap_or("Bearer"),
        "expires_in": home.script.expires_in,
        "refresh_token": refresh,
        "scope": scope,
    }))
    .into_response()
}

/// The protected resource: the token checked, then the request passed to the real server.
async fn mcp(
    State(home): State<Arc<Home>>,
    method: Method,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let bearer = headers
        .get(header::AUTHORIZATION)
        .and_then(|value| value.to_str().ok())
        .and_then(|value| value.strip_prefix("Bearer "))
        .map(str::to_owned);
    if let Some(token) = &bearer {
        home.record().seen_tokens.push(token.clone());
    }
    let scopes = bearer
        .as_ref()
        .and_then(|token| home.record().access.get(token).cloned());
    let Some(scopes) = scopes.filter(|_| !home.script.refuse_all) else {
        return home.challenge(StatusCode::UNAUTHORIZED, "home.read", "");
    };
    let is_call = serde_json::from_slice::<Value>(&body)
        .is_ok_and(|message| message["method"] == "tools/call");
    if home.script.echo && is_call {
        return echo(&home, &body, bearer.as_deref().unwrap_or_default());
    }
    if let Some(needed) = home.script.call_scope
        && is_call
        && !scopes.iter().any(|scope| scope == needed)
    {
        return home.challenge(
            StatusCode::FORBIDDEN,
            needed,
            ", error=\"insufficient_scope\"",
        );
    }
    let mut request = home.http.request(method, &home.upstream).body(body);
    // Everything but what the hop itself decides (and the token, which is ours).
    let hop = [
        "host",
        "authorization",
        "content-length",
        "connection",
        "transfer-encoding",
    ];
    for (name, value) in &headers {
        if !hop.contains(&name.as_str()) {
            request = request.header(name, value.clone());
        }
    }
    let answer = request.send().await.unwrap();
    let mut response = Response::builder().status(answer.status().as_u16());
    for (name, value) in answer.headers() {
        if !hop.contains(&name.as_str()) {
            response = response.header(name, value.clone());
        }
    }
    response
        .body(Body::from_stream(answer.bytes_stream()))
        .unwrap()
}

/// The access token `token` the request carried and the refresh tokens issued, quoted back:
/// in the body of a 400 at `tools/call echo_error`, else in a tool result; plain, and
/// percent-encoded as a URL would carry them.
fn echo(home: &Home, body: &[u8], token: &str) -> Response {
    let message: Value = serde_json::from_slice(body).unwrap();
    let refresh = home.record().refresh.join(" ");
    let mut retry = reqwest::Url::parse("http://127.0.0.1/mcp").unwrap();
    retry.query_pairs_mut().append_pair("access_token", token);
    let said = format!("you sent Bearer {token} (refresh tokens: {refresh}); retry at {retry}");
    if message["params"]["name"] == "echo_error" {
        return (StatusCode::BAD_REQUEST, said).into_response();
    }
    axum::Json(json!({
        "jsonrpc": "2.0",
        "id": message["id"],
        "result": {"content": [{"type": "text", "text": said}], "isError": false},
    }))
    .into_response()
}

/// A number to tell tokens apart.
fn rand_number() -> u64 {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .subsec_nanos();
    u64::from(nanos) ^ (NEXT.fetch_add(1, Ordering::Relaxed) as u64) << 32
}

/// BASE64URL(SHA-256(verifier)), as RFC 7636 has it.
fn pkce_s256(verifier: &str) -> String {
    use sha2::Digest as _;
    let digest = sha2::Sha256::digest(verifier.as_bytes());
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    let mut out = String::new();
    for chunk in digest.chunks(3) {
        let bits = chunk.iter().enumerate().fold(0_u32, |acc, (i, byte)| {
            acc | u32::from(*byte) << (16 - 8 * i)
        });
        for i in 0..=chunk.len() {
            out.push(ALPHABET[(bits >> (18 - 6 * i) & 63) as usize] as char);
        }
    }
    out
}

/// The one server of `entry`, named `home`.
fn server(entry: &Value) -> ServerConfig {
    let text = json!({"mcpServers": {"home": entry}}).to_string();
    let mut servers = config::parse(Path::new("servers.json"), &text, &|_| None).unwrap();
    let mut server = servers.remove(0);
    server.init_timeout = Duration::from_secs(20);
    server.call_timeout = Duration::from_secs(20);
    server.retry = RetryPolicy {
        attempts: 1,
        base_delay: Duration::ZERO,
    };
    server
}

/// An authorizer that follows the redirects (no browser), counting the sign-ins.
fn counting(count: &Arc<AtomicUsize>) -> Authorizer {
    let count = Arc::clone(count);
    Arc::new(move |prompt| {
        count.fetch_add(1, Ordering::SeqCst);
        Box::pin(follow_redirects(prompt))
    })
}

/// An authorizer for runs that must not need a person.
fn nobody() -> Authorizer {
    Arc::new(|prompt| {
        Box::pin(async move {
            Err(AuthorizeError::Unavailable(format!(
                "no sign-in expected, asked for {}",
                prompt.server
            )))
        })
    })
}

fn mode(path: &Path) -> u32 {
    std::fs::metadata(path).unwrap().permissions().mode() & 0o777
}

/// The one token file in `dir`.
fn token_file(dir: &Path) -> PathBuf {
    let files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .collect();
    assert_eq!(files.len(), 1, "{files:?}");
    files[0].clone()
}

async fn status_of_switch_one(connection: &ServerConnection) -> Result<String, ClientError> {
    let result = connection
        .call_tool(
            "get_device_status",
            args(json!({"deviceName": "Switch One"})),
        )
        .await?;
    Ok(serde_json::to_string(&result.content).unwrap())
}

#[tokio::test]
async fn a_401_pointing_at_metadata_signs_in_with_pkce_s256_and_the_resource_and_the_token_is_kept_0600()
 {
    let home = Home::start(Script {
        expires_in: 3600,
        ..Script::default()
    })
    .await;
    let state = ScratchDir::new();
    let tokens = state.path().join("mcp-client/oauth");
    let sign_ins = Arc::new(AtomicUsize::new(0));
    // No "oauth" key: the server's challenge is what starts it.
    let entry = json!({"url": home.resource});
    let connection = ServerConnection::new(server(&entry)).with_oauth(OAuthOptions {
        authorizer: Some(counting(&sign_ins)),
        token_dir: Some(tokens.clone()),
    });
    connection.connect().await.unwrap();
    assert!(
        status_of_switch_one(&connection)
            .await
            .unwrap()
            .contains("Switch One")
    );
    assert_eq!(sign_ins.load(Ordering::SeqCst), 1);
    {
        let record = home.record();
        // Dynamic registration: a public native client with our loopback redirect.
        assert_eq!(record.registrations.len(), 1, "{:?}", record.registrations);
        let registration = &record.registrations[0];
        assert_eq!(registration["token_endpoint_auth_method"], "none");
        assert_eq!(registration["application_type"], "native");
        let redirect = registration["redirect_uris"][0].as_str().unwrap();
        assert!(redirect.starts_with("http://127.0.0.1:"), "{redirect}");
        let authorization = &record.authorizations[0];
        assert_eq!(authorization["code_challenge_method"], "S256");
        assert_eq!(authorization["response_type"], "code");
        assert_eq!(authorization["resource"], home.resource);
        assert_eq!(authorization["client_id"], "dyn-1");
        // The scope the challenge named (and not all the authorization server supports).
        assert_eq!(authorization["scope"], "home.read");
        let exchange = &record.tokens[0];
        assert_eq!(exchange["grant_type"], "authorization_code");
        assert_eq!(exchange["resource"], home.resource);
        assert!(exchange.contains_key("code_verifier"), "{exchange:?}");
    }
    connection.shutdown().await;

    let file = token_file(&tokens);
    assert_eq!(mode(&file), 0o600);
    assert_eq!(mode(&tokens), 0o700);

    // The next run: the stored token, nobody asked, nothing asked of the authorization server.
    let requests = home.record().tokens.len();
    let again = ServerConnection::new(server(&entry)).with_oauth(OAuthOptions {
        authorizer: Some(nobody()),
        token_dir: Some(tokens.clone()),
    });
    again.connect().await.unwrap();
    assert!(
        status_of_switch_one(&again)
            .await
            .unwrap()
            .contains("Switch One")
    );
    assert_eq!(home.record().tokens.len(), requests);
    assert_eq!(home.record().authorizations.len(), 1);
    again.shutdown().await;
}

#[tokio::test]
async fn tokens_the_server_quotes_back_are_redacted_in_results_and_errors() {
    let home = Home::start(Script {
        expires_in: 3600,
        echo: true,
        ..Script::default()
    })
    .await;
    let entry = json!({"url": home.resource});
    let connection = ServerConnection::new(server(&entry)).with_oauth(OAuthOptions {
        authorizer: Some(counting(&Arc::new(AtomicUsize::new(0)))),
        token_dir: None,
    });
    connection.connect().await.unwrap();
    let secrets = home.secrets();
    assert_eq!(
        secrets.len(),
        2,
        "one access and one refresh token: {secrets:?}"
    );
    // In a result: what the model would read and the history keep.
    let result = connection
        .call_tool("echo_result", args(json!({})))
        .await
        .unwrap();
    let text = serde_json::to_string(&result).unwrap();
    assert!(
        text.contains(
            "you sent Bearer [redacted] (refresh tokens: [redacted]); retry at http://127.0.0.1/mcp?access_token=[redacted]"
        ),
        "{text}"
    );
    // In an error body.
    let err = connection
        .call_tool("echo_error", args(json!({})))
        .await
        .unwrap_err();
    let shown = format!("{err} {err:?} {}", err.for_model());
    assert!(shown.contains("you sent Bearer [redacted]"), "{shown}");
    for secret in &secrets {
        assert!(!text.contains(secret.as_str()), "{secret} in {text}");
        assert!(!shown.contains(secret.as_str()), "{secret} in {shown}");
    }
    connection.shutdown().await;
}

#[tokio::test]
async fn an_authorization_server_off_https_is_refused_before_anything_is_sent_to_it() {
    let cases = [
        (
            Script {
                authorization_endpoint: Some("javascript:alert(document.domain)"),
                ..Script::default()
            },
            "the authorization server's authorization endpoint `javascript:alert(document.domain)` has the scheme `javascript`, not a web address",
        ),
        (
            Script {
                token_endpoint: Some("http://192.0.2.7/token"),
                ..Script::default()
            },
            "the authorization server's token endpoint `http://192.0.2.7/token` is plain http to another machine (192.0.2.7): OAuth 2.1 and MCP authorization send tokens, codes and client secrets only over https",
        ),
    ];
    for (script, said) in cases {
        let home = Home::start(script).await;
        let sign_ins = Arc::new(AtomicUsize::new(0));
        let connection = ServerConnection::new(server(&json!({"url": home.resource}))).with_oauth(
            OAuthOptions {
                authorizer: Some(counting(&sign_ins)),
                token_dir: None,
            },
        );
        let err = connection.connect().await.unwrap_err().to_string();
        assert!(err.contains(said), "{err}");
        assert!(err.contains("no code, token or secret was sent"), "{err}");
        assert_eq!(sign_ins.load(Ordering::SeqCst), 0, "nobody was sent there");
        {
            let record = home.record();
            assert!(record.registrations.is_empty() && record.tokens.is_empty());
        }
        connection.shutdown().await;
    }
}

/// Found by the third hostile review: metadata without `code_challenge_methods_supported`
/// got a warning and a sign-in anyway (MCP 2025-11-25: the client must refuse); a token that
/// is not Bearer is refused too (RFC 6749 §7.1).
#[tokio::test]
async fn no_pkce_in_the_metadata_or_a_token_that_is_not_bearer_is_refused() {
    let home = Home::start(Script {
        no_pkce_methods: true,
        ..Script::default()
    })
    .await;
    let sign_ins = Arc::new(AtomicUsize::new(0));
    let connection =
        ServerConnection::new(server(&json!({"url": home.resource}))).with_oauth(OAuthOptions {
            authorizer: Some(counting(&sign_ins)),
            token_dir: None,
        });
    let err = connection.connect().await.unwrap_err().to_string();
    assert!(
        err.contains("the authorization server's metadata has no `code_challenge_methods_supported`, so it may not check PKCE, which MCP requires: not signing in, nothing was sent to its authorization endpoint"),
        "{err}"
    );
    assert_eq!(sign_ins.load(Ordering::SeqCst), 0, "nobody was sent there");
    {
        let record = home.record();
        assert!(record.registrations.is_empty() && record.tokens.is_empty());
    }
    connection.shutdown().await;

    let home = Home::start(Script {
        token_type: Some("mac"),
        ..Script::default()
    })
    .await;
    let connection =
        ServerConnection::new(server(&json!({"url": home.resource}))).with_oauth(OAuthOptions {
            authorizer: Some(counting(&sign_ins)),
            token_dir: None,
        });
    let err = connection.connect().await.unwrap_err().to_string();
    assert!(
        err.contains("the authorization server issued a token of type \"mac\", not Bearer (RFC 6749 §7.1): this client sends bearer tokens only, so the token was not kept"),
        "{err}"
    );
    // The token went to no request of the resource.
    {
        let record = home.record();
        assert_eq!(record.access.len(), 1, "one token issued");
        assert!(
            !record
                .seen_tokens
                .iter()
                .any(|token| record.access.contains_key(token)),
            "sent anyway"
        );
    }
    connection.shutdown().await;
}

#[tokio::test]
async fn an_expired_token_is_refreshed_with_the_resource_and_nobody_asked() {
    let home = Home::start(Script {
        expires_in: 1,
        ..Script::default()
    })
    .await;
    let state = ScratchDir::new();
    let tokens = state.path().join("oauth");
    let sign_ins = Arc::new(AtomicUsize::new(0));
    let options = OAuthOptions {
        authorizer: Some(counting(&sign_ins)),
        token_dir: Some(tokens.clone()),
    };
    let entry = json!({"url": home.resource, "oauth": {}});
    let first = ServerConnection::new(server(&entry)).with_oauth(options.clone());
    first.connect().await.unwrap();
    first.shutdown().await;
    assert_eq!(sign_ins.load(Ordering::SeqCst), 1);
    // The token is stale after its second; the next run refreshes it, with the resource.
    tokio::time::sleep(Duration::from_millis(2100)).await;
    let second = ServerConnection::new(server(&entry)).with_oauth(options.clone());
    second.connect().await.unwrap();
    assert!(
        status_of_switch_one(&second)
            .await
            .unwrap()
            .contains("Switch One")
    );
    second.shutdown().await;
    assert_eq!(
        sign_ins.load(Ordering::SeqCst),
        1,
        "a refresh needs no person"
    );
    {
        let record = home.record();
        let refresh = record
            .tokens
            .iter()
            .find(|form| form["grant_type"] == "refresh_token")
            .unwrap_or_else(|| panic!("no refresh: {:?}", record.tokens));
        assert_eq!(refresh["resource"], home.resource);
        assert_eq!(refresh["client_id"], "dyn-1");
    }
}

/// Found by the third hostile review: `expires_in: 0` made rmcp refresh the token before
/// every request. It is taken as no lifetime given: one token serves the whole session.
#[tokio::test]
async fn a_token_said_to_expire_at_once_is_not_refreshed_before_every_request() {
    let home = Home::start(Script {
        expires_in: 0,
        ..Script::default()
    })
    .await;
    let state = ScratchDir::new();
    let sign_ins = Arc::new(AtomicUsize::new(0));
    let options = OAuthOptions {
        authorizer: Some(counting(&sign_ins)),
        token_dir: Some(state.path().join("oauth")),
    };
    let connection =
        ServerConnection::new(server(&json!({"url": home.resource}))).with_oauth(options);
    connection.connect().await.unwrap();
    for _ in 0..3 {
        assert!(
            status_of_switch_one(&connection)
                .await
                .unwrap()
                .contains("Switch One")
        );
    }
    connection.shutdown().await;
    assert_eq!(sign_ins.load(Ordering::SeqCst), 1);
    let record = home.record();
    let grants: Vec<_> = record
        .tokens
        .iter()
        .map(|form| form["grant_type"].clone())
        .collect();
    assert_eq!(grants, ["authorization_code"], "{:?}", record.tokens);
}

#[tokio::test]
async fn a_refused_refresh_falls_back_to_signing_in() {
    let home = Home::start(Script {
        expires_in: 1,
        refuse_refresh: true,
        ..Script::default()
    })
    .await;
    let state = ScratchDir::new();
    let sign_ins = Arc::new(AtomicUsize::new(0));
    let options = OAuthOptions {
        authorizer: Some(counting(&sign_ins)),
        token_dir: Some(state.path().join("oauth")),
    };
    let entry = json!({"url": home.resource});
    let first = ServerConnection::new(server(&entry)).with_oauth(options.clone());
    first.connect().await.unwrap();
    first.shutdown().await;
    tokio::time::sleep(Duration::from_millis(2100)).await;
    let second = ServerConnection::new(server(&entry)).with_oauth(options);
    second.connect().await.unwrap();
    second.shutdown().await;
    assert_eq!(sign_ins.load(Ordering::SeqCst), 2);
    let record = home.record();
    assert!(
        record
            .tokens
            .iter()
            .any(|form| form["grant_type"] == "refresh_token")
    );
    assert_eq!(record.authorizations.len(), 2);
}

#[tokio::test]
async fn a_403_insufficient_scope_steps_up_to_the_union_of_scopes_and_the_call_goes_through() {
    let home = Home::start(Script {
        expires_in: 3600,
        call_scope: Some("home.write"),
        ..Script::default()
    })
    .await;
    let sign_ins = Arc::new(AtomicUsize::new(0));
    let connection =
        ServerConnection::new(server(&json!({"url": home.resource}))).with_oauth(OAuthOptions {
            authorizer: Some(counting(&sign_ins)),
            token_dir: None,
        });
    connection.connect().await.unwrap();
    assert!(
        status_of_switch_one(&connection)
            .await
            .unwrap()
            .contains("Switch One")
    );
    assert_eq!(sign_ins.load(Ordering::SeqCst), 2);
    connection.shutdown().await;
    let record = home.record();
    assert_eq!(record.authorizations[0]["scope"], "home.read");
    assert_eq!(record.authorizations[1]["scope"], "home.read home.write");
}

#[tokio::test]
async fn a_server_that_refuses_every_token_gets_a_bounded_number_of_sign_ins_and_no_retry_by_time()
{
    let home = Home::start(Script {
        expires_in: 3600,
        refuse_all: true,
        ..Script::default()
    })
    .await;
    let sign_ins = Arc::new(AtomicUsize::new(0));
    let mut config = server(&json!({"url": home.resource}));
    config.retry = RetryPolicy {
        attempts: 3,
        base_delay: Duration::from_millis(10),
    };
    let connection = Arc::new(ServerConnection::new(config).with_oauth(OAuthOptions {
        authorizer: Some(counting(&sign_ins)),
        token_dir: None,
    }));
    let err = connection.connect().await.unwrap_err();
    let ClientError::ConnectFailed { attempts, failure } = &err else {
        panic!("{err}");
    };
    assert_eq!(*attempts, 1, "refused credentials are not retried: {err}");
    assert!(failure.reason.contains("HTTP 401"), "{err}");
    let bounded = sign_ins.load(Ordering::SeqCst);
    assert!((1..=3).contains(&bounded), "{bounded} sign-ins");
    // Calls now say what to do at once, without a new sign-in, however long one waits.
    for _ in 0..3 {
        let err = status_of_switch_one(&connection).await.unwrap_err();
        assert!(matches!(err, ClientError::NotAuthorized { .. }), "{err}");
        assert!(!err.is_retryable());
        assert!(err.to_string().contains("connect again"), "{err}");
    }
    // The pool's degraded mode does not start it again by time either.
    connection.revive();
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(sign_ins.load(Ordering::SeqCst), bounded);
    connection.shutdown().await;
}

#[tokio::test]
async fn client_credentials_sign_in_without_a_person() {
    let home = Home::start(Script {
        expires_in: 3600,
        ..Script::default()
    })
    .await;
    let entry = json!({"url": home.resource, "oauth": {
        "grant": "client_credentials", "clientId": "machine", "clientSecret": "machine-s3cret",
        "scopes": "home.read"}});
    let connection = ServerConnection::new(server(&entry)).with_oauth(OAuthOptions {
        authorizer: Some(nobody()),
        token_dir: None,
    });
    connection.connect().await.unwrap();
    assert!(
        status_of_switch_one(&connection)
            .await
            .unwrap()
            .contains("Switch One")
    );
    connection.shutdown().await;
    let record = home.record();
    assert!(record.authorizations.is_empty());
    let exchange = &record.tokens[0];
    assert_eq!(exchange["grant_type"], "client_credentials");
    assert_eq!(exchange["resource"], home.resource);
    assert_eq!(exchange["scope"], "home.read");
}

#[tokio::test]
async fn without_anyone_to_ask_the_failure_says_how_to_sign_in() {
    let home = Home::start(Script {
        expires_in: 3600,
        ..Script::default()
    })
    .await;
    let connection = ServerConnection::new(server(&json!({"url": home.resource})));
    let err = connection.connect().await.unwrap_err().to_string();
    assert!(err.contains("signing in with OAuth failed"), "{err}");
    assert!(err.contains("no authorizer"), "{err}");
    connection.shutdown().await;
}

/// `mcp-client servers` at a "terminal": the browser is this test, which opens the address
/// the client prints (following the authorization server's redirect to the client's loopback
/// port). The next run needs no browser, and no token is ever on stderr, at trace level.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_cli_signs_in_once_in_the_browser_and_the_next_run_reuses_the_token() {
    let home = Home::start(Script {
        expires_in: 3600,
        ..Script::default()
    })
    .await;
    let state = ScratchDir::new();
    let config = state.path().join("servers.json");
    std::fs::write(
        &config,
        json!({"mcpServers": {"home": {"url": home.resource}}}).to_string(),
    )
    .unwrap();
    let run = |state: PathBuf, config: PathBuf| {
        let mut command = Command::new(env!("CARGO_BIN_EXE_mcp-client"));
        command
            .args(["--log-level", "trace", "servers", "--config"])
            .arg(config)
            .env("XDG_STATE_HOME", state)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        command.spawn().unwrap()
    };
    let mut child = run(state.path().to_owned(), config.clone());
    let stderr = child.stderr.take().unwrap();
    let (url_tx, url_rx) = tokio::sync::oneshot::channel();
    let reading = tokio::task::spawn_blocking(move || {
        use std::io::BufRead as _;
        let mut url_tx = Some(url_tx);
        let mut all = String::new();
        for line in std::io::BufReader::new(stderr).lines() {
            let line = line.unwrap();
            if let Some(url) = line.trim().strip_prefix("http://")
                && line.contains("/authorize?")
                && let Some(tx) = url_tx.take()
            {
                let _ = tx.send(format!("http://{url}"));
            }
            all.push_str(&line);
            all.push('\n');
        }
        all
    });
    let url = tokio::time::timeout(Duration::from_secs(60), url_rx)
        .await
        .expect("the address to open, on stderr")
        .unwrap();
    // The browser: follows the authorization server's redirect to the client's port.
    let page = reqwest::get(&url).await.unwrap();
    assert_eq!(page.status(), 200);
    assert!(page.text().await.unwrap().contains("finishes signing in"));
    let output = tokio::task::spawn_blocking(move || child.wait_with_output().unwrap())
        .await
        .unwrap();
    let stderr = reading.await.unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "{stdout}\n{stderr}");
    assert!(stdout.contains("home: connected"), "{stdout}");
    assert!(stderr.contains("asks you to sign in"), "{stderr}");
    let file = token_file(&state.path().join("mcp-client/oauth"));
    assert_eq!(mode(&file), 0o600);

    let child = run(state.path().to_owned(), config);
    let output = tokio::task::spawn_blocking(move || child.wait_with_output().unwrap())
        .await
        .unwrap();
    let second_stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    assert!(output.status.success(), "{second_stderr}");
    assert!(!second_stderr.contains("sign in"), "{second_stderr}");
    assert_eq!(home.record().authorizations.len(), 1);
    let secrets = home.secrets();
    assert!(!secrets.is_empty());
    for secret in secrets.iter().chain(std::iter::once(&"code-1".to_owned())) {
        assert!(!stderr.contains(secret.as_str()), "{secret} on stderr");
        assert!(
            !second_stderr.contains(secret.as_str()),
            "{secret} on stderr"
        );
    }
}
