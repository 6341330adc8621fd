//! The demo home served over HTTP with the server as its own OAuth authorization server
//! (`--oauth-issuer`), and [`Owner`]: what a client and the owner's browser send it, each
//! step on its own so that a test can replay, alter or skip one. It asserts nothing of its
//! own but that the server starts.

use base64::Engine as _;
use serde_json::Value;
use sha2::Digest as _;

use super::{HttpServer, TOKEN, TokenFile, http_command};

/// The demo home with OAuth on a free loopback port, its grants in `state`.
pub struct OAuthHome {
    /// The server.
    pub server: HttpServer,
    /// Its issuer, `http://127.0.0.1:PORT`.
    pub issuer: String,
    /// The owner's key's file (its folder holds the state directory too, unless given).
    pub key: TokenFile,
}

/// A port nothing listens on now (bound, then let go).
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

impl OAuthHome {
    /// Starts one, its grants in the key's folder.
    pub async fn start() -> Self {
        let key = TokenFile::new(TOKEN);
        let state = key.dir().join("state");
        Self::start_on(key, &state).await
    }

    /// Starts one with the owner's key `key`, its grants in `state`.
    pub async fn start_on(key: TokenFile, state: &std::path::Path) -> Self {
        Self::start_with(key, state, &[]).await
    }

    /// Starts one with the owner's key `key`, its grants in `state`, and these flags too.
    pub async fn start_with(key: TokenFile, state: &std::path::Path, flags: &[&str]) -> Self {
        let port = free_port();
        let issuer = format!("http://127.0.0.1:{port}");
        let addr = format!("127.0.0.1:{port}");
        let server = HttpServer::start(http_command(
            &[
                "--demo",
                "--http",
                &addr,
                "--http-token-file",
                &key.path(),
                "--oauth-issuer",
                &issuer,
                "--state-dir",
                state.to_str().unwrap(),
            ]
            .into_iter()
            .chain(flags.iter().copied())
            .collect::<Vec<_>>(),
        ))
        .await;
        Self {
            server,
            issuer,
            key,
        }
    }
}

/// BASE64URL(SHA-256(verifier)).
pub fn challenge_of(verifier: &str) -> String {
    base64::engine::general_purpose::URL_SAFE_NO_PAD
        .encode(sha2::Sha256::digest(verifier.as_bytes()))
}

/// A PKCE verifier.
pub const VERIFIER: &str = "the-verifier-of-this-test-0123456789-abcdefghijk";

/// What a page answered.
#[derive(Debug)]
pub struct Answer {
    /// Its status.
    pub status: u16,
    /// Its headers.
    pub headers: reqwest::header::HeaderMap,
    /// Its body.
    pub body: String,
}

impl Answer {
    /// The header `name`, or "".
    pub fn header(&self, name: &str) -> &str {
        self.headers
            .get(name)
            .and_then(|value| value.to_str().ok())
            .unwrap_or_default()
    }

    /// The body as JSON.
    pub fn json(&self) -> Value {
        serde_json::from_str(&self.body).unwrap_or_else(|err| panic!("{err}: {}", self.body))
    }

    /// The query parameter `name` of the `Location` header.
    pub fn location_param(&self, name: &str) -> Option<String> {
        let location = self.header("location");
        let query = location.split_once('?')?.1;
        form_urlencoded::parse(query.as_bytes())
            .find(|(key, _)| key == name)
            .map(|(_, value)| value.into_owned())
    }
}

/// The approval page's form: its hidden fields, and the CSRF cookie that came with it.
#[derive(Debug, Clone)]
pub struct Form {
    /// Hidden fields, in order.
    pub fields: Vec<(String, String)>,
    /// `zmcp_csrf=…`.
    pub cookie: String,
}

/// A client and the owner's browser, talking to one server.
pub struct Owner {
    http: reqwest::Client,
    /// The issuer.
    pub issuer: String,
}

impl Owner {
    /// For the server at `issuer`.
    pub fn new(issuer: &str) -> Self {
        let _ = rustls::crypto::ring::default_provider().install_default();
        Self {
            http: reqwest::Client::builder()
                .no_proxy()
                .redirect(reqwest::redirect::Policy::none())
                .timeout(std::time::Duration::from_secs(30))
                .build()
                .unwrap(),
            issuer: issuer.to_owned(),
        }
    }

