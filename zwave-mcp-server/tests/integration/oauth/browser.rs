//! The owner's pages in a real browser: Debian's Chromium, headless, driven through
//! ChromeDriver. The owner approves one client with the scopes they choose, denies another,
//! signs in to the page of grants and revokes the first, whose token then stops; the pages
//! fit a phone's screen. Screenshots go to `target/browser/` (the README's are taken from
//! there).

use std::path::PathBuf;

use fantoccini::{Client, ClientBuilder, Locator};
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};

use crate::harness::{Mcp, OAuthHome, Owner, TOKEN};

/// A client's callback page on loopback: answers every request with a page saying where the
/// browser came back to.
async fn callback_server() -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        while let Ok((mut stream, _)) = listener.accept().await {
            let mut request = vec![0; 8192];
            let read = stream.read(&mut request).await.unwrap_or(0);
            let line = String::from_utf8_lossy(&request[..read])
                .lines()
                .next()
                .unwrap_or_default()
                .to_owned();
            let body = format!(
                "<!doctype html><title>back</title><h1 id=\"callback\">Back at the app</h1><p>{}</p>",
                line.replace('<', "&lt;")
            );
            let answer = format!(
                "HTTP/1.1 200 OK\r\ncontent-type: text/html\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                body.len()
            );
            let _ = stream.write_all(answer.as_bytes()).await;
        }
    });
    format!("http://127.0.0.1:{}/callback", addr.port())
}

/// A headless Chromium of `width`×`height` CSS pixels under `driver`.
async fn browser(driver: &test_support::browser::ChromeDriver, width: u32, height: u32) -> Client {
    let mut capabilities = serde_json::Map::new();
    capabilities.insert(
        "goog:chromeOptions".into(),
        json!({"binary": driver.chromium(), "args": driver.chromium_args(width, height)}),
    );
    ClientBuilder::new(hyper_util::client::legacy::connect::HttpConnector::new())
        .capabilities(capabilities)
        .connect(&driver.url)
        .await
        .unwrap_or_else(|err| panic!("Chromium did not start under ChromeDriver: {err}"))
}

/// Saves what the browser shows as `target/browser/NAME.png`.
async fn screenshot(browser: &Client, name: &str) {
    let png = browser.screenshot().await.unwrap();
    let dir: PathBuf = test_support::target_dir().join("browser");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join(format!("{name}.png")), png).unwrap();
}

/// Asserts that the page is no wider than the browser's window (it does not scroll sideways).
async fn fits_the_screen(browser: &Client) {
    let width: Value = browser
        .execute(
            "return [document.documentElement.scrollWidth, window.innerWidth];",
            vec![],
        )
        .await
        .unwrap();
    assert!(
        width[0].as_f64() <= width[1].as_f64(),
        "the page is wider than the screen: {width}: {}",
        browser.current_url().await.unwrap()
    );
}

/// The browser signs in to the page of grants with the owner's key.
async fn sign_in_to_grants(browser: &Client, home: &OAuthHome) {
    browser
        .goto(&format!("{}/oauth/grants", home.issuer))
        .await
        .unwrap();
    browser
        .find(Locator::Css("input[name='owner_key']"))
        .await
        .unwrap()
        .send_keys(TOKEN)
        .await
        .unwrap();
    browser
        .find(Locator::Css("form[action='/oauth/grants/sign-in'] button"))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
}

/// The query value `name` of `url`.
fn param(url: &str, name: &str) -> Option<String> {
    let query = url.split_once('?')?.1;
    form_urlencoded::parse(query.as_bytes())
        .find(|(key, _)| key == name)
        .map(|(_, value)| value.into_owned())
}

/// The names of the tools `token` lists.
async fn tools_of(home: &OAuthHome, token: &str) -> Vec<String> {
    let agent = Mcp::new(&home.server.url, Some(token));
    let session = agent.open(json!({})).await;
    agent.tool_names(&session).await
}

/// The browser at the approval page for `client`, asking `scope`, answers `decision`
/// with the owner's key, leaving `sensitive` unchecked: the URL it came back to.
async fn answer_in_browser(
    browser: &Client,
    home: &OAuthHome,
    client: &str,
    redirect: &str,
    decision: &str,
    shot: Option<&str>,
) -> String {
    let query = Owner::authorize_query(client, redirect, "read control sensitive");
    browser
        .goto(&format!("{}/oauth/authorize?{query}", home.issuer))
        .await
        .unwrap();
    let sensitive = browser
        .find(Locator::Css("input[name='scope.sensitive']"))
        .await
        .unwrap();
    // Asked for, so offered checked: the owner takes it away.
    assert!(sensitive.is_selected().await.unwrap());
    sensitive.click().await.unwrap();
    browser
        .find(Locator::Css("input[name='owner_key']"))
        .await
        .unwrap()
        .send_keys(TOKEN)
        .await
        .unwrap();
    if let Some(name) = shot {
        screenshot(browser, name).await;
    }
    browser
        .find(Locator::Css(&format!(
            "button[name='decision'][value='{decision}']"
        )))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
    if let Err(err) = browser.wait().for_element(Locator::Css("#callback")).await {
        panic!(
            "the browser did not come back to the app ({err}): at {}\n{}",
            browser.current_url().await.unwrap(),
            browser.source().await.unwrap()
        );
    }
    browser.current_url().await.unwrap().to_string()
}

