//! The official MCP conformance suite's authorization-server scenarios
//! (`conformance authorization`) judge this server's authorization server: its metadata, and
//! the authorization code grant with PKCE, the owner approving on the page as a person would
//! (the suite prints the address to open and waits for its loopback callback).

use std::{
    io::{BufRead as _, BufReader},
    process::Stdio,
};

use test_support::peers::conformance_suite;

use crate::harness::{OAuthHome, Owner, TOKEN, free_port};

#[tokio::test]
async fn the_official_suite_passes_the_authorization_server() {
    let home = OAuthHome::start().await;
    let owner = Owner::new(&home.issuer);
    let port = free_port();
    let client = owner
        .register("conformance", &format!("http://127.0.0.1:{port}/callback"))
        .await;
    let mut suite = conformance_suite();
    suite
        .args([
            "authorization",
            "--url",
            &home.issuer,
            "--client-id",
            &client,
        ])
        .args(["--port", &port.to_string()])
        .args(["--resource", &format!("{}/mcp", home.issuer)])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = suite.spawn().expect("the conformance suite starts");
    let stdout = child.stdout.take().unwrap();
    let (lines, seen) = std::sync::mpsc::channel::<String>();
    let reader = std::thread::spawn(move || {
        let mut all = String::new();
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            all.push_str(&line);
            all.push('\n');
            let _ = lines.send(line);
        }
        all
    });
    // The address the suite asks a person to open.
    let start = format!("{}/oauth/authorize?", home.issuer);
    let address = tokio::task::spawn_blocking(move || {
        seen.iter()
            .find(|line| line.starts_with(&start))
            .unwrap_or_else(|| panic!("the suite printed no authorization address"))
    })
    .await
    .unwrap();
    let query = address.split_once('?').unwrap().1;
    let page = owner.page(query).await;
    let answer = owner
        .decide(&Owner::form_of(&page), "approve", TOKEN, &["read"])
        .await;
    assert_eq!(answer.status, 303, "{answer:?}");
    // The browser follows the redirect to the suite's callback.
    let callback = reqwest::Client::builder().no_proxy().build().unwrap();
    callback
        .get(answer.header("location"))
        .send()
        .await
        .expect("the suite's callback answers");
    // Its stdout closes when it exits (it waits 5 minutes for the callback at most).
    let (stdout, status) = tokio::task::spawn_blocking(move || {
        let stdout = reader.join().unwrap();
        (stdout, child.wait().unwrap())
    })
    .await
    .unwrap();
    assert!(status.success(), "the suite failed ({status}):\n{stdout}");
    // The metadata scenario checks client_id_metadata_document_supported too, now true.
    assert!(stdout.contains("Total: 3 passed, 0 failed"), "{stdout}");
}
