//! The owner's approval (`/oauth/authorize`): the client's request checked (an unknown client
//! or a redirect URI it did not register is said on the page, never redirected to), then a
//! page that says which client asks, where it sends the person back (both its own claims),
//! and lets the owner choose its scopes, proving who they are with the owner's key. The form
//! carries the request, signed (any process on the state directory can check it) with a
//! CSRF value that must match the page's cookie; it expires after [`FORM_LIFETIME`].

use std::time::Duration;

use bytes::Bytes;
use http_body_util::Full;
use hyper::{
    Response, StatusCode,
    header::{HeaderValue, LOCATION},
    http::request::Parts,
};

use super::{
    AuthServer,
    book::{Code, Grant, Records},
    cookies,
    form::Params,
    html::{self, escape},
    register::redirect_matches,
    scope::{Scope, Scopes},
    secret,
};

/// How long the owner has to answer the page.
pub const FORM_LIFETIME: Duration = Duration::from_secs(600);
/// How long a code may wait to be redeemed.
pub const CODE_LIFETIME: Duration = Duration::from_secs(60);
/// What the form's tag is for.
const PURPOSE: &str = "consent";

/// A request checked: the client it names and where it goes back to.
struct Asked {
    client_id: String,
    client_name: String,
    redirect_uri: String,
    state: Option<String>,
    challenge: String,
    scopes: Scopes,
}

/// Why a request is refused: on the page (the redirect URI is not to be trusted), or sent
/// back to the client.
enum Refusal {
    Page(StatusCode, String),
    Back {
        redirect_uri: String,
        state: Option<String>,
        error: &'static str,
        why: String,
    },
}

impl Refusal {
    fn answer(self, auth: &AuthServer) -> Response<Full<Bytes>> {
        match self {
            Self::Page(status, why) => html::page(
                status,
                "This sign-in cannot go on",
                &format!(
                    "<p>{}</p><p><small>Start again from the app that sent you here.</small></p>",
                    escape(&why)
                ),
            ),
            Self::Back {
                redirect_uri,
                state,
                error,
                why,
            } => back(
                auth,
                &redirect_uri,
                &[("error", error), ("error_description", &why)],
                state.as_deref(),
            ),
        }
    }
}

/// A 303 to `redirect_uri` with `params`, `state` and `iss` (RFC 9207).
fn back(
    auth: &AuthServer,
    redirect_uri: &str,
    params: &[(&str, &str)],
    state: Option<&str>,
) -> Response<Full<Bytes>> {
    let mut query = form_urlencoded::Serializer::new(String::new());
    for (name, value) in params {
        query.append_pair(name, value);
    }
    if let Some(state) = state {
        query.append_pair("state", state);
    }
    query.append_pair("iss", &auth.issuer);
    let separator = if redirect_uri.contains('?') { '&' } else { '?' };
    let location = format!("{redirect_uri}{separator}{}", query.finish());
    let mut response = Response::new(Full::new(Bytes::new()));
    *response.status_mut() = StatusCode::SEE_OTHER;
    match HeaderValue::from_str(&location) {
        Ok(location) => {
            response.headers_mut().insert(LOCATION, location);
        }
        Err(_) => {
            return html::page(
                StatusCode::BAD_REQUEST,
                "This sign-in cannot go on",
                "<p>The app's address to go back to cannot be written in a redirect.</p>",
            );
        }
    }
    html::secure(response.headers_mut());
    response
}

