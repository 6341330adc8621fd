//! Judging one stdout line: blank, not JSON, JSON but not JSON-RPC, or a JSON-RPC value; and
//! the escaped preview of a line that logs and errors show.

use std::borrow::Cow;

use serde_json::Value;

/// What one stdout line is, before it is typed as an MCP message.
#[derive(Debug, Clone, PartialEq)]
pub enum LineKind {
    /// Empty or whitespace only: ignored without a report.
    Blank,
    /// Not JSON.
    NotJson,
    /// JSON nested deeper than serde_json reads (127 levels): see `deep.rs`.
    TooDeep,
    /// JSON, but not `"jsonrpc": "2.0"`.
    NotJsonRpc,
    /// A JSON-RPC 2.0 object, still to be typed ([`to_message`](super::to_message)).
    JsonRpc(Value),
}

/// One stdout line, judged.
#[derive(Debug, Clone, PartialEq)]
pub struct ClassifiedLine<'a> {
    /// The line as text (decoded lossily when it is not UTF-8), without `\r` and BOM.
    pub text: Cow<'a, str>,
    /// Whether it held invalid UTF-8.
    pub invalid_utf8: bool,
    /// What it is.
    pub kind: LineKind,
}

/// Judges one stdout line (without its `\n`): a trailing `\r` and a UTF-8 BOM are ignored,
/// invalid UTF-8 is decoded lossily (and said so), then JSON and JSON-RPC 2.0 are checked.
pub fn classify(bytes: &[u8]) -> ClassifiedLine<'_> {
    let bytes = bytes.strip_suffix(b"\r").unwrap_or(bytes);
    let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    let (text, invalid_utf8) = match std::str::from_utf8(bytes) {
        Ok(text) => (Cow::Borrowed(text), false),
        Err(_) => (String::from_utf8_lossy(bytes), true),
    };
    let kind = if text.bytes().all(|b| b.is_ascii_whitespace()) {
        LineKind::Blank
    } else {
        match serde_json::from_str::<Value>(&text) {
            Err(err) if err.to_string().starts_with("recursion limit exceeded") => {
                LineKind::TooDeep
            }
            Err(_) => LineKind::NotJson,
            Ok(value) if value.get("jsonrpc").and_then(Value::as_str) != Some("2.0") => {
                LineKind::NotJsonRpc
            }
            Ok(value) => LineKind::JsonRpc(value),
        }
    };
    ClassifiedLine {
        text,
        invalid_utf8,
        kind,
    }
}

/// An escaped, truncated preview of a line for logs: `"{\"a\":1}…" (17 bytes)`.
pub fn preview(bytes: &[u8], max_chars: usize) -> String {
    let text = String::from_utf8_lossy(bytes);
    let mut shown: String = text
        .chars()
        .take(max_chars)
        .collect::<String>()
        .escape_debug()
        .to_string();
    if text.chars().count() > max_chars {
        shown.push('…');
    }
    format!("\"{shown}\" ({} bytes)", bytes.len())
}
