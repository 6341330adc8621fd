//! The owner's page of grants (`/oauth/grants`): each client granted, what it may do, when it
//! was granted and last signed in (or refreshed) and from where, with a button that revokes
//! it: its tokens are refused at their next request, in every process on the state directory
//! within a second. The owner signs in on the page with the owner's key, for an hour.

use bytes::Bytes;
use http_body_util::Full;
use hyper::{
    Response, StatusCode,
    header::{HeaderValue, LOCATION},
    http::request::Parts,
};

use crate::state::StateError;

use super::{
    AuthServer,
    book::Records,
    cookies,
    form::Params,
    html::{self, escape},
    secret,
};

/// What the sign-in form's tag is for.
const SIGN_IN: &str = "grants-sign-in";
/// Entries of the audit trail shown, newest first.
const RECENT_ACTIONS: usize = 50;
/// What a revoke form's tag is for.
const REVOKE: &str = "grants-revoke";
/// What the sign-out form's tag is for.
const SIGN_OUT: &str = "grants-sign-out";

/// `when` (Unix seconds) as `2026-11-29 06:10 UTC`.
pub(super) fn shown_time(when: u64) -> String {
    i64::try_from(when)
        .ok()
        .and_then(|secs| jiff::Timestamp::from_second(secs).ok())
        .map_or_else(
            || "?".to_owned(),
            |at| at.strftime("%Y-%m-%d %H:%M UTC").to_string(),
        )
}

/// A 303 to the grants page.
fn to_grants() -> Response<Full<Bytes>> {
    let mut response = Response::new(Full::new(Bytes::new()));
    *response.status_mut() = StatusCode::SEE_OTHER;
    response
        .headers_mut()
        .insert(LOCATION, HeaderValue::from_static("/oauth/grants"));
    html::secure(response.headers_mut());
    response
}

/// `GET /oauth/grants`: the grants, or the sign-in form.
pub fn page(auth: &AuthServer, parts: &Parts) -> Response<Full<Bytes>> {
    let csrf = cookies::csrf_or_new(auth, parts);
    let mut response = if cookies::is_owner(auth, parts) {
        grants(auth, &csrf)
    } else {
        sign_in_form(auth, &csrf, None, StatusCode::OK)
    };
    cookies::keep_csrf(auth, &mut response, &csrf);
    response
}

fn sign_in_form(
    auth: &AuthServer,
    csrf: &str,
    problem: Option<&str>,
    status: StatusCode,
) -> Response<Full<Bytes>> {
    let problem = problem
        .map(|problem| format!("<p class=\"warn\"><strong>{}</strong></p>", escape(problem)))
        .unwrap_or_default();
    let tag = auth.key.tag(SIGN_IN, csrf);
    html::page(
        status,
        "Clients of this home",
        &format!(
            "{problem}<p>Sign in as the owner to see which apps may use this home, and to revoke them.</p><form method=\"post\" action=\"/oauth/grants/sign-in\"><input type=\"hidden\" name=\"csrf\" value=\"{csrf}\"><input type=\"hidden\" name=\"tag\" value=\"{tag}\"><label>The owner's key (the token in the server's <code>--http-token-file</code>)<input type=\"password\" name=\"owner_key\" autocomplete=\"current-password\"></label><button type=\"submit\">Sign in</button></form>"
        ),
    )
}

