//! Client ID Metadata Documents (MCP 2025-11-25; draft-ietf-oauth-client-id-metadata-document):
//! a client whose `client_id` is an `https://` URL describes itself in the JSON document
//! served there, instead of registering. Claude's and ChatGPT's connectors sign in so.
//!
//! The document is fetched when a person arrives at the approval page (and kept
//! [`KEPT_FOR`] in the book, like a registration), within bounds: `https` only, no redirect
//! followed, [`MAX_DOCUMENT_BYTES`] at most, [`FETCH_TIMEOUT`] in all, and never from a
//! loopback, private, link-local or otherwise non-public address — checked on every address
//! the name resolves to, at connection time (a name that resolves elsewhere later cannot
//! reach inside) — unless the owner allows private addresses. What it says is checked as a
//! registration is (`register::described`), and its `client_id` must be its own URL.

use std::{
    net::{IpAddr, SocketAddr},
    sync::Arc,
    time::Duration,
};

use futures_util::StreamExt as _;
use serde_json::Value;

use super::{
    AuthServer,
    book::{Client, Records, is_document_url},
    endpoints::OAuthError,
    register::{described, make_room},
    secret,
};

/// The largest document read, in bytes (the draft suggests 5 KB).
pub const MAX_DOCUMENT_BYTES: usize = 5 * 1024;
/// The longest a fetch may take, connection included.
pub const FETCH_TIMEOUT: Duration = Duration::from_secs(5);
/// How long a document fetched is used before it is fetched again.
pub const KEPT_FOR: Duration = Duration::from_secs(300);
/// The longest document URL taken, in bytes.
pub const MAX_URL_BYTES: usize = 512;

/// What the owner allows of the fetch.
#[derive(Debug, Clone, Default)]
pub struct DocumentPolicy {
    /// A CA (PEM) to trust instead of the system's roots (`--oauth-client-metadata-ca`).
    pub ca_pem: Option<Vec<u8>>,
    /// Whether documents may be fetched from loopback and private addresses
    /// (`--oauth-client-metadata-private`).
    pub private_addresses: bool,
}

/// The fetcher of documents.
#[derive(Debug)]
pub struct Documents {
    http: reqwest::Client,
    private_addresses: bool,
}

impl AuthServer {
    /// The client `client_id` names in `records`: registered, or described by the metadata
    /// document at it (fetched when not kept or kept too long, then kept in the book).
    ///
    /// # Errors
    /// Why there is no such client, in words for the approval page.
    pub(super) fn client_named(
        &self,
        records: &Records,
        client_id: &str,
    ) -> Result<Client, String> {
        let kept = records.client(client_id);
        if !is_document_url(client_id) {
            return kept.cloned().ok_or_else(|| {
                format!(
                    "The client {:?} is not registered with this server (or the owner removed it).",
                    common::clip(client_id, 60)
                )
            });
        }
        if let Some(kept) = kept.filter(|kept| !is_stale(kept)) {
            return Ok(kept.clone());
        }
        let unusable = |why: String| {
            format!(
                "The app's description at {:?} cannot be used: {why}.",
                common::clip(client_id, 120)
            )
        };
        let documents = self.documents.as_ref().ok_or_else(|| {
            unusable("this server cannot fetch descriptions (its log says why)".into())
        })?;
        let client = documents.fetch(client_id).map_err(unusable)?;
        tracing::info!(client = %client.name, id = %client.id, "fetched an OAuth client's metadata document");
        let kept = client.clone();
        self.book
            .change(move |records: &mut Records| {
                records.clients.retain(|other| other.id != kept.id);
                make_room(records, kept.registered_at)?;
                records.clients.push(kept);
                Ok::<_, OAuthError>((true, ()))
            })
            .map_err(|err| unusable(err.why))?;
        Ok(client)
    }
}

/// Whether a client kept in the book from a document is due to be fetched again.
pub fn is_stale(client: &Client) -> bool {
    secret::now().saturating_sub(client.registered_at) >= KEPT_FOR.as_secs()
}

impl Documents {
    /// A fetcher under `policy`.
    ///
    /// # Errors
    /// The CA given holds no certificate, or TLS cannot be set up.
    pub fn new(policy: &DocumentPolicy) -> Result<Self, String> {
        let tls = crate::network::zwave_js_server::tls_config(policy.ca_pem.as_deref())
            .map_err(|err| format!("--oauth-client-metadata-ca: {err}"))?;
        let http = reqwest::Client::builder()
            .use_preconfigured_tls(tls)
            .https_only(true)
            .redirect(reqwest::redirect::Policy::none())
            .timeout(FETCH_TIMEOUT)
            .no_proxy()
            .dns_resolver(Arc::new(PublicOnly {
                private_addresses: policy.private_addresses,
            }))
            .build()
            .map_err(|err| format!("the client for metadata documents: {err}"))?;
        Ok(Self {
            http,
            private_addresses: policy.private_addresses,
        })
    }

