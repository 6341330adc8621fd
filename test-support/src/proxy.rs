//! A loopback HTTP/1.1 proxy that adds one header to every request: for peers that cannot be
//! told to send one (the official conformance suite has no header option), in front of a
//! server that needs it (a bearer token).
//!
//! Each connection carries one request: the proxy asks for `Connection: close`, so a
//! client's next request comes on a new connection and gets the header too. A `Host` naming
//! the proxy is rewritten to the upstream's (any other is passed on as it is, so that a check
//! of `Host` still sees what the client sent).
#![allow(
    clippy::unwrap_used,
    reason = "test support: a failure to set up must stop the test loudly"
)]

use std::{
    io::{Read, Write},
    net::{Shutdown, SocketAddr, TcpListener, TcpStream},
    thread,
};

/// The longest request head read, in bytes.
const MAX_HEAD: usize = 64 * 1024;

/// Starts a proxy on a free loopback port forwarding to `upstream` with `header` (`Name:
/// value`) added to each request; its address. It lives as long as the test process.
///
/// # Panics
/// When no port can be bound.
pub fn adding_header(upstream: SocketAddr, header: &str) -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let address = listener.local_addr().unwrap();
    let header = header.to_owned();
    thread::spawn(move || {
        for client in listener.incoming().flatten() {
            let header = header.clone();
            thread::spawn(move || {
                let _ = forward(client, upstream, address, &header);
            });
        }
    });
    address
}

/// One connection: its request's head rewritten, then bytes both ways until either ends.
fn forward(
    mut client: TcpStream,
    upstream: SocketAddr,
    proxy: SocketAddr,
    header: &str,
) -> std::io::Result<()> {
    let mut head = Vec::new();
    let mut byte = [0; 1];
    while !head.ends_with(b"\r\n\r\n") {
        if head.len() >= MAX_HEAD || client.read(&mut byte)? == 0 {
            return Ok(());
        }
        head.push(byte[0]);
    }
    let head = String::from_utf8_lossy(&head).into_owned();
    let mut lines = head.trim_end().split("\r\n");
    let mut rewritten = format!(
        "{}\r\n{header}\r\nconnection: close\r\n",
        lines.next().unwrap_or_default()
    );
    for line in lines {
        let name = line.split(':').next().unwrap_or_default().trim();
        if name.eq_ignore_ascii_case("connection") {
            continue;
        }
        let value = line.split_once(':').map_or("", |(_, value)| value.trim());
        if name.eq_ignore_ascii_case("host") && value == proxy.to_string() {
            rewritten.push_str(&format!("host: {upstream}\r\n"));
            continue;
        }
        rewritten.push_str(line);
        rewritten.push_str("\r\n");
    }
    rewritten.push_str("\r\n");
    let mut server = TcpStream::connect(upstream)?;
    server.write_all(rewritten.as_bytes())?;
    let (mut from_client, mut to_server) = (client.try_clone()?, server.try_clone()?);
    let up = thread::spawn(move || {
        let _ = std::io::copy(&mut from_client, &mut to_server);
        let _ = to_server.shutdown(Shutdown::Write);
    });
    let _ = std::io::copy(&mut server, &mut client);
    let _ = client.shutdown(Shutdown::Both);
    let _ = up.join();
    Ok(())
}