fn grants(auth: &AuthServer, csrf: &str) -> Response<Full<Bytes>> {
    let records = auth.book.records();
    let mut body = String::new();
    if records.grants.is_empty() {
        body.push_str("<p>No app may use this home: none has been granted anything.</p>");
    } else {
        body.push_str("<table class=\"fixed grants\"><tr><th>App (its own name)</th><th>May</th><th>Granted</th><th>Last signed in</th><th></th></tr>");
        for grant in &records.grants {
            let from = grant
                .last_from
                .as_deref()
                .map(|from| format!("<br><small>from {}</small>", escape(from)))
                .unwrap_or_default();
            let tag = auth.key.tag(REVOKE, &format!("{}\n{csrf}", grant.id));
            body.push_str(&format!(
                "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}{from}</td><td><form method=\"post\" action=\"/oauth/grants/revoke\"><input type=\"hidden\" name=\"grant\" value=\"{}\"><input type=\"hidden\" name=\"csrf\" value=\"{csrf}\"><input type=\"hidden\" name=\"tag\" value=\"{tag}\"><button type=\"submit\">Revoke</button></form></td></tr>",
                escape(&grant.client_name),
                escape(&grant.scopes.to_string()),
                shown_time(grant.granted_at),
                shown_time(grant.last_used_at),
                escape(&grant.id),
            ));
        }
        body.push_str("</table>");
    }
    if let Some(audit) = &auth.audit {
        body.push_str("<h2>Recent actions</h2><table class=\"fixed log\"><tr><th>When (UTC)</th><th>Who</th><th>What</th><th>Outcome</th></tr>");
        for entry in audit.recent(RECENT_ACTIONS) {
            let field = |name: &str| escape(entry[name].as_str().unwrap_or_default());
            body.push_str(&format!(
                "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
                shown_audit_time(entry["at"].as_str().unwrap_or_default()),
                field("who"),
                field("what"),
                field("outcome")
            ));
        }
        body.push_str("</table>");
    }
    body.push_str(&format!(
        "<p><small>{} registered. Revoking ends an app's tokens at their next request; it can sign in again only with your yes.</small></p>",
        match records.clients.len() {
            1 => "1 app".to_owned(),
            n => format!("{n} apps"),
        }
    ));
    let tag = auth.key.tag(SIGN_OUT, csrf);
    body.push_str(&format!(
        "<form method=\"post\" action=\"/oauth/grants/sign-out\"><input type=\"hidden\" name=\"csrf\" value=\"{csrf}\"><input type=\"hidden\" name=\"tag\" value=\"{tag}\"><button type=\"submit\">Sign out everywhere</button></form>"
    ));
    html::page(StatusCode::OK, "Clients of this home", &body)
}

/// An audit line's RFC 3339 time (UTC) as the page shows it: to the second, a space for
/// the `T` (`2026-11-29 09:00:05`); a time of another shape as it is, escaped.
fn shown_audit_time(at: &str) -> String {
    match at.get(..19) {
        Some(second) if at.as_bytes().get(10) == Some(&b'T') => {
            escape(&second.replacen('T', " ", 1))
        }
        _ => escape(at),
    }
}

/// A form posted from another site's page, refused.
fn foreign_origin(auth: &AuthServer, parts: &Parts) -> Option<Response<Full<Bytes>>> {
    let from = auth.foreign_poster(&parts.headers)?;
    Some(html::page(
        StatusCode::FORBIDDEN,
        "Not from this server's page",
        &format!(
            "<p>This form was posted from {}, not from this server's own page: nothing was done.</p>",
            escape(&from)
        ),
    ))
}

/// The form in `body`, if it came from this browser's page: its fields.
fn posted(
    auth: &AuthServer,
    parts: &Parts,
    body: &[u8],
) -> Result<(Params, String), Box<Response<Full<Bytes>>>> {
    if let Some(refused) = foreign_origin(auth, parts) {
        return Err(Box::new(refused));
    }
    let params = Params::parse(body).map_err(|why| {
        Box::new(html::page(
            StatusCode::BAD_REQUEST,
            "Malformed",
            &format!("<p>{}</p>", escape(&why)),
        ))
    })?;
    let csrf = cookies::csrf(auth, parts)
        .filter(|cookie| secret::same(cookie, params.get("csrf").unwrap_or_default()))
        .ok_or_else(|| {
            Box::new(html::page(
                StatusCode::FORBIDDEN,
                "Not from this server's page",
                "<p>This form did not come from the page this server showed in this browser (its form token does not match): nothing was done. <a href=\"/oauth/grants\">Start again</a>.</p>",
            ))
        })?;
    Ok((params, csrf))
}

/// The fields of a form of this browser's page whose tag is for `purpose`; refused with the
/// sign-in form, saying `not_done`, when the tag is not this server's.
fn tagged_form(
    auth: &AuthServer,
    parts: &Parts,
    body: &[u8],
    purpose: &str,
    not_done: &str,
) -> Result<(Params, String), Box<Response<Full<Bytes>>>> {
    let (params, csrf) = posted(auth, parts, body)?;
    if auth
        .key
        .tagged(purpose, &csrf, params.get("tag").unwrap_or_default())
    {
        return Ok((params, csrf));
    }
    Err(Box::new(sign_in_form(
        auth,
        &csrf,
        Some(&format!("This form was not this server's: {not_done}.")),
        StatusCode::FORBIDDEN,
    )))
}

