//! `mcp-floor`: the pipe floor for benchmarks. A std-only line responder that answers every
//! request line with a canned JSON-RPC result carrying the request's id: no JSON parsing, no
//! async runtime, no MCP semantics. What any stdio server costs above this is its own.
//!
//! Not an MCP server: it tells requests apart by a byte search for their method, answers
//! `initialize`, `tools/list` (one tool, `any`) and `tools/call` with canned results,
//! `server/discover` with "method not found" (as a server of 2025-11-25 does) and anything
//! else with `{}`, and ignores notifications: enough for the raw driver and for
//! SDK clients.

use std::io::{BufRead as _, Write as _};

fn main() {
    let stdin = std::io::stdin().lock();
    let mut stdout = std::io::BufWriter::new(std::io::stdout().lock());
    for line in stdin.split(b'\n') {
        let Ok(line) = line else { return };
        let Some(id) = request_id(&line) else {
            continue;
        };
        let mut reply = Vec::with_capacity(160);
        reply.extend_from_slice(b"{\"jsonrpc\":\"2.0\",\"id\":");
        reply.extend_from_slice(id);
        let answer: &[u8] = if contains(&line, b"\"server/discover\"") {
            // A server of 2025-11-25: clients of later revisions fall back to `initialize`.
            b",\"error\":{\"code\":-32601,\"message\":\"Method not found\"}}\n"
        } else {
            b""
        };
        let result: &[u8] = if contains(&line, b"\"tools/call\"") {
            b"{\"content\":[{\"type\":\"text\",\"text\":\"ok\"}]}"
        } else if contains(&line, b"\"tools/list\"") {
            b"{\"tools\":[{\"name\":\"any\",\"description\":\"Answers ok\",\"inputSchema\":{\"type\":\"object\"}}]}"
        } else if contains(&line, b"\"initialize\"") {
            b"{\"protocolVersion\":\"2025-11-25\",\"capabilities\":{\"tools\":{}},\"serverInfo\":{\"name\":\"mcp-floor\",\"version\":\"0\"}}"
        } else {
            b"{}"
        };
        if answer.is_empty() {
            reply.extend_from_slice(b",\"result\":");
            reply.extend_from_slice(result);
            reply.extend_from_slice(b"}\n");
        } else {
            reply.extend_from_slice(answer);
        }
        if stdout
            .write_all(&reply)
            .and_then(|()| stdout.flush())
            .is_err()
        {
            return;
        }
    }
}

fn contains(line: &[u8], needle: &[u8]) -> bool {
    line.windows(needle.len()).any(|w| w == needle)
}

/// The bytes of the request's `"id"` value (a number or a string), found by a plain scan.
fn request_id(line: &[u8]) -> Option<&[u8]> {
    let key = b"\"id\":";
    let start = line.windows(key.len()).position(|w| w == key)? + key.len();
    let rest = &line[start..];
    let rest = &rest[rest.iter().position(|b| !b.is_ascii_whitespace())?..];
    let end = if rest.first() == Some(&b'"') {
        1 + rest[1..].iter().position(|&b| b == b'"')? + 1
    } else {
        rest.iter().position(|&b| b == b',' || b == b'}')?
    };
    Some(&rest[..end])
}