    async fn answer(request: reqwest::RequestBuilder) -> Answer {
        let response = request.send().await.unwrap();
        Answer {
            status: response.status().as_u16(),
            headers: response.headers().clone(),
            body: response.text().await.unwrap(),
        }
    }

    /// GET `path`.
    pub async fn get(&self, path: &str) -> Answer {
        Self::answer(self.http.get(format!("{}{path}", self.issuer))).await
    }

    /// GET `path` with these cookies (`a=1; b=2`).
    pub async fn get_with(&self, path: &str, cookies: &str) -> Answer {
        Self::answer(
            self.http
                .get(format!("{}{path}", self.issuer))
                .header("cookie", cookies),
        )
        .await
    }

    /// POST `body` (form-encoded) to `path`, with these headers.
    pub async fn post_form(
        &self,
        path: &str,
        body: &[(&str, &str)],
        headers: &[(&str, &str)],
    ) -> Answer {
        let mut request = self
            .http
            .post(format!("{}{path}", self.issuer))
            .header("content-type", "application/x-www-form-urlencoded")
            .body(
                form_urlencoded::Serializer::new(String::new())
                    .extend_pairs(body)
                    .finish(),
            );
        for (name, value) in headers {
            request = request.header(*name, *value);
        }
        Self::answer(request).await
    }

    /// The registration endpoint's answer to `metadata`.
    pub async fn register_with(&self, metadata: &Value) -> Answer {
        self.post_json("/oauth/register", metadata).await
    }

    /// POST `value` as JSON to `path`.
    pub async fn post_json(&self, path: &str, value: &Value) -> Answer {
        Self::answer(
            self.http
                .post(format!("{}{path}", self.issuer))
                .header("content-type", "application/json")
                .body(value.to_string()),
        )
        .await
    }

    /// Registers a client sending people back to `redirect_uri`; its id.
    pub async fn register(&self, name: &str, redirect_uri: &str) -> String {
        let answer = self
            .register_with(
                &serde_json::json!({"client_name": name, "redirect_uris": [redirect_uri]}),
            )
            .await;
        assert_eq!(answer.status, 201, "{answer:?}");
        answer.json()["client_id"].as_str().unwrap().to_owned()
    }

    /// The authorization request's query for `client` asking `scope`.
    pub fn authorize_query(client: &str, redirect_uri: &str, scope: &str) -> String {
        form_urlencoded::Serializer::new(String::new())
            .append_pair("response_type", "code")
            .append_pair("client_id", client)
            .append_pair("redirect_uri", redirect_uri)
            .append_pair("state", "st-1")
            .append_pair("code_challenge", &challenge_of(VERIFIER))
            .append_pair("code_challenge_method", "S256")
            .append_pair("scope", scope)
            .finish()
    }

    /// GET the approval page for `query`.
    pub async fn page(&self, query: &str) -> Answer {
        self.get(&format!("/oauth/authorize?{query}")).await
    }

    /// The approval page's form, from a page answered 200.
    pub fn form_of(page: &Answer) -> Form {
        assert_eq!(page.status, 200, "{page:?}");
        let cookie = page
            .header("set-cookie")
            .split(';')
            .next()
            .unwrap()
            .to_owned();
        Form {
            fields: Self::hidden_fields(&page.body),
            cookie,
        }
    }

    /// The hidden fields of the first form in `body` after `from`.
    pub fn fields_after(body: &str, from: &str) -> Vec<(String, String)> {
        Self::hidden_fields(body.split_once(from).map_or("", |(_, rest)| rest))
    }

    /// The hidden fields of the first form in `body`.
    fn hidden_fields(body: &str) -> Vec<(String, String)> {
        let body = body.split("</form>").next().unwrap_or_default();
        let mut fields = Vec::new();
        for input in body.split("<input type=\"hidden\" ").skip(1) {
            let name = input
                .split("name=\"")
                .nth(1)
                .unwrap()
                .split('"')
                .next()
                .unwrap();
            let value = input
                .split("value=\"")
                .nth(1)
                .unwrap()
                .split('"')
                .next()
                .unwrap();
            fields.push((name.to_owned(), unescape(value)));
        }
        fields
    }

