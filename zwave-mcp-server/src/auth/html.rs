//! The authorization server's pages: HTML escaped where any text goes in, one small style
//! sheet inline (allowed by its hash in the policy), no script, readable on a phone; and the
//! headers every page carries (no framing, no caching, no referrer, a strict policy).

use std::fmt::Write as _;

use base64::Engine as _;
use bytes::Bytes;
use http_body_util::Full;
use hyper::{
    Response, StatusCode,
    header::{CACHE_CONTROL, CONTENT_SECURITY_POLICY, CONTENT_TYPE, HeaderValue, REFERRER_POLICY},
};
use sha2::{Digest as _, Sha256};

/// The pages' style.
const STYLE: &str = "body{font-family:system-ui,sans-serif;max-width:36rem;margin:1.5rem auto;padding:0 1rem;line-height:1.45;color:#1b1b1b}h1{font-size:1.35rem}.claim{background:#f4f4f4;padding:.6rem .8rem;border-radius:.4rem}.warn{color:#8a1c00}label{display:block;margin:.5rem 0}input[type=password]{width:100%;font-size:1rem;padding:.4rem;box-sizing:border-box}button{font-size:1rem;padding:.5rem 1rem;margin:.8rem .6rem 0 0}small{color:#555}table{border-collapse:collapse;width:100%}td,th{text-align:left;padding:.3rem;border-bottom:1px solid #ddd;vertical-align:top;overflow-wrap:break-word}table.fixed{table-layout:fixed}.log{font-size:.85rem}.log th:nth-child(1){width:22%}.log th:nth-child(2){width:26%}.log th:nth-child(4){width:24%}.grants th:nth-child(1){width:30%}.grants th:nth-child(2){width:17%}.grants th:nth-child(5){width:6.5rem}td button{margin:0;white-space:nowrap}";

/// `text` safe anywhere in HTML text or a quoted attribute.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// A page: `title` and `body` (HTML already escaped) in the shell.
pub fn page(status: StatusCode, title: &str, body: &str) -> Response<Full<Bytes>> {
    page_sending_to(status, title, body, None)
}

/// [`page`] whose form's answer sends the browser on to `going_to` (a redirect URI): Chrome
/// and Safari hold a form's redirect to `form-action` too (found by the hostile review: the
/// approval's redirect to the app was blocked), so its origin is allowed there.
pub fn page_sending_to(
    status: StatusCode,
    title: &str,
    body: &str,
    going_to: Option<&str>,
) -> Response<Full<Bytes>> {
    let mut html = String::with_capacity(body.len() + STYLE.len() + 400);
    let _ = write!(
        html,
        "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><meta name=\"viewport\" content=\"width=device-width,initial-scale=1\"><title>{}</title><style>{STYLE}</style></head><body><h1>{}</h1>{body}</body></html>",
        escape(title),
        escape(title)
    );
    let mut response = Response::new(Full::new(Bytes::from(html)));
    *response.status_mut() = status;
    let headers = response.headers_mut();
    headers.insert(
        CONTENT_TYPE,
        HeaderValue::from_static("text/html; charset=utf-8"),
    );
    secure(headers);
    if let Some(source) = going_to.and_then(source_of) {
        let style =
            base64::engine::general_purpose::STANDARD.encode(Sha256::digest(STYLE.as_bytes()));
        if let Ok(policy) = HeaderValue::from_str(&format!(
            "default-src 'none'; style-src 'sha256-{style}'; form-action 'self' {source}; frame-ancestors 'none'; base-uri 'none'"
        )) {
            headers.insert(CONTENT_SECURITY_POLICY, policy);
        }
    }
    response
}

