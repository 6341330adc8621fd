//! Messages nested deeper than serde_json reads ([`MAX_DEPTH`] levels). Without this, one tool
//! whose schema nests that deep makes the whole `tools/list` answer unreadable, and every
//! tool of that server is lost; here that tool is left out, saying why. Any other answer
//! that deep becomes an error for its request, saying where it nests too deep (so the
//! request fails at once instead of waiting for its timeout); anything else is dropped,
//! saying why.
//!
//! [`trim`] scans the raw text once, keeping only the byte spans of the parts to replace and
//! a count of the levels open (nothing of a key or a path: the scan costs the same whatever
//! the text holds). Each part nesting past [`MAX_DEPTH`] is replaced, at [`CUT_AT`] levels, by
//! a marker string of this process's own; what is left is parsed as serde_json reads it (a
//! key given twice: the last wins, so a cut in a discarded copy counts for nothing), and the
//! markers are then looked for in the parsed message: a tool holding one is left out.

use std::sync::OnceLock;

use serde_json::{Value, json};

/// Nesting serde_json reads: its recursion limit is 128, and the 128th level fails.
pub const MAX_DEPTH: usize = 127;

/// The level at which a too-deep part is replaced, well inside a tool's definition
/// (a tool is at level 4: message, result, tools, tool).
const CUT_AT: usize = 64;

/// Longest path, key or name quoted in a note, in characters.
const SHOWN: usize = 80;

/// A message made readable, or why it cannot be.
#[derive(Debug)]
pub enum Trimmed {
    /// The message as serde_json reads it, without the tools that nest too deep (`notes`
    /// says which), or an error answering the request it was the answer to.
    Readable {
        /// The message.
        value: Value,
        /// What was left out or refused, one sentence each, for the log.
        notes: Vec<String>,
    },
    /// Not a message that can be made readable (not JSON once cut, not JSON-RPC 2.0, or a
    /// request or notification, which has no request of ours to fail): dropped, for this
    /// reason.
    Dropped(String),
}

/// `text` made readable when some part of it nests deeper than [`MAX_DEPTH`]; `None` when
/// nothing does.
pub fn trim(text: &str) -> Option<Trimmed> {
    let cuts = too_deep(text.as_bytes())?;
    let marker = marker();
    let mut readable = String::with_capacity(text.len());
    let mut at = 0;
    for (start, end) in &cuts {
        readable.push_str(&text[at..*start]);
        readable.push('"');
        readable.push_str(marker);
        readable.push('"');
        at = *end;
    }
    readable.push_str(&text[at..]);
    let Ok(value) = serde_json::from_str::<Value>(&readable) else {
        return Some(Trimmed::Dropped(format!(
            "it nests deeper than {MAX_DEPTH} levels and is not JSON"
        )));
    };
    Some(settle(value, marker))
}

/// This process's marker: 32 random hex digits, which no server can know.
fn marker() -> &'static str {
    static MARKER: OnceLock<String> = OnceLock::new();
    MARKER.get_or_init(|| {
        // std's hasher keys come from the system's randomness (a server that guessed the
        // marker could only make a tool be left out).
        use std::hash::BuildHasher as _;
        let random = || std::collections::hash_map::RandomState::new().hash_one(0_u8);
        format!(
            "mcp-client: nested past {MAX_DEPTH} levels {:016x}{:016x}",
            random(),
            random()
        )
    })
}

/// The message without the tools that hold a marker, or, when one is elsewhere in an answer,
/// an error for the request it answers.
fn settle(mut value: Value, marker: &str) -> Trimmed {
    if value.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
        return Trimmed::Dropped(format!(
            "it nests deeper than {MAX_DEPTH} levels and is not JSON-RPC 2.0"
        ));
    }
    let mut notes = Vec::new();
    if let Some(tools) = value
        .pointer_mut("/result/tools")
        .and_then(Value::as_array_mut)
    {
        tools.retain(|tool| match path_to(tool, marker) {
            None => true,
            Some(path) => {
                let name = tool.get("name").and_then(Value::as_str).unwrap_or("?");
                notes.push(format!(
                    "left out tool `{}`: its definition nests deeper than {MAX_DEPTH} levels (at `{}`), more than mcp-client reads",
                    shown(name),
                    shown_path(&path)
                ));
                false
            }
        });
    }
    let Some(path) = path_to(&value, marker) else {
        return Trimmed::Readable { value, notes };
    };
    let is_answer = value.get("method").is_none()
        && (value.get("result").is_some() || value.get("error").is_some());
    let Some(id) = value
        .get("id")
        .filter(|id| is_answer && !id.is_null())
        .cloned()
    else {
        return Trimmed::Dropped(format!(
            "it nests deeper than {MAX_DEPTH} levels (at `{}`), and is no answer to a request",
            shown_path(&path)
        ));
    };
    let note = format!(
        "the server's answer nests deeper than {MAX_DEPTH} levels (at `{}`), more than mcp-client reads",
        shown_path(&path)
    );
    Trimmed::Readable {
        value: json!({
            "jsonrpc": "2.0",
            "id": id,
            "error": {"code": -32700, "message": format!("mcp-client: {note}")},
        }),
        notes: vec![note],
    }
}