    /// The client the document at `url` describes, fetched now. Called from a blocking
    /// thread of the runtime (the authorization server's pages run on one).
    ///
    /// # Errors
    /// Why the document cannot be used, in words for the approval page.
    pub fn fetch(&self, url: &str) -> Result<Client, String> {
        checked_url(url)?;
        // The host as reqwest will read it (WHATWG URL parsing): `0x7f000001`, `127.1`,
        // `0177.0.0.1`, `%31…`, full-width digits and a trailing dot all become an address
        // here, which is connected to without any name resolution (found by the hostile
        // review: Rust's own parse took none of them, and the server fetched from loopback).
        let parsed =
            reqwest::Url::parse(url).map_err(|err| format!("its address is not a URL: {err}"))?;
        let host = parsed.host_str().ok_or("its address has no host")?;
        if let Ok(ip) = host.trim_start_matches('[').trim_end_matches(']').parse() {
            self.reachable(ip)?;
        }
        let document = tokio::runtime::Handle::current().block_on(self.get(parsed))?;
        let (name, redirect_uris) = described(&document).map_err(|err| err.why)?;
        if document.get("client_id").and_then(Value::as_str) != Some(url) {
            return Err("its client_id is not the address it is served at".into());
        }
        if document.contains_key("client_secret") {
            return Err(
                "it holds a client_secret: a document is public, so its client must be too".into(),
            );
        }
        Ok(Client {
            id: url.to_owned(),
            name,
            redirect_uris,
            registered_at: secret::now(),
        })
    }

    /// Whether `ip` may be fetched from.
    fn reachable(&self, ip: IpAddr) -> Result<(), String> {
        if self.private_addresses || is_public(ip) {
            Ok(())
        } else {
            Err(format!(
                "{ip} is a loopback, private or reserved address, which this server does not fetch from (the owner can allow it with --oauth-client-metadata-private)"
            ))
        }
    }

    /// The JSON object at `url`.
    async fn get(&self, url: reqwest::Url) -> Result<serde_json::Map<String, Value>, String> {
        let response = self
            .http
            .get(url)
            .header(reqwest::header::ACCEPT, "application/json")
            .send()
            .await
            .map_err(|err| format!("it could not be fetched: {}", fetch_error(&err)))?;
        let status = response.status();
        if status.is_redirection() {
            return Err(format!(
                "its address answered with a redirect (HTTP {}), which this server does not follow",
                status.as_u16()
            ));
        }
        if status != reqwest::StatusCode::OK {
            return Err(format!("its address answered HTTP {}", status.as_u16()));
        }
        if response
            .content_length()
            .is_some_and(|length| length > MAX_DOCUMENT_BYTES as u64)
        {
            return Err(format!("it is larger than {MAX_DOCUMENT_BYTES} bytes"));
        }
        let mut body = Vec::new();
        let mut chunks = response.bytes_stream();
        while let Some(chunk) = chunks.next().await {
            let chunk =
                chunk.map_err(|err| format!("it could not be read: {}", fetch_error(&err)))?;
            if body.len() + chunk.len() > MAX_DOCUMENT_BYTES {
                return Err(format!("it is larger than {MAX_DOCUMENT_BYTES} bytes"));
            }
            body.extend_from_slice(&chunk);
        }
        match serde_json::from_slice(&body) {
            Ok(Value::Object(document)) => Ok(document),
            _ => Err("it is not a JSON object".into()),
        }
    }
}

/// Whether `url` is fit to be fetched: `https`, a host and a path other than `/`, no user,
/// no fragment, no dot segment; its host as written.
fn checked_url(url: &str) -> Result<&str, String> {
    let rest = url
        .strip_prefix("https://")
        .ok_or("its address is not https")?;
    if url.len() > MAX_URL_BYTES {
        return Err(format!("its address is longer than {MAX_URL_BYTES} bytes"));
    }
    if url.chars().any(|c| c.is_control() || c.is_whitespace()) || url.contains(['#', '\\']) {
        return Err(
            "its address holds a space, a control character, a backslash or a fragment".into(),
        );
    }
    let (authority, path) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
    if authority.is_empty() || authority.contains('@') {
        return Err("its address has no host, or a user before it".into());
    }
    let path = path.split('?').next().unwrap_or_default();
    if path.is_empty() || path == "/" {
        return Err(
            "its address has no path (a document is served at a path, not at a site's root)".into(),
        );
    }
    if path
        .split('/')
        .any(|segment| segment == "." || segment == "..")
    {
        return Err("its address has a . or .. segment".into());
    }
    let host = match authority.strip_prefix('[') {
        Some(v6) => v6.split(']').next().unwrap_or_default(),
        None => authority.split(':').next().unwrap_or_default(),
    };
    Ok(host)
}

