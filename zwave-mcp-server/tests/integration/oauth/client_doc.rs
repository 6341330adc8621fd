//! Clients described by a Client ID Metadata Document (their `client_id` is an `https://`
//! URL, as Claude's and ChatGPT's connectors sign in): the server fetches the document,
//! within bounds, and never from a loopback or private address unless the owner allows it.
//! The documents are served here over HTTPS by a test CA the server is told to trust.

use std::{
    collections::HashMap,
    sync::{
        Arc,
        atomic::{AtomicUsize, Ordering},
    },
};

use serde_json::json;
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};

use super::REDIRECT;
use crate::harness::{Mcp, OAuthHome, Owner, TOKEN, TokenFile};

/// What the document server answers a path with: status line, extra headers, body.
pub(super) type Answers = HashMap<String, (String, String, String)>;

/// An HTTPS server on 127.0.0.1 answering `answers` (404 for any other path); its origin
/// (`https://127.0.0.1:PORT`), the CA that signed its certificate, and how many connections
/// it was sent.
pub(super) async fn document_server(
    answers: impl FnOnce(&str) -> Answers,
) -> (
    String,
    std::path::PathBuf,
    Arc<AtomicUsize>,
    test_support::mosquitto::ScratchDir,
) {
    let (acceptor, files, dir) = crate::harness::tls_acceptor("doc");
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let origin = format!(
        "https://127.0.0.1:{}",
        listener.local_addr().unwrap().port()
    );
    let answers = Arc::new(answers(&origin));
    let hits = Arc::new(AtomicUsize::new(0));
    let counted = Arc::clone(&hits);
    tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            // Every connection counts, whether or not its TLS handshake goes through.
            counted.fetch_add(1, Ordering::SeqCst);
            let (acceptor, answers) = (acceptor.clone(), Arc::clone(&answers));
            tokio::spawn(async move {
                let Ok(mut stream) = acceptor.accept(stream).await else {
                    return;
                };
                let mut head = vec![0; 4096];
                let read = stream.read(&mut head).await.unwrap_or(0);
                let head = String::from_utf8_lossy(&head[..read]);
                let path = head.split(' ').nth(1).unwrap_or_default();
                let (status, headers, body) = answers
                    .get(path)
                    .cloned()
                    .unwrap_or_else(|| ("404 Not Found".into(), String::new(), "no".into()));
                let answer = format!(
                    "HTTP/1.1 {status}\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n{headers}\r\n{body}",
                    body.len()
                );
                let _ = stream.write_all(answer.as_bytes()).await;
                let _ = stream.shutdown().await;
            });
        }
    });
    (origin, files.ca, hits, dir)
}

/// A document for `id`: `extra` merged in.
pub(super) fn document(id: &str, extra: serde_json::Value) -> String {
    let mut document = json!({
        "client_id": id,
        "client_name": "Doc App",
        "redirect_uris": [REDIRECT],
        "token_endpoint_auth_method": "none",
    });
    for (key, value) in extra.as_object().unwrap() {
        document[key] = value.clone();
    }
    document.to_string()
}

/// A home whose server trusts `ca` for documents, with `flags` too.
pub(super) async fn home_trusting(ca: &std::path::Path, flags: &[&str]) -> OAuthHome {
    let key = TokenFile::new(TOKEN);
    let state = key.dir().join("state");
    let ca = ca.to_str().unwrap();
    let flags: Vec<&str> = ["--oauth-client-metadata-ca", ca]
        .into_iter()
        .chain(flags.iter().copied())
        .collect();
    OAuthHome::start_with(key, &state, &flags).await
}