/// The path in `value` to the first string equal to `marker`, as `a.b[2].c`.
fn path_to(value: &Value, marker: &str) -> Option<String> {
    match value {
        Value::String(text) if text == marker => Some(String::new()),
        Value::Array(items) => items
            .iter()
            .enumerate()
            .find_map(|(n, item)| path_to(item, marker).map(|rest| format!("[{n}]{rest}"))),
        Value::Object(members) => members.iter().find_map(|(key, member)| {
            let key = common::clip(key, 40);
            path_to(member, marker).map(|rest| format!(".{key}{rest}"))
        }),
        _ => None,
    }
}

/// The spans of `bytes` that nest deeper than [`MAX_DEPTH`], each cut at [`CUT_AT`], in
/// order; `None` when nothing does, or the brackets do not pair up (not JSON: left to the
/// parser to say).
fn too_deep(bytes: &[u8]) -> Option<Vec<(usize, usize)>> {
    // Cheap first: fewer brackets than the limit cannot nest past it.
    if bytes.iter().filter(|b| matches!(b, b'{' | b'[')).count() <= MAX_DEPTH {
        return None;
    }
    let mut depth = 0_usize;
    // Where the open part at `CUT_AT` began, and the deepest level reached inside it.
    let mut part: Option<(usize, usize)> = None;
    let mut cuts = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'"' => {
                i = string_end(bytes, i)?;
                continue;
            }
            b'{' | b'[' => {
                depth += 1;
                if depth == CUT_AT {
                    part = Some((i, depth));
                } else if let Some((_, deepest)) = part.as_mut() {
                    *deepest = (*deepest).max(depth);
                }
            }
            b'}' | b']' => {
                if depth == 0 {
                    return None;
                }
                if depth == CUT_AT
                    && let Some((start, deepest)) = part.take()
                    && deepest > MAX_DEPTH
                {
                    cuts.push((start, i + 1));
                }
                depth -= 1;
            }
            _ => {}
        }
        i += 1;
    }
    (depth == 0 && !cuts.is_empty()).then_some(cuts)
}

/// The index just past the string that starts at `start` (its opening quote).
fn string_end(bytes: &[u8], start: usize) -> Option<usize> {
    let mut i = start + 1;
    while i < bytes.len() {
        match bytes[i] {
            b'\\' => i += 2,
            b'"' => return Some(i + 1),
            _ => i += 1,
        }
    }
    None
}

/// `path` (`.inputSchema.properties…`) as shown: without its first dot, escaped, cut at
/// [`SHOWN`] characters, and ending in `…` (the part goes on deeper).
fn shown_path(path: &str) -> String {
    let mut shown = shown(path.strip_prefix('.').unwrap_or(path));
    if !shown.ends_with('…') {
        shown.push('…');
    }
    shown
}