/// The request in `params`, checked.
fn check(auth: &AuthServer, params: &Params) -> Result<Asked, Refusal> {
    let page = |why: String| Refusal::Page(StatusCode::BAD_REQUEST, why);
    let client_id = params
        .get("client_id")
        .ok_or_else(|| page("The request names no client (client_id is missing).".into()))?;
    let records = auth.book.records();
    let client = auth.client_named(&records, client_id).map_err(page)?;
    let redirect_uri = match params.get("redirect_uri") {
        Some(given) => client
            .redirect_uris
            .iter()
            .any(|registered| redirect_matches(registered, given))
            .then(|| given.to_owned())
            .ok_or_else(|| {
                page(format!(
                    "The address to go back to, {:?}, is not one the client registered: nothing is sent there.",
                    common::clip(given, 120)
                ))
            })?,
        None if client.redirect_uris.len() == 1 => client.redirect_uris[0].clone(),
        None => return Err(page("The request names no address to go back to (redirect_uri), and the client registered several.".into())),
    };
    let state = params.get("state").map(str::to_owned);
    // Found by the hostile review: anyone may register, so sending an error back before the
    // owner acted made this server bounce a link to any address. Only a client the owner
    // granted before is sent its errors; others' are said on the page.
    let trusted = records
        .grants
        .iter()
        .any(|grant| grant.client_id == client.id && grant.refresh.is_some());
    let back = |error: &'static str, why: String| {
        if trusted {
            Refusal::Back {
                redirect_uri: redirect_uri.clone(),
                state: state.clone(),
                error,
                why,
            }
        } else {
            Refusal::Page(
                StatusCode::BAD_REQUEST,
                format!("The app's request cannot be answered ({error}): {why}."),
            )
        }
    };
    if params.get("response_type") != Some("code") {
        return Err(back(
            "unsupported_response_type",
            "response_type must be code".into(),
        ));
    }
    let challenge = params
        .get("code_challenge")
        .filter(|challenge| secret::is_challenge(challenge))
        .ok_or_else(|| {
            back(
                "invalid_request",
                "code_challenge is missing or malformed: this server requires PKCE with S256"
                    .into(),
            )
        })?;
    if params.get("code_challenge_method") != Some("S256") {
        return Err(back(
            "invalid_request",
            "code_challenge_method must be S256".into(),
        ));
    }
    if let Some(resource) = params.get("resource")
        && resource != auth.resource
    {
        return Err(back(
            "invalid_target",
            format!("this server grants access to {} only", auth.resource),
        ));
    }
    let scopes = Scopes::parse(params.get("scope").unwrap_or_default()).map_err(|word| {
        back(
            "invalid_scope",
            format!(
                "{:?} is not a scope of this server (read, control, sensitive, maintenance)",
                common::clip(&word, 40)
            ),
        )
    })?;
    Ok(Asked {
        client_id: client.id.clone(),
        client_name: client.name.clone(),
        redirect_uri: redirect_uri.clone(),
        state: state.clone(),
        challenge: challenge.to_owned(),
        scopes,
    })
}

/// The fields the form carries, in the order they are tagged.
fn carried(asked: &Asked, expires: u64, csrf: &str) -> Vec<(&'static str, String)> {
    vec![
        ("client_id", asked.client_id.clone()),
        ("redirect_uri", asked.redirect_uri.clone()),
        ("state", asked.state.clone().unwrap_or_default()),
        ("code_challenge", asked.challenge.clone()),
        ("asked_scope", asked.scopes.to_string()),
        ("expires", expires.to_string()),
        ("csrf", csrf.to_owned()),
    ]
}