#[tokio::test]
async fn a_client_described_by_its_document_signs_in() {
    let (origin, ca, hits, _dir) = document_server(|origin| {
        let id = format!("{origin}/oauth/client.json");
        HashMap::from([(
            "/oauth/client.json".to_owned(),
            ("200 OK".into(), String::new(), document(&id, json!({}))),
        )])
    })
    .await;
    let home = home_trusting(&ca, &["--oauth-client-metadata-private"]).await;
    let owner = Owner::new(&home.issuer);
    let metadata = owner
        .get("/.well-known/oauth-authorization-server")
        .await
        .json();
    assert_eq!(metadata["client_id_metadata_document_supported"], true);

    let client = format!("{origin}/oauth/client.json");
    let page = owner
        .page(&Owner::authorize_query(&client, REDIRECT, "read"))
        .await;
    assert_eq!(page.status, 200, "{}", page.body);
    assert!(
        page.body.contains("<strong>Doc App</strong>"),
        "{}",
        page.body
    );
    let host = origin.trim_start_matches("https://");
    assert!(
        page.body
            .contains(&format!("fetched from <strong>{host}</strong> over https")),
        "{}",
        page.body
    );
    let answer = owner
        .decide(&Owner::form_of(&page), "approve", TOKEN, &["read"])
        .await;
    assert_eq!(answer.status, 303, "{answer:?}");
    let code = answer.location_param("code").unwrap();
    let tokens = owner.exchange(&client, &code, REDIRECT).await;
    let agent = Mcp::new(&home.server.url, tokens["access_token"].as_str());
    assert_eq!(agent.initialize(json!({})).await.status, 200);
    // Fetched once: the approval's second look used the copy kept.
    assert_eq!(hits.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn a_document_that_cannot_be_used_is_refused_saying_why() {
    let (origin, ca, _hits, _dir) = document_server(|origin| {
        let at = |path: &str| format!("{origin}{path}");
        let ok = |path: &str, extra| {
            (
                "200 OK".to_owned(),
                String::new(),
                document(&at(path), extra),
            )
        };
        HashMap::from([
            ("/other.json".to_owned(), ok("/not-this.json", json!({}))),
            (
                "/big.json".to_owned(),
                ok("/big.json", json!({"logo": "x".repeat(6000)})),
            ),
            (
                "/moved.json".to_owned(),
                (
                    "302 Found".into(),
                    "location: /elsewhere.json\r\n".into(),
                    String::new(),
                ),
            ),
            (
                "/secret.json".to_owned(),
                ok("/secret.json", json!({"client_secret": "s"})),
            ),
            (
                "/confidential.json".to_owned(),
                ok(
                    "/confidential.json",
                    json!({"token_endpoint_auth_method": "client_secret_basic"}),
                ),
            ),
            (
                "/text.json".to_owned(),
                ("200 OK".into(), String::new(), "[1, 2]".into()),
            ),
            ("/good.json".to_owned(), ok("/good.json", json!({}))),
        ])
    })
    .await;
    let home = home_trusting(&ca, &["--oauth-client-metadata-private"]).await;
    let owner = Owner::new(&home.issuer);
    for (path, redirect, why) in [
        (
            "/other.json",
            REDIRECT,
            "its client_id is not the address it is served at",
        ),
        ("/big.json", REDIRECT, "it is larger than 5120 bytes"),
        (
            "/moved.json",
            REDIRECT,
            "answered with a redirect (HTTP 302), which this server does not follow",
        ),
        ("/missing.json", REDIRECT, "its address answered HTTP 404"),
        ("/secret.json", REDIRECT, "it holds a client_secret"),
        (
            "/confidential.json",
            REDIRECT,
            "this server registers public clients only",
        ),
        ("/text.json", REDIRECT, "it is not a JSON object"),
        (
            "/good.json",
            "http://127.0.0.1:45999/elsewhere",
            "is not one the client registered",
        ),
        ("/", REDIRECT, "its address has no path"),
    ] {
        let client = format!("{origin}{path}");
        let page = owner
            .page(&Owner::authorize_query(&client, redirect, "read"))
            .await;
        assert_eq!(page.status, 400, "{path}: {}", page.body);
        assert!(page.body.contains(why), "{path}: {}", page.body);
    }
}

/// Found by reasoning about CIMD: a client could name a document on the home's own network
/// (the router's page, the Z-Wave JS UI) and make this server fetch it. Without the owner's
/// leave, no loopback or private address is fetched from, by address or by a name that
/// resolves to one.
#[tokio::test]
async fn a_document_on_a_private_address_is_not_fetched() {
    let (origin, ca, hits, _dir) = document_server(|origin| {
        let id = format!("{origin}/client.json");
        HashMap::from([(
            "/client.json".to_owned(),
            ("200 OK".into(), String::new(), document(&id, json!({}))),
        )])
    })
    .await;
    let home = home_trusting(&ca, &[]).await;
    let owner = Owner::new(&home.issuer);
    let by_name = origin.replace("127.0.0.1", "localhost");
    let loopback = "127.0.0.1 is a loopback, private or reserved address, which this server does not fetch from (the owner can allow it with --oauth-client-metadata-private)";
    // Found by the hostile review: forms of the address that Rust's own parsing does not take
    // but the URL standard (and so reqwest) reads as 127.0.0.1 were connected to.
    let written = |host: &str| format!("{}/client.json", origin.replace("127.0.0.1", host));
    for (client, why) in [
        (format!("{origin}/client.json"), loopback),
        (written("0x7f000001"), loopback),
        (written("2130706433"), loopback),
        (written("127.1"), loopback),
        (written("0177.0.0.1"), loopback),
        (written("127.0.0.1."), loopback),
        (written("%31%32%37.0.0.1"), loopback),
        (written("１２７.０.０.１"), loopback),
        (
            format!("{by_name}/client.json"),
            "localhost resolves to no public address",
        ),
    ] {
        let page = owner
            .page(&Owner::authorize_query(&client, REDIRECT, "read"))
            .await;
        assert_eq!(page.status, 400, "{client}: {}", page.body);
        assert!(page.body.contains(why), "{client}: {}", page.body);
    }
    assert_eq!(
        hits.load(Ordering::SeqCst),
        0,
        "a private address was fetched from"
    );
}