#[tokio::test]
async fn the_owner_approves_denies_and_revokes_in_a_real_browser() {
    let home = OAuthHome::start().await;
    let owner = Owner::new(&home.issuer);
    let redirect = callback_server().await;
    let driver = test_support::browser::chromedriver();
    let browser = browser(&driver, 1000, 900).await;

    // Approved with the scopes the owner chose: read and control, not sensitive.
    let tablet = owner.register("Kitchen Tablet", &redirect).await;
    let back = answer_in_browser(
        &browser,
        &home,
        &tablet,
        &redirect,
        "approve",
        Some("consent"),
    )
    .await;
    assert!(back.starts_with(&redirect), "{back}");
    assert_eq!(param(&back, "state").as_deref(), Some("st-1"));
    assert_eq!(param(&back, "iss").as_deref(), Some(home.issuer.as_str()));
    let code = param(&back, "code").unwrap_or_else(|| panic!("no code in {back}"));
    let tokens = owner.exchange(&tablet, &code, &redirect).await;
    assert_eq!(tokens["scope"], "read control");
    let access = tokens["access_token"].as_str().unwrap().to_owned();
    let tools = tools_of(&home, &access).await;
    assert!(
        tools.iter().any(|name| name == "control_zwave_device"),
        "{tools:?}"
    );

    // Denied: the app hears `access_denied`, and gets no code.
    let stranger = owner.register("Unknown Gadget", &redirect).await;
    let back = answer_in_browser(&browser, &home, &stranger, &redirect, "deny", None).await;
    assert_eq!(
        param(&back, "error").as_deref(),
        Some("access_denied"),
        "{back}"
    );
    assert_eq!(param(&back, "code"), None, "{back}");

    // The page of grants: signed in with the owner's key, the tablet listed, then revoked.
    sign_in_to_grants(&browser, &home).await;
    let row = browser
        .wait()
        .for_element(Locator::XPath("//tr[td[contains(., 'Kitchen Tablet')]]"))
        .await
        .unwrap();
    let shown = row.text().await.unwrap();
    assert!(shown.contains("read control"), "{shown}");
    let page = browser.source().await.unwrap();
    let (granted, actions) = page.split_once("Recent actions").unwrap();
    assert!(
        !granted.contains("Unknown Gadget"),
        "a denied client is not granted: {page}"
    );
    assert!(
        actions.contains("the client \"Unknown Gadget\" asked to sign in"),
        "{page}"
    );
    fits_the_screen(&browser).await;
    screenshot(&browser, "grants").await;
    row.find(Locator::Css("button"))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
    browser
        .wait()
        .for_element(Locator::XPath("//*[contains(., 'revoked')]"))
        .await
        .unwrap();
    let page = browser.source().await.unwrap();
    let granted = page.split("Recent actions").next().unwrap();
    assert!(
        !granted.contains("Kitchen Tablet"),
        "the revoked grant is still listed: {page}"
    );
    let refused = Mcp::new(&home.server.url, Some(&access))
        .send(Mcp::new(&home.server.url, Some(&access)).post(
            None,
            &json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": crate::harness::initialize(json!({}))["params"]}),
        ))
        .await;
    assert_eq!(refused.status, 401, "{refused:?}");
    browser.close().await.unwrap();
}

/// On a phone's screen (390×844 CSS pixels) the approval page's buttons are within the
/// screen's width, and neither it nor the page of grants scrolls sideways.
#[tokio::test]
async fn the_approval_page_fits_a_phone() {
    let home = OAuthHome::start().await;
    let owner = Owner::new(&home.issuer);
    let redirect = callback_server().await;
    let driver = test_support::browser::chromedriver();
    let browser = browser(&driver, 390, 844).await;
    let client = owner.register("Phone App", &redirect).await;
    let query = Owner::authorize_query(&client, &redirect, "read");
    browser
        .goto(&format!("{}/oauth/authorize?{query}", home.issuer))
        .await
        .unwrap();
    fits_the_screen(&browser).await;
    for decision in ["approve", "deny"] {
        let button = browser
            .find(Locator::Css(&format!(
                "button[name='decision'][value='{decision}']"
            )))
            .await
            .unwrap();
        let (x, _, w, _) = button.rectangle().await.unwrap();
        assert!(x >= 0.0 && x + w <= 390.0, "{decision}: {x} + {w}");
    }
    screenshot(&browser, "consent-phone").await;
    // The page of grants, with a grant and its audit lines, too.
    let form = Owner::form_of(&owner.page(&query).await);
    let answer = owner.decide(&form, "approve", TOKEN, &["read"]).await;
    assert_eq!(answer.status, 303, "{answer:?}");
    sign_in_to_grants(&browser, &home).await;
    browser
        .wait()
        .for_element(Locator::XPath("//tr[td[contains(., 'Phone App')]]"))
        .await
        .unwrap();
    fits_the_screen(&browser).await;
    screenshot(&browser, "grants-phone").await;
    browser.close().await.unwrap();
}