/// `text` escaped and cut at [`SHOWN`] characters.
fn shown(text: &str) -> String {
    let mut out: String = text
        .chars()
        .take(SHOWN)
        .collect::<String>()
        .escape_debug()
        .to_string();
    if text.chars().count() > SHOWN {
        out.push('…');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `{"type":"object","properties":{"a": … }}` nested `levels` times.
    fn schema(levels: usize) -> String {
        let mut text = String::from(r#"{"type":"string"}"#);
        for _ in 0..levels {
            text = format!(r#"{{"type":"object","properties":{{"a":{text}}}}}"#);
        }
        text
    }

    fn tools_list(schemas: &[(&str, String)]) -> String {
        let tools: Vec<String> = schemas
            .iter()
            .map(|(name, schema)| {
                let name = Value::from(*name);
                format!(r#"{{"name":{name},"inputSchema":{schema}}}"#)
            })
            .collect();
        format!(
            r#"{{"jsonrpc":"2.0","id":7,"result":{{"tools":[{}]}}}}"#,
            tools.join(",")
        )
    }

    fn readable(text: &str) -> (Value, Vec<String>) {
        match trim(text) {
            Some(Trimmed::Readable { value, notes }) => (value, notes),
            other => panic!("{other:?}"),
        }
    }

    fn names(value: &Value) -> Vec<&str> {
        value["result"]["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["name"].as_str().unwrap())
            .collect()
    }

    #[test]
    fn serde_json_reads_127_levels_and_no_more() {
        let nested = |n: usize| format!("{}{}", "[".repeat(n), "]".repeat(n));
        assert!(serde_json::from_str::<Value>(&nested(MAX_DEPTH)).is_ok());
        let err = serde_json::from_str::<Value>(&nested(MAX_DEPTH + 1)).unwrap_err();
        assert!(
            err.to_string().starts_with("recursion limit exceeded"),
            "{err}"
        );
        // And the scan agrees at the edge.
        assert!(trim(&nested(MAX_DEPTH)).is_none());
        assert_eq!(too_deep(nested(MAX_DEPTH + 1).as_bytes()).unwrap().len(), 1);
    }

    #[test]
    fn a_tool_nested_too_deep_is_left_out_and_the_others_kept() {
        let text = tools_list(&[
            ("first", schema(2)),
            ("deep", schema(80)),
            ("last", schema(40)),
        ]);
        assert!(serde_json::from_str::<Value>(&text).is_err());
        let (value, notes) = readable(&text);
        assert_eq!(names(&value), ["first", "last"]);
        assert_eq!(value["id"], 7);
        assert_eq!(notes.len(), 1);
        let note = &notes[0];
        assert!(
            note.starts_with(
                "left out tool `deep`: its definition nests deeper than 127 levels (at `inputSchema.properties.a.properties.a"
            ),
            "{note}"
        );
        assert!(note.ends_with("…`), more than mcp-client reads"), "{note}");
    }

    #[test]
    fn several_deep_tools_are_each_named() {
        let text = tools_list(&[
            ("one", schema(90)),
            ("two", schema(1)),
            ("three", schema(200)),
        ]);
        let (value, notes) = readable(&text);
        assert_eq!(names(&value), ["two"]);
        assert_eq!(notes.len(), 2);
        assert!(notes[0].starts_with("left out tool `one`: "), "{notes:?}");
        assert!(notes[1].starts_with("left out tool `three`: "), "{notes:?}");
    }

    /// Found by the hostile review of the first version: with `result` (or `tools`) given
    /// twice, the scan blamed the first copy's tools, serde read the last.
    #[test]
    fn a_key_given_twice_is_read_as_serde_reads_it() {
        let first = tools_list(&[("innocent_a", schema(1)), ("deep_evil", schema(90))]);
        let first = &first[..first.len() - 1];
        let text = format!(
            r#"{first},"result":{{"tools":[{{"name":"innocent_b","inputSchema":{{}}}}]}}}}"#
        );
        let (value, notes) = readable(&text);
        assert_eq!(names(&value), ["innocent_b"]);
        assert!(notes.is_empty(), "{notes:?}");
        let tools = format!(
            r#"{{"jsonrpc":"2.0","id":1,"result":{{"tools":[{{"name":"a","inputSchema":{{}}}}],"tools":[{{"name":"deep_evil","inputSchema":{}}},{{"name":"b","inputSchema":{{}}}}]}}}}"#,
            schema(90)
        );
        let (value, notes) = readable(&tools);
        assert_eq!(names(&value), ["b"]);
        assert!(
            notes[0].starts_with("left out tool `deep_evil`"),
            "{notes:?}"
        );
    }

    #[test]
    fn another_answer_nested_too_deep_becomes_an_error_for_its_request() {
        let deep = format!("{}1{}", "[".repeat(200), "]".repeat(200));
        let text = format!(r#"{{"jsonrpc":"2.0","id":"r-1","result":{{"contents":{deep}}}}}"#);
        let (value, _) = readable(&text);
        assert_eq!(value["id"], "r-1");
        assert_eq!(value["error"]["code"], -32700);
        let message = value["error"]["message"].as_str().unwrap();
        assert!(
            message.starts_with(
                "mcp-client: the server's answer nests deeper than 127 levels (at `result.contents[0][0]"
            ),
            "{message}"
        );
    }

    /// Found by the hostile review of the first version: a deep line with an id that was no
    /// answer (not JSON-RPC 2.0, or neither result nor error) failed a pending request.
    #[test]
    fn what_is_no_answer_is_dropped_saying_why() {
        let deep = format!("{}1{}", "[".repeat(200), "]".repeat(200));
        let dropped = |text: String| match trim(&text) {
            Some(Trimmed::Dropped(why)) => why,
            other => panic!("{text}: {other:?}"),
        };
        assert_eq!(
            dropped(format!(
                r#"{{"jsonrpc":"2.0","method":"x","params":{{"a":{deep}}}}}"#
            )),
            format!(
                "it nests deeper than 127 levels (at `params.a{}…`), and is no answer to a request",
                "[0]".repeat(24)
            )
        );
        assert!(
            dropped(format!(r#"{{"jsonrpc":"2.0","id":2,"params":{deep}}}"#))
                .contains("is no answer to a request")
        );
        assert!(
            dropped(format!(
                r#"{{"jsonrpc":"2.0","id":2,"method":"m","params":{deep}}}"#
            ))
            .contains("is no answer to a request")
        );
        assert_eq!(
            dropped(format!(r#"{{"jsonrpc":"1.0","id":2,"result":{deep}}}"#)),
            "it nests deeper than 127 levels and is not JSON-RPC 2.0"
        );
        assert_eq!(
            dropped(format!(r#"{{"jsonrpc":"2.0","id":2,"result":{deep},}}"#)),
            "it nests deeper than 127 levels and is not JSON"
        );
    }

    #[test]
    fn brackets_and_quotes_inside_strings_do_not_count() {
        let text = format!(
            r#"{{"jsonrpc":"2.0","id":1,"result":{{"tools":[{{"name":"s","description":"{}\"{}","inputSchema":{{}}}}]}}}}"#,
            "[{".repeat(300),
            "]}".repeat(3)
        );
        assert!(serde_json::from_str::<Value>(&text).is_ok());
        assert!(trim(&text).is_none());
    }

    #[test]
    fn keys_and_names_are_escaped_and_cut() {
        let name = format!("x\u{1b}[2J{}", "y".repeat(200));
        let text = tools_list(&[(&name, schema(100))]);
        let (_, notes) = readable(&text);
        let note = &notes[0];
        assert!(note.starts_with("left out tool `x\\u{1b}[2Jyyy"), "{note}");
        assert!(!note.contains('\u{1b}'), "{note}");
        assert!(note.chars().count() < 300, "{note}");
    }

    #[test]
    fn unpaired_brackets_are_left_to_the_parser() {
        let text = format!("{{\"a\":{}", "[".repeat(300));
        assert!(trim(&text).is_none());
        let text = format!("{}{}", "[".repeat(300), "]".repeat(301));
        assert!(trim(&text).is_none());
    }

    /// Found by the hostile review of the first version: each cut copied its whole path, a
    /// 1 MB key shared by 3,000 cuts took 3 GB. The scan keeps two numbers per cut.
    #[test]
    fn the_scan_keeps_nothing_of_the_text() {
        let key = "k".repeat(100_000);
        let deep = format!("{}1{}", "[".repeat(70), "]".repeat(70));
        let parts = vec![deep; 2_000].join(",");
        // The message, `result` and `x` are 3 levels: each part opens at level 64.
        let text = format!(
            r#"{{"jsonrpc":"2.0","id":3,"result":{{"x":{{"{key}":{}{parts}{}}}}}}}"#,
            "[".repeat(60),
            "]".repeat(60)
        );
        let cuts = too_deep(text.as_bytes()).unwrap();
        assert_eq!(cuts.len(), 2_000);
        let (value, notes) = readable(&text);
        assert_eq!(value["error"]["code"], -32700);
        assert!(notes[0].chars().count() < 300, "{notes:?}");
    }
}
