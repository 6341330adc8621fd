//! Request bodies: at most 1 MiB is read. A larger one is refused with 413 before rmcp parses
//! anything, whether its size is declared (`Content-Length`, refused on the header alone) or
//! not (chunked, refused once the byte over 1 MiB arrived); the server goes on answering.

use std::time::Duration;

use serde_json::json;
use tokio::io::{AsyncWriteExt as _, BufReader};

use crate::harness::{
    HttpServer, Mcp, Raw, TOKEN, TokenFile, initialize, read_reply, said, serve_demo,
};

const MAX: usize = 1024 * 1024;
const TOO_LARGE: &str = "a request's body may hold at most 1048576 bytes: nothing was done";

/// The head of a POST to /mcp with the token and `framing` (a length or chunked).
fn head(framing: &str) -> String {
    format!(
        "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: application/json, text/event-stream\r\n\
         Content-Type: application/json\r\nAuthorization: Bearer {TOKEN}\r\n{framing}\r\n\r\n"
    )
}

/// `initialize`, padded with spaces (valid JSON still) to `size` bytes.
fn initialize_of(size: usize) -> String {
    let mut body = initialize(json!({})).to_string();
    body.push_str(&" ".repeat(size - body.len()));
    body
}

/// Whether the server still serves a whole session: a status read answered.
async fn still_serves(server: &HttpServer) {
    let client = Mcp::new(&server.url, Some(TOKEN));
    let session = client.open(json!({})).await;
    let reply = client
        .call(
            &session,
            2,
            "get_device_status",
            json!({"deviceName": "Switch One"}),
        )
        .await;
    let (error, text) = reply.tool_text();
    assert!(!error, "{text}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_declared_body_over_1_mib_is_refused_on_its_header() {
    let token = TokenFile::new(TOKEN);
    let server = serve_demo(&["--http-token-file", &token.path()]).await;
    let mut connection = Raw::connect(server.addr).await;
    // Not a byte of the body is sent: the answer comes from the header alone.
    let five_mib = format!("Content-Length: {}", 5 * 1024 * 1024);
    connection.send(head(&five_mib).as_bytes()).await.unwrap();
    let reply = connection.reply().await;
    assert_eq!((reply.status, said(&reply.body).as_str()), (413, TOO_LARGE));
    // The bound is exact: 1 MiB is read and served; a declared byte more is not.
    let body = initialize_of(MAX);
    let mut request = head(&format!("Content-Length: {MAX}")).into_bytes();
    request.extend_from_slice(body.as_bytes());
    let (read, mut write) = Raw::connect(server.addr).await.split();
    // The write half is kept open until the answer is read: a client that shuts it down
    // while waiting is taken to have left (hyper's default, no half-close).
    let writer = tokio::spawn(async move { write.write_all(&request).await.map(|()| write) });
    let reply = tokio::time::timeout(
        Duration::from_secs(20),
        read_reply(&mut BufReader::new(read)),
    )
    .await
    .unwrap();
    assert_eq!(reply.status, 200, "{reply:?}");
    let _open_until_answered = writer.await.unwrap().unwrap();
    let mut connection = Raw::connect(server.addr).await;
    let one_more = format!("Content-Length: {}", MAX + 1);
    connection.send(head(&one_more).as_bytes()).await.unwrap();
    let reply = connection.reply().await;
    assert_eq!((reply.status, said(&reply.body).as_str()), (413, TOO_LARGE));
    still_serves(&server).await;
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_chunked_body_over_1_mib_is_refused_once_the_byte_over_arrived() {
    let token = TokenFile::new(TOKEN);
    let server = serve_demo(&["--http-token-file", &token.path()]).await;
    let (read, mut write) = Raw::connect(server.addr).await.split();
    // 1 MiB in 64 KiB chunks, then one byte more, no length declared, no end: the answer
    // comes once the byte over arrived. (What a client sends past it is not read; hyper then
    // resets the connection, which may beat the answer: hence nothing more is sent.)
    let writer = tokio::spawn(async move {
        write
            .write_all(head("Transfer-Encoding: chunked").as_bytes())
            .await?;
        let chunk = format!("10000\r\n{}\r\n", " ".repeat(0x10000));
        for _ in 0..MAX / 0x10000 {
            write.write_all(chunk.as_bytes()).await?;
        }
        write.write_all(b"1\r\n \r\n").await?;
        Ok::<_, std::io::Error>(write)
    });
    let reply = tokio::time::timeout(
        Duration::from_secs(20),
        read_reply(&mut BufReader::new(read)),
    )
    .await
    .unwrap();
    assert_eq!((reply.status, said(&reply.body).as_str()), (413, TOO_LARGE));
    let _open_until_answered = writer.await.unwrap().unwrap();
    still_serves(&server).await;
    server.stop().await;
}