/// The CSP source of `uri`: `scheme://host[:port]`, or `scheme:` for an app's own scheme;
/// `None` when it holds a character a policy could be split at.
fn source_of(uri: &str) -> Option<String> {
    let (scheme, rest) = uri.split_once(':')?;
    // Lowercase: a policy's scheme matches any case (found by the hostile review: `HTTPS:`
    // from `HTTPS://evil.example` allowed every https address).
    let scheme = scheme.to_ascii_lowercase();
    let scheme = scheme.as_str();
    let source = match rest.strip_prefix("//") {
        Some(after) if matches!(scheme, "http" | "https") => {
            let authority = after.split(['/', '?']).next().unwrap_or_default();
            format!("{scheme}://{}", authority.to_ascii_lowercase())
        }
        _ => format!("{scheme}:"),
    };
    source
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || b"+-.:/[]".contains(&b))
        .then_some(source)
}

/// The headers of every answer of the authorization server's pages: nothing is cached, no
/// page can be framed, no script runs, forms post only here, and no referrer leaves for
/// another origin. (`same-origin`, not `no-referrer`: under `no-referrer` Chromium sends a
/// form's POST with `Origin: null`, which the pages refuse as not their own; found by the
/// browser test.)
pub fn secure(headers: &mut hyper::HeaderMap) {
    let style = base64::engine::general_purpose::STANDARD.encode(Sha256::digest(STYLE.as_bytes()));
    if let Ok(policy) = HeaderValue::from_str(&format!(
        "default-src 'none'; style-src 'sha256-{style}'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
    )) {
        headers.insert(CONTENT_SECURITY_POLICY, policy);
    }
    headers.insert("x-frame-options", HeaderValue::from_static("DENY"));
    headers.insert(CACHE_CONTROL, HeaderValue::from_static("no-store"));
    headers.insert(REFERRER_POLICY, HeaderValue::from_static("same-origin"));
    headers.insert(
        "x-content-type-options",
        HeaderValue::from_static("nosniff"),
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_cannot_become_markup() {
        assert_eq!(
            escape(r#"<script>"a" & 'b'</script>"#),
            "&lt;script&gt;&quot;a&quot; &amp; &#39;b&#39;&lt;/script&gt;"
        );
    }

    #[test]
    fn a_form_may_send_the_browser_on_to_the_apps_origin_only() {
        let sent = page_sending_to(
            StatusCode::OK,
            "t",
            "",
            Some("https://claude.ai/api/mcp/auth_callback?x=1"),
        );
        let policy = sent.headers()[CONTENT_SECURITY_POLICY].to_str().unwrap();
        assert!(
            policy.contains("; form-action 'self' https://claude.ai; "),
            "{policy}"
        );
        let app = page_sending_to(
            StatusCode::OK,
            "t",
            "",
            Some("cursor://anysphere.cursor-retrieval/cb"),
        );
        assert!(
            app.headers()[CONTENT_SECURITY_POLICY]
                .to_str()
                .unwrap()
                .contains("form-action 'self' cursor:;")
        );
        // A scheme in capitals (found by the hostile review: `HTTPS:` allowed any https page).
        let upper = page_sending_to(StatusCode::OK, "t", "", Some("HTTPS://Claude.AI/cb"));
        assert!(
            upper.headers()[CONTENT_SECURITY_POLICY]
                .to_str()
                .unwrap()
                .contains("form-action 'self' https://claude.ai;")
        );
        // A character that could split the policy: the page's own policy, unchanged.
        let split = page_sending_to(
            StatusCode::OK,
            "t",
            "",
            Some("https://a.example;script-src"),
        );
        assert!(
            !split.headers()[CONTENT_SECURITY_POLICY]
                .to_str()
                .unwrap()
                .contains("script-src")
        );
    }

    #[test]
    fn every_page_forbids_framing_scripts_and_caching() {
        let answer = page(StatusCode::OK, "Allow <x>?", "<p>hi</p>");
        let headers = answer.headers();
        let policy = headers[CONTENT_SECURITY_POLICY].to_str().unwrap();
        assert!(policy.contains("frame-ancestors 'none'"), "{policy}");
        assert!(
            policy.starts_with("default-src 'none'; style-src 'sha256-"),
            "{policy}"
        );
        assert_eq!(headers["x-frame-options"], "DENY");
        assert_eq!(headers[CACHE_CONTROL], "no-store");
        assert_eq!(headers[REFERRER_POLICY], "same-origin");
    }
}