/// What the tag covers: each field as `name=value`, one a line (values hold no newline: a
/// field that did would be refused when read back).
fn tagged_text(fields: &[(&'static str, String)]) -> String {
    fields
        .iter()
        .map(|(name, value)| format!("{name}={value}\n"))
        .collect()
}

/// `GET /oauth/authorize`: the page the owner answers.
pub fn ask(auth: &AuthServer, parts: &Parts) -> Response<Full<Bytes>> {
    let params = match Params::parse(parts.uri.query().unwrap_or_default().as_bytes()) {
        Ok(params) => params,
        Err(why) => {
            return Refusal::Page(
                StatusCode::BAD_REQUEST,
                format!("The request is malformed: {why}."),
            )
            .answer(auth);
        }
    };
    let asked = match check(auth, &params) {
        Ok(asked) => asked,
        Err(refusal) => return refusal.answer(auth),
    };
    let csrf = cookies::csrf_or_new(auth, parts);
    let expires = secret::now() + FORM_LIFETIME.as_secs();
    let mut response = form(auth, &asked, expires, &csrf, None, StatusCode::OK);
    cookies::keep_csrf(auth, &mut response, &csrf);
    response
}

/// The approval page for `asked`, with `problem` said above the form.
fn form(
    auth: &AuthServer,
    asked: &Asked,
    expires: u64,
    csrf: &str,
    problem: Option<&str>,
    status: StatusCode,
) -> Response<Full<Bytes>> {
    let fields = carried(asked, expires, csrf);
    let tag = auth.key.tag(PURPOSE, &tagged_text(&fields));
    let going_back = asked.redirect_uri.split_once("://").map_or(
        asked.redirect_uri.as_str(),
        |(scheme, rest)| {
            let host = rest.split(['/', '?']).next().unwrap_or_default();
            &asked.redirect_uri[..scheme.len() + 3 + host.len()]
        },
    );
    let chosen = if asked.scopes.is_empty() {
        Scopes::of([Scope::Read])
    } else {
        asked.scopes
    };
    let mut body = String::new();
    if let Some(problem) = problem {
        body.push_str(&format!(
            "<p class=\"warn\"><strong>{}</strong></p>",
            escape(problem)
        ));
    }
    // A client described by its metadata document is known by where the document is
    // served: that much is checked (it came over https from that host).
    let served_by = asked
        .client_id
        .strip_prefix("https://")
        .and_then(|rest| rest.split(['/', '?']).next())
        .map(|host| {
            format!(
                "<br><small>Its description was fetched from <strong>{}</strong> over https: that much is checked.</small>",
                escape(&crate::network::text::clean(host, 120))
            )
        })
        .unwrap_or_default();
    body.push_str(&format!(
        "<p class=\"claim\">An app that calls itself <strong>{}</strong> asks to use this home. When you answer, your browser goes back to <strong>{}</strong>.<br><small>Both are the app's own words: answer only if you just asked this app to connect.</small>{served_by}</p><form method=\"post\" action=\"/oauth/authorize\">",
        escape(&asked.client_name),
        escape(&crate::network::text::clean(going_back, 120))
    ));
    // Found by the hostile review: an app on the owner's machine can use another app's
    // client id with its own loopback port; approved, its tokens would replace the real app's
    // grant. The owner is told that a grant exists already.
    let records = auth.book.records();
    if let Some(held) = records
        .grants
        .iter()
        .find(|grant| grant.client_id == asked.client_id && grant.refresh.is_some())
    {
        body.push_str(&format!(
            "<p class=\"warn\">This app already holds a grant (<strong>{}</strong>, since {}). Allowing replaces it: the app signed in with it now loses it. If you did not just ask this app to connect again, deny.</p>",
            held.scopes,
            super::grants::shown_time(held.granted_at)
        ));
    }
    for (name, value) in &fields {
        body.push_str(&format!(
            "<input type=\"hidden\" name=\"{name}\" value=\"{}\">",
            escape(value)
        ));
    }
    body.push_str(&format!(
        "<input type=\"hidden\" name=\"tag\" value=\"{tag}\"><p>It may:</p>"
    ));
    for scope in Scope::ALL {
        let checked = if chosen.has(scope) { " checked" } else { "" };
        body.push_str(&format!(
            "<label><input type=\"checkbox\" name=\"scope.{0}\" value=\"on\"{checked}> <strong>{0}</strong>: {1}</label>",
            scope.name(),
            escape(scope.meaning())
        ));
    }
    body.push_str("<label>The owner's key (the token in the server's <code>--http-token-file</code>)<input type=\"password\" name=\"owner_key\" autocomplete=\"current-password\"></label><button type=\"submit\" name=\"decision\" value=\"approve\">Allow</button><button type=\"submit\" name=\"decision\" value=\"deny\">Deny</button></form>");
    html::page_sending_to(
        status,
        &format!(
            "Allow \u{201c}{}\u{201d} to use this home?",
            asked.client_name
        ),
        &body,
        Some(&asked.redirect_uri),
    )
}

/// An answer to the page, checked to come from the page this server showed in this
/// browser: its request (checked again), its fields, its CSRF value and when it expires.
struct Answered {
    asked: Asked,
    params: Params,
    csrf: String,
    expires: u64,
}

/// The answer in `body`, or the page refusing it.
fn answered(
    auth: &AuthServer,
    parts: &Parts,
    body: &[u8],
) -> Result<Answered, Box<Response<Full<Bytes>>>> {
    let forbidden =
        |why: &str| Box::new(Refusal::Page(StatusCode::FORBIDDEN, why.to_owned()).answer(auth));
    if let Some(from) = auth.foreign_poster(&parts.headers) {
        return Err(forbidden(&format!(
            "This answer was posted from {from}, not from this server's own page: nothing was granted."
        )));
    }
    let params = Params::parse(body).map_err(|why| {
        Box::new(
            Refusal::Page(
                StatusCode::BAD_REQUEST,
                format!("The answer is malformed: {why}."),
            )
            .answer(auth),
        )
    })?;
    let field = |name: &str| params.get(name).unwrap_or_default().to_owned();
    let Some(csrf) =
        cookies::csrf(auth, parts).filter(|cookie| secret::same(cookie, &field("csrf")))
    else {
        return Err(forbidden(
            "This answer did not come from the page this server showed in this browser (its form token does not match): nothing was granted. Start again from the app.",
        ));
    };
    // The request the page was about, checked again (the client may be gone since).
    let query: String = form_urlencoded::Serializer::new(String::new())
        .append_pair("client_id", &field("client_id"))
        .append_pair("redirect_uri", &field("redirect_uri"))
        .append_pair("state", &field("state"))
        .append_pair("code_challenge", &field("code_challenge"))
        .append_pair("code_challenge_method", "S256")
        .append_pair("response_type", "code")
        .append_pair("scope", &field("asked_scope"))
        .finish();
    let request = Params::parse(query.as_bytes()).unwrap_or_default();
    let asked = check(auth, &request).map_err(|refusal| Box::new(refusal.answer(auth)))?;
    let expires: u64 = field("expires").parse().unwrap_or(0);
    let fields = carried(&asked, expires, &csrf);
    if !auth
        .key
        .tagged(PURPOSE, &tagged_text(&fields), &field("tag"))
    {
        return Err(forbidden(
            "This answer does not match the page this server showed: nothing was granted. Start again from the app.",
        ));
    }
    if expires <= secret::now() {
        return Err(Box::new(
            Refusal::Page(
                StatusCode::BAD_REQUEST,
                "This page expired (it lasts 10 minutes): nothing was granted. Start again from the app.".into(),
            )
            .answer(auth),
        ));
    }
    Ok(Answered {
        asked,
        params,
        csrf,
        expires,
    })
}

/// `POST /oauth/authorize`: the owner's answer.
pub fn decide(
    auth: &AuthServer,
    parts: &Parts,
    body: &[u8],
    peer: Option<&str>,
) -> Response<Full<Bytes>> {
    let Answered {
        asked,
        params,
        csrf,
        expires,
    } = match answered(auth, parts, body) {
        Ok(answered) => answered,
        Err(refused) => return *refused,
    };
    let asking = format!(
        "the client {:?} asked to sign in ({})",
        asked.client_name, asked.client_id
    );
    if params.get("decision") != Some("approve") {
        // A form is answered once: found by the hostile review, the same denial posted a
        // thousand times (no key needed) pushed every real line off the owner's page.
        if !auth.answered_before(params.get("tag").unwrap_or_default()) && auth.tell_denial(peer) {
            tracing::info!(client = %asked.client_name, "an OAuth client was denied");
            auth.record(
                &format!("someone at the approval page, from {}", peer.unwrap_or("?")),
                &asking,
                "denied (no key is needed to deny)",
            );
        }
        return back(
            auth,
            &asked.redirect_uri,
            &[
                ("error", "access_denied"),
                ("error_description", "the owner denied the request"),
            ],
            asked.state.as_deref(),
        );
    }
    let again = |problem: &str, status| form(auth, &asked, expires, &csrf, Some(problem), status);
    match auth.is_owner(params.get("owner_key").unwrap_or_default(), peer) {
        None => {
            return again(
                "Too many wrong keys in the last minute: wait a minute, then try again.",
                StatusCode::TOO_MANY_REQUESTS,
            );
        }
        Some(false) => {
            auth.record(
                &format!("someone at the approval page, from {}", peer.unwrap_or("?")),
                &asking,
                "refused: not the owner's key",
            );
            return again(
                "That is not the owner's key: nothing was granted.",
                StatusCode::FORBIDDEN,
            );
        }
        Some(true) => {}
    }
    let scopes = Scopes::of(
        Scope::ALL
            .into_iter()
            .filter(|scope| params.get(&format!("scope.{}", scope.name())) == Some("on")),
    );
    if scopes.is_empty() {
        return again(
            "Choose at least one thing the app may do, or deny it.",
            StatusCode::BAD_REQUEST,
        );
    }
    if auth.answered_before(params.get("tag").unwrap_or_default()) {
        return Refusal::Page(
            StatusCode::BAD_REQUEST,
            "This page was answered already: start again from the app.".into(),
        )
        .answer(auth);
    }
    match grant(auth, &asked, scopes) {
        Ok(code) => {
            tracing::info!(client = %asked.client_name, %scopes, "the owner granted an OAuth client");
            let grant = code.split('.').nth(1).unwrap_or_default();
            auth.record(
                "the owner (approval page)",
                &asking,
                &format!("granted {scopes} (grant {grant})"),
            );
            back(
                auth,
                &asked.redirect_uri,
                &[("code", &code)],
                asked.state.as_deref(),
            )
        }
        Err(err) => {
            tracing::error!(error = %err, "a grant could not be written");
            Refusal::Page(
                StatusCode::INTERNAL_SERVER_ERROR,
                "The grant could not be kept (the server's log says why): nothing was granted."
                    .into(),
            )
            .answer(auth)
        }
    }
}

/// A new grant of `scopes` to `asked`'s client, and its code.
fn grant(auth: &AuthServer, asked: &Asked, scopes: Scopes) -> Result<String, super::StateError> {
    let id = secret::random_hex(16);
    let code = format!("zac1.{id}.{}", secret::random_hex(32));
    let now = secret::now();
    let grant = Grant {
        id,
        client_id: asked.client_id.clone(),
        client_name: asked.client_name.clone(),
        scopes,
        granted_at: now,
        last_used_at: now,
        last_from: None,
        code: Some(Code {
            digest: secret::digest(&code),
            challenge: asked.challenge.clone(),
            redirect_uri: asked.redirect_uri.clone(),
            expires_at: now + CODE_LIFETIME.as_secs(),
            redeemed: false,
        }),
        refresh: None,
        retired: Vec::new(),
    };
    auth.book.change(|records: &mut Records| {
        records.grants.push(grant);
        Ok::<_, super::StateError>((true, ()))
    })?;
    Ok(code)
}
