//! Requests whose head can be read two ways, refused with 400 before anything reads them
//! (RFC 9112): two `Host` headers, two `Origin` headers, an absolute-form target naming another
//! host than `Host`, `Transfer-Encoding` beside `Content-Length` (found below hyper, which
//! drops the length); and a DELETE of a session that is not open, 404 as MCP says. Found by
//! the third hostile review: each was 200 (the DELETE 204), through the binary.

use crate::harness::{Raw, said, serve_demo};

/// An `initialize`, valid whichever way its head is read.
const BODY: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#;

/// A request of `target` with `headers` (each a whole line) and [`BODY`].
fn request(target: &str, headers: &[&str]) -> Vec<u8> {
    let mut head = format!(
        "POST {target} HTTP/1.1\r\nAccept: application/json, text/event-stream\r\nContent-Type: application/json\r\nMcp-Protocol-Version: 2025-11-25\r\n"
    );
    for header in headers {
        head.push_str(header);
        head.push_str("\r\n");
    }
    head.push_str("\r\n");
    let mut bytes = head.into_bytes();
    bytes.extend_from_slice(BODY.as_bytes());
    bytes
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn heads_read_two_ways_get_400_and_an_unknown_session_404() {
    let server = serve_demo(&[]).await;
    let host = format!("Host: {}", server.addr);
    let length = format!("Content-Length: {}", BODY.len());
    let cases = [
        (
            request("/mcp", &[&host, "Host: evil.example", &length]),
            "the request has 2 Host headers; HTTP/1.1 allows exactly one (RFC 9112 §3.2): nothing was done".to_owned(),
        ),
        (
            request(
                "/mcp",
                &[&host, &format!("Origin: http://{}", server.addr), "Origin: https://evil.example", &length],
            ),
            "the request has 2 Origin headers; a request comes from one origin (RFC 6454 §7): nothing was done".to_owned(),
        ),
        (
            {
                // The body chunked, as hyper reads it; the length a proxy might read instead.
                let mut bytes = request("/mcp", &[&host, "Transfer-Encoding: chunked", &length]);
                let at = bytes.len() - BODY.len();
                bytes.truncate(at);
                bytes.extend_from_slice(format!("{:x}\r\n{BODY}\r\n0\r\n\r\n", BODY.len()).as_bytes());
                bytes
            },
            "the request has both Transfer-Encoding and Content-Length, so its body can be read two ways (RFC 9112 §6.1): nothing was done".to_owned(),
        ),
        (
            request("http://evil.example/mcp", &[&host, &length]),
            format!("the request's target names the host \"evil.example\" but its Host header says \"{}\"; they must be the same (RFC 9112 §3.2.2): nothing was done", server.addr),
        ),
    ];
    for (bytes, words) in cases {
        let mut connection = Raw::connect(server.addr).await;
        connection.send(&bytes).await.unwrap();
        let reply = connection.reply().await;
        assert_eq!((reply.status, said(&reply.body)), (400, words), "{reply:?}");
    }
    // The same request read one way is served.
    let mut connection = Raw::connect(server.addr).await;
    connection
        .send(&request(
            &format!("http://{}/mcp", server.addr),
            &[&host, &length],
        ))
        .await
        .unwrap();
    let reply = connection.reply().await;
    assert_eq!(reply.status, 200, "{reply:?}");
    let mut connection = Raw::connect(server.addr).await;
    let delete = format!(
        "DELETE /mcp HTTP/1.1\r\n{host}\r\nMcp-Protocol-Version: 2025-11-25\r\nMcp-Session-Id: no-such-session\r\n\r\n"
    );
    connection.send(delete.as_bytes()).await.unwrap();
    let reply = connection.reply().await;
    assert_eq!(
        (reply.status, said(&reply.body)),
        (404, "no MCP session \"no-such-session\" is open here (it ended, expired, or was never opened): nothing was ended".to_owned()),
        "{reply:?}"
    );
    server.stop().await;
}