    /// The owner answers `form`: `decision`, with `key` and the scopes checked.
    pub async fn decide(&self, form: &Form, decision: &str, key: &str, scopes: &[&str]) -> Answer {
        let checked: Vec<String> = scopes
            .iter()
            .map(|scope| format!("scope.{scope}"))
            .collect();
        let mut body: Vec<(&str, &str)> = form
            .fields
            .iter()
            .map(|(name, value)| (name.as_str(), value.as_str()))
            .collect();
        body.extend(checked.iter().map(|name| (name.as_str(), "on")));
        body.push(("owner_key", key));
        body.push(("decision", decision));
        self.post_form(
            "/oauth/authorize",
            &body,
            &[("cookie", &form.cookie), ("origin", &self.issuer)],
        )
        .await
    }

    /// Registration, the page, the owner's yes with `scopes`: the code.
    pub async fn code(&self, redirect_uri: &str, scopes: &[&str]) -> (String, String) {
        let client = self.register("Test Client", redirect_uri).await;
        let page = self
            .page(&Self::authorize_query(
                &client,
                redirect_uri,
                &scopes.join(" "),
            ))
            .await;
        let answer = self
            .decide(&Self::form_of(&page), "approve", TOKEN, scopes)
            .await;
        assert_eq!(answer.status, 303, "{answer:?}");
        (client, answer.location_param("code").unwrap())
    }

    /// The owner's browser at `url` (an authorization URL a client sent it to) answers
    /// `decision` with the owner's key and `scopes` checked: where it is sent back to.
    pub async fn answer_url(&self, url: &str, decision: &str, scopes: &[&str]) -> String {
        let query = url
            .split_once('?')
            .unwrap_or_else(|| panic!("no query in {url}"))
            .1;
        let page = self.page(query).await;
        let answer = self
            .decide(&Self::form_of(&page), decision, TOKEN, scopes)
            .await;
        assert_eq!(answer.status, 303, "{answer:?}");
        answer.header("location").to_owned()
    }

    /// The owner signs in to the page of grants and revokes the client named `name`.
    pub async fn revoke_on_page(&self, name: &str) {
        let first = self.get("/oauth/grants").await;
        let csrf = cookies_of(&first);
        let mut body = Self::fields_after(&first.body, "/oauth/grants/sign-in");
        body.push(("owner_key".into(), TOKEN.into()));
        let signed = self.post_pairs("/oauth/grants/sign-in", &body, &csrf).await;
        assert_eq!(signed.status, 303, "{signed:?}");
        let session = format!("{csrf}; {}", cookies_of(&signed));
        let listed = self.get_with("/oauth/grants", &session).await;
        let row = listed
            .body
            .split("<tr>")
            .find(|row| row.starts_with(&format!("<td>{name}</td>")))
            .unwrap_or_else(|| panic!("no grant of {name:?}: {}", listed.body));
        let fields = Self::fields_after(row, "/oauth/grants/revoke");
        let revoked = self
            .post_pairs("/oauth/grants/revoke", &fields, &session)
            .await;
        assert_eq!(revoked.status, 303, "{revoked:?}");
    }

    /// POST `body` to `path` from this server's own page, with `cookies`.
    async fn post_pairs(&self, path: &str, body: &[(String, String)], cookies: &str) -> Answer {
        let pairs: Vec<(&str, &str)> = body
            .iter()
            .map(|(name, value)| (name.as_str(), value.as_str()))
            .collect();
        self.post_form(
            path,
            &pairs,
            &[("cookie", cookies), ("origin", &self.issuer)],
        )
        .await
    }

    /// The token endpoint's answer to `params`.
    pub async fn token(&self, params: &[(&str, &str)]) -> Answer {
        self.post_form("/oauth/token", params, &[]).await
    }

    /// The code exchanged for tokens (expected to succeed): the token answer.
    pub async fn exchange(&self, client: &str, code: &str, redirect_uri: &str) -> Value {
        let answer = self
            .token(&[
                ("grant_type", "authorization_code"),
                ("client_id", client),
                ("code", code),
                ("redirect_uri", redirect_uri),
                ("code_verifier", VERIFIER),
            ])
            .await;
        assert_eq!(answer.status, 200, "{answer:?}");
        answer.json()
    }
}

/// The cookies an answer set, as `a=1; b=2`.
pub fn cookies_of(answer: &Answer) -> String {
    answer
        .headers
        .get_all("set-cookie")
        .iter()
        .filter_map(|value| value.to_str().ok()?.split(';').next())
        .collect::<Vec<_>>()
        .join("; ")
}

fn unescape(text: &str) -> String {
    text.replace("&quot;", "\"")
        .replace("&#39;", "'")
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&amp;", "&")
}