/// `POST /oauth/grants/sign-in`: the owner's key, for an hour on the page.
pub fn sign_in(
    auth: &AuthServer,
    parts: &Parts,
    body: &[u8],
    peer: Option<&str>,
) -> Response<Full<Bytes>> {
    let (params, csrf) = match tagged_form(auth, parts, body, SIGN_IN, "sign in again") {
        Ok(posted) => posted,
        Err(refused) => return *refused,
    };
    match auth.is_owner(params.get("owner_key").unwrap_or_default(), peer) {
        None => sign_in_form(
            auth,
            &csrf,
            Some("Too many wrong keys in the last minute: wait a minute, then try again."),
            StatusCode::TOO_MANY_REQUESTS,
        ),
        Some(false) => sign_in_form(
            auth,
            &csrf,
            Some("That is not the owner's key."),
            StatusCode::FORBIDDEN,
        ),
        Some(true) => {
            let mut response = to_grants();
            cookies::start_owner_session(auth, &mut response);
            response
        }
    }
}

/// `POST /oauth/grants/sign-out`: every owner's session ends, in this browser and every
/// other (found by the hostile review: a session, once begun, could not be ended before its
/// hour, on a shared or lost device too).
pub fn sign_out(auth: &AuthServer, parts: &Parts, body: &[u8]) -> Response<Full<Bytes>> {
    let csrf = match tagged_form(auth, parts, body, SIGN_OUT, "nobody was signed out") {
        Ok((_, csrf)) => csrf,
        Err(refused) => return *refused,
    };
    if !cookies::is_owner(auth, parts) {
        return sign_in_form(
            auth,
            &csrf,
            Some("Sign in as the owner first: nobody was signed out."),
            StatusCode::FORBIDDEN,
        );
    }
    let kept = auth.book.change(|records: &mut Records| {
        records.owner_generation = secret::random_hex(16);
        Ok::<_, StateError>((true, ()))
    });
    if let Err(err) = kept {
        tracing::error!(error = %err, "a sign-out could not be written");
        return html::page(
            StatusCode::INTERNAL_SERVER_ERROR,
            "Not signed out",
            "<p>The sign-out could not be kept (the server's log says why): sessions begun elsewhere may still stand.</p>",
        );
    }
    auth.record(
        "the owner (grants page)",
        "signed out everywhere",
        "signed out",
    );
    let mut response = to_grants();
    cookies::end_owner_session(auth, &mut response);
    response
}

/// `POST /oauth/grants/revoke`: one grant ended, by the owner.
pub fn revoke(auth: &AuthServer, parts: &Parts, body: &[u8]) -> Response<Full<Bytes>> {
    let (params, csrf) = match posted(auth, parts, body) {
        Ok(posted) => posted,
        Err(refused) => return *refused,
    };
    if !cookies::is_owner(auth, parts) {
        return sign_in_form(
            auth,
            &csrf,
            Some("Sign in as the owner first (the session lasts an hour): nothing was revoked."),
            StatusCode::FORBIDDEN,
        );
    }
    let grant = params.get("grant").unwrap_or_default();
    if !auth.key.tagged(
        REVOKE,
        &format!("{grant}\n{csrf}"),
        params.get("tag").unwrap_or_default(),
    ) {
        return html::page(
            StatusCode::FORBIDDEN,
            "Not from this server's page",
            "<p>This form was not this server's: nothing was revoked. <a href=\"/oauth/grants\">Back to the grants</a>.</p>",
        );
    }
    let revoked = auth.book.change(|records: &mut Records| {
        let name = records
            .grants
            .iter()
            .find(|found| found.id == grant)
            .map(|found| found.client_name.clone());
        Ok::<_, StateError>((records.revoke(grant), name))
    });
    match revoked {
        Ok(name) => {
            if let Some(name) = name {
                tracing::info!(client = %name, grant, "the owner revoked an OAuth client's grant");
                auth.record(
                    "the owner (grants page)",
                    &format!("revoked the grant {grant} of the client {name:?}"),
                    "revoked",
                );
            }
            to_grants()
        }
        Err(err) => {
            tracing::error!(error = %err, "a revocation could not be written");
            html::page(
                StatusCode::INTERNAL_SERVER_ERROR,
                "Not revoked",
                "<p>The revocation could not be kept (the server's log says why): the grant still stands.</p>",
            )
        }
    }
}
