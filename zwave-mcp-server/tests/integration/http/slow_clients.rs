//! Slow clients: connections that trickle their headers a byte at a time, or send half of them
//! and then nothing, hold no one up (another client's calls complete while they are open),
//! and are dropped once `HEADER_TIMEOUT` (10 s) passed without whole headers, so even a flood
//! that takes every connection place only delays others until then.

use std::time::Duration;

use serde_json::json;
use tokio::{io::AsyncWriteExt as _, net::tcp::OwnedReadHalf, time::Instant};

use crate::harness::{HttpServer, Mcp, Raw, TOKEN, TokenFile, serve_demo};

/// What a slow client sends before it slows down: a request line and half its headers.
const HALF_A_HEAD: &[u8] = b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ";

/// Whether the server has not closed `connection` (nothing to read, and no end).
fn is_open(connection: &OwnedReadHalf) -> bool {
    let mut byte = [0; 1];
    matches!(
        connection.try_read(&mut byte),
        Err(err) if err.kind() == std::io::ErrorKind::WouldBlock
    )
}

/// A session opened and `calls` status reads answered in it; how long that took.
async fn normal_client(server: &HttpServer, calls: u64) -> Duration {
    let started = Instant::now();
    let client = Mcp::new(&server.url, Some(TOKEN));
    let session = client.open(json!({})).await;
    for id in 0..calls {
        let reply = client
            .call(
                &session,
                id + 2,
                "get_device_status",
                json!({"deviceName": "Switch One"}),
            )
            .await;
        let (error, text) = reply.tool_text();
        assert!(!error, "{text}");
    }
    started.elapsed()
}

/// Waits for the server to close each of `connections`, at most `within` from `since`; how
/// long the last took.
async fn all_closed(connections: Vec<OwnedReadHalf>, since: Instant, within: Duration) -> Duration {
    let mut last = Duration::ZERO;
    for mut connection in connections {
        let mut sink = Vec::new();
        let ended = tokio::time::timeout_at(
            since + within,
            tokio::io::AsyncReadExt::read_to_end(&mut connection, &mut sink),
        )
        .await;
        assert!(ended.is_ok(), "a slow connection still open {within:?} on");
        last = last.max(since.elapsed());
    }
    last
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn slow_headers_hold_no_one_up_and_are_dropped_after_the_header_timeout() {
    let token = TokenFile::new(TOKEN);
    let server = serve_demo(&["--http-token-file", &token.path()]).await;
    let opened = Instant::now();
    let mut readers = Vec::new();
    let mut trickled = Vec::new();
    // Kept open, never written again (dropping a write half would end the request).
    let mut silent = Vec::new();
    for i in 0..100 {
        let mut connection = Raw::connect(server.addr).await;
        connection.send(HALF_A_HEAD).await.unwrap();
        let (read, write) = connection.split();
        readers.push(read);
        // Half trickle a byte at a time; half send nothing more.
        if i % 2 == 0 {
            trickled.push(write);
        } else {
            silent.push(write);
        }
    }
    // One byte to each trickling connection every 100 ms, for at most 30 s: pacing, not
    // ordering; a write the server refuses ends that connection's trickle.
    let trickle = tokio::spawn(async move {
        let mut tick = tokio::time::interval(Duration::from_millis(100));
        let stop = Instant::now() + Duration::from_secs(30);
        while Instant::now() < stop && !trickled.is_empty() {
            tick.tick().await;
            let mut open = Vec::new();
            for mut write in trickled {
                if write.write_all(b"a").await.is_ok() {
                    open.push(write);
                }
            }
            trickled = open;
        }
    });

    let took = normal_client(&server, 20).await;
    let still_open = readers.iter().filter(|read| is_open(read)).count();
    assert_eq!(
        still_open, 100,
        "the normal client's 20 calls ({took:?}) completed while every slow client was open"
    );
    let dropped_after = all_closed(readers, opened, Duration::from_secs(30)).await;
    eprintln!(
        "20 status calls beside 100 slow clients: {took:?}; slow ones dropped by {dropped_after:?}"
    );
    trickle.abort();
    drop(silent);
    // And the server serves on.
    normal_client(&server, 1).await;
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_flood_of_silent_connections_delays_others_only_until_the_header_timeout() {
    let token = TokenFile::new(TOKEN);
    let server = serve_demo(&["--http-token-file", &token.path()]).await;
    let opened = Instant::now();
    // More than the 512 connections served at once: the rest wait in the backlog.
    let mut flood = Vec::new();
    for _ in 0..530 {
        flood.push(Raw::connect(server.addr).await.split());
    }
    let took = normal_client(&server, 1).await;
    // Served once the flood's first connections were dropped, 10 s after they opened.
    assert!(
        took < Duration::from_secs(25),
        "a client behind a flood waited {took:?}"
    );
    eprintln!(
        "a session and a status call behind 530 silent connections: {took:?} (flood opened {:?} before)",
        opened.elapsed() - took
    );
    drop(flood);
    server.stop().await;
}