/// reqwest's error in a few words, without its URL (which the page shows already), with its
/// causes.
fn fetch_error(error: &reqwest::Error) -> String {
    let mut said = if error.is_timeout() {
        format!("no answer within {} s", FETCH_TIMEOUT.as_secs())
    } else if error.is_connect() {
        "no connection".to_owned()
    } else {
        "the request failed".to_owned()
    };
    let mut source = std::error::Error::source(error);
    while let Some(cause) = source {
        said.push_str(": ");
        said.push_str(&cause.to_string());
        source = cause.source();
    }
    said
}

/// Whether `ip` is an address on the public internet.
pub fn is_public(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => {
            let [a, b, ..] = v4.octets();
            !(v4.is_loopback()
                || v4.is_private()
                || v4.is_link_local()
                || v4.is_broadcast()
                || v4.is_documentation()
                || v4.is_unspecified()
                || v4.is_multicast()
                || a == 0
                || (a == 100 && (64..128).contains(&b))
                || (a == 192 && b == 0)
                || a >= 240)
        }
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => is_public(IpAddr::V4(v4)),
            None => {
                let first = v6.segments()[0];
                !(v6.is_loopback()
                    || v6.is_unspecified()
                    || v6.is_multicast()
                    || (first & 0xfe00) == 0xfc00
                    || (first & 0xffc0) == 0xfe80
                    || first == 0x2001 && v6.segments()[1] == 0x0db8)
            }
        },
    }
}

/// Name resolution that keeps only the addresses the owner lets documents come from: checked
/// when reqwest connects, so the address used is the address checked.
struct PublicOnly {
    private_addresses: bool,
}

impl reqwest::dns::Resolve for PublicOnly {
    fn resolve(&self, name: reqwest::dns::Name) -> reqwest::dns::Resolving {
        let private_addresses = self.private_addresses;
        Box::pin(async move {
            let host = name.as_str().to_owned();
            let found: Vec<SocketAddr> =
                tokio::net::lookup_host((host.as_str(), 0)).await?.collect();
            let kept: Vec<SocketAddr> = found
                .into_iter()
                .filter(|addr| private_addresses || is_public(addr.ip()))
                .collect();
            if kept.is_empty() {
                return Err(format!(
                    "{host} resolves to no public address (loopback, private and reserved ones are not fetched from; the owner can allow them with --oauth-client-metadata-private)"
                )
                .into());
            }
            Ok(Box::new(kept.into_iter()) as reqwest::dns::Addrs)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_public_addresses_are_public() {
        for private in [
            "127.0.0.1",
            "10.1.2.3",
            "172.16.0.1",
            "192.168.1.1",
            "169.254.169.254",
            "100.64.0.1",
            "0.0.0.0",
            "255.255.255.255",
            "::1",
            "fd00::1",
            "fe80::1",
            "::ffff:127.0.0.1",
            "::ffff:10.0.0.1",
        ] {
            assert!(!is_public(private.parse().unwrap()), "{private}");
        }
        for public in ["1.1.1.1", "160.79.104.10", "2606:4700::1111"] {
            assert!(is_public(public.parse().unwrap()), "{public}");
        }
    }

    #[test]
    fn a_document_url_is_https_with_a_path() {
        assert_eq!(
            checked_url("https://claude.ai/oauth/client.json"),
            Ok("claude.ai")
        );
        assert_eq!(checked_url("https://[::1]:8443/c.json"), Ok("::1"));
        for (url, why) in [
            ("http://claude.ai/c.json", "not https"),
            ("https://claude.ai", "no path"),
            ("https://claude.ai/", "no path"),
            ("https://user@claude.ai/c.json", "a user"),
            ("https://claude.ai/a/../c.json", ". or .."),
            ("https://claude.ai/c.json#x", "fragment"),
            ("https://evil.example\\.claude.ai/c.json", "backslash"),
        ] {
            let refused = checked_url(url).unwrap_err();
            assert!(refused.contains(why), "{url}: {refused}");
        }
    }
}
