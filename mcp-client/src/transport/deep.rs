//! Messages nested deeper than serde_json reads ([`MAX_DEPTH`] levels). Without this, one tool
//! whose schema nests that deep makes the whole `tools/list` answer unreadable, and every
//! tool of that server is lost; here that tool is left out, saying why. Any other message
//! that deep is answered, when it answers a request, by an error that says where it nests
//! too deep (so the request fails at once instead of waiting for its timeout).
//!
//! [`trim`] scans the raw text once (no tree is built), replaces each too-deep part by
//! `null` at [`CUT_AT`] levels, parses what is left and then removes the tools that held
//! such a part.

use serde_json::{Value, json};

/// Nesting serde_json reads: its recursion limit is 128, and the 128th level fails.
pub const MAX_DEPTH: usize = 127;

/// The level at which a too-deep part is replaced, well inside a tool's definition
/// (a tool is at level 4: message, result, tools, tool).
const CUT_AT: usize = 64;

/// Longest path, key or name quoted in a note, in characters.
const SHOWN: usize = 80;

/// A step on the way to a value: an object's key or an array's index.
#[derive(Debug, Clone, PartialEq)]
enum Step {
    Key(String),
    Index(usize),
}

/// A part too deep: its bytes and where it is.
#[derive(Debug)]
struct Cut {
    start: usize,
    end: usize,
    path: Vec<Step>,
}

/// A message made readable.
#[derive(Debug)]
pub struct Trimmed {
    /// The message: without the too-deep tools, or an error answering the request.
    pub value: Value,
    /// What was left out or refused, one sentence each, for the log.
    pub notes: Vec<String>,
}

/// `text` made readable when some part of it nests deeper than [`MAX_DEPTH`]: `None` when
/// nothing does (or it is not JSON for another reason, or a too-deep part cannot be dealt
/// with: a notification or a request, which are then dropped as they are).
pub fn trim(text: &str) -> Option<Trimmed> {
    let cuts = too_deep(text.as_bytes())?;
    if cuts.is_empty() {
        return None;
    }
    let mut readable = String::with_capacity(text.len());
    let mut at = 0;
    for cut in &cuts {
        readable.push_str(&text[at..cut.start]);
        readable.push_str("null");
        at = cut.end;
    }
    readable.push_str(&text[at..]);
    let value: Value = serde_json::from_str(&readable).ok()?;
    settle(value, &cuts)
}

/// The message without the tools that held a cut part, or, when another part was cut, an
/// error for the request it answers.
fn settle(mut value: Value, cuts: &[Cut]) -> Option<Trimmed> {
    let mut tools: Vec<(usize, &Cut)> = Vec::new();
    let mut elsewhere = None;
    for cut in cuts {
        match cut.path.as_slice() {
            [Step::Key(result), Step::Key(list), Step::Index(n), ..]
                if result == "result" && list == "tools" =>
            {
                tools.push((*n, cut));
            }
            _ => {
                elsewhere.get_or_insert(cut);
            }
        }
    }
    if let Some(cut) = elsewhere {
        let id = value
            .get("id")
            .filter(|_| value.get("method").is_none())?
            .clone();
        let note = format!(
            "the server's answer nests deeper than {MAX_DEPTH} levels (at `{}`), more than mcp-client reads",
            shown_path(&cut.path)
        );
        let value = json!({
            "jsonrpc": "2.0",
            "id": id,
            "error": {"code": -32700, "message": format!("mcp-client: {note}")},
        });
        return Some(Trimmed {
            value,
            notes: vec![note],
        });
    }
    tools.sort_by_key(|(n, _)| std::cmp::Reverse(*n));
    tools.dedup_by_key(|(n, _)| *n);
    let list = value.pointer_mut("/result/tools")?.as_array_mut()?;
    let mut notes = Vec::with_capacity(tools.len());
    for (n, cut) in tools {
        if n >= list.len() {
            return None;
        }
        let tool = list.remove(n);
        let name = tool.get("name").and_then(Value::as_str).unwrap_or("?");
        notes.push(format!(
            "left out tool `{}`: its definition nests deeper than {MAX_DEPTH} levels (at `{}`), more than mcp-client reads",
            shown(name),
            shown_path(&cut.path[3..])
        ));
    }
    notes.reverse();
    Some(Trimmed { value, notes })
}

/// The parts of `bytes` that nest deeper than [`MAX_DEPTH`], each cut at [`CUT_AT`], in
/// order; `None` when the brackets do not pair up (not JSON).
fn too_deep(bytes: &[u8]) -> Option<Vec<Cut>> {
    // Cheap first: fewer brackets than the limit cannot nest past it.
    if bytes.iter().filter(|b| matches!(b, b'{' | b'[')).count() <= MAX_DEPTH {
        return Some(Vec::new());
    }
    let mut scan = Scan::default();
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'"' => {
                let end = string_end(bytes, i)?;
                scan.string(&bytes[i..end]);
                i = end;
                continue;
            }
            b'{' | b'[' => scan.open(bytes[i] == b'{', i),
            b'}' | b']' => scan.close(i + 1)?,
            b',' => scan.comma(),
            _ => {}
        }
        i += 1;
    }
    scan.frames.is_empty().then_some(scan.cuts)
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

/// An open object or array.
#[derive(Debug)]
struct Frame {
    object: bool,
    /// The key or index of the member being read.
    step: Option<Step>,
    /// Where it opened.
    start: usize,
}

#[derive(Debug, Default)]
struct Scan {
    frames: Vec<Frame>,
    /// In an object, whether the next string is a key.
    key_next: bool,
    /// The deepest level reached since the open frame at `CUT_AT` opened.
    deepest: usize,
    cuts: Vec<Cut>,
}

impl Scan {
    fn open(&mut self, object: bool, at: usize) {
        self.frames.push(Frame {
            object,
            step: (!object).then_some(Step::Index(0)),
            start: at,
        });
        self.key_next = object;
        self.deepest = self.deepest.max(self.frames.len());
        if self.frames.len() == CUT_AT {
            self.deepest = CUT_AT;
        }
    }

    fn close(&mut self, end: usize) -> Option<()> {
        let depth = self.frames.len();
        let frame = self.frames.pop()?;
        if depth == CUT_AT && self.deepest > MAX_DEPTH {
            let path = self.frames.iter().filter_map(|f| f.step.clone()).collect();
            self.cuts.push(Cut {
                start: frame.start,
                end,
                path,
            });
        }
        self.key_next = false;
        Some(())
    }

    fn comma(&mut self) {
        match self.frames.last_mut() {
            Some(Frame {
                object: true, step, ..
            }) => {
                *step = None;
                self.key_next = true;
            }
            Some(Frame {
                step: Some(Step::Index(n)),
                ..
            }) => *n += 1,
            _ => {}
        }
    }

    fn string(&mut self, quoted: &[u8]) {
        if !self.key_next {
            return;
        }
        self.key_next = false;
        if self.frames.len() >= CUT_AT {
            // Below the cut, keys are not part of any path shown.
            return;
        }
        let key = serde_json::from_slice::<String>(quoted).unwrap_or_default();
        if let Some(frame) = self.frames.last_mut() {
            frame.step = Some(Step::Key(key));
        }
    }
}

/// `path` as `result.tools[3].inputSchema…`, escaped and cut at [`SHOWN`] characters.
fn shown_path(path: &[Step]) -> String {
    let mut text = String::new();
    for step in path {
        match step {
            Step::Key(key) if text.is_empty() => text.push_str(key),
            Step::Key(key) => {
                text.push('.');
                text.push_str(key);
            }
            Step::Index(n) => text.push_str(&format!("[{n}]")),
        }
    }
    let mut shown = shown(&text);
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
        assert!(too_deep(nested(MAX_DEPTH + 1).as_bytes()).unwrap().len() == 1);
    }

    #[test]
    fn a_tool_nested_too_deep_is_left_out_and_the_others_kept() {
        let text = tools_list(&[
            ("first", schema(2)),
            ("deep", schema(80)),
            ("last", schema(40)),
        ]);
        assert!(serde_json::from_str::<Value>(&text).is_err());
        let trimmed = trim(&text).expect("trimmed");
        let names: Vec<&str> = trimmed.value["result"]["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["name"].as_str().unwrap())
            .collect();
        assert_eq!(names, ["first", "last"]);
        assert_eq!(trimmed.value["id"], 7);
        assert_eq!(trimmed.notes.len(), 1);
        let note = &trimmed.notes[0];
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
        let trimmed = trim(&text).unwrap();
        assert_eq!(
            trimmed.value["result"]["tools"].as_array().unwrap().len(),
            1
        );
        assert_eq!(trimmed.notes.len(), 2);
        assert!(
            trimmed.notes[0].starts_with("left out tool `one`: "),
            "{:?}",
            trimmed.notes
        );
        assert!(
            trimmed.notes[1].starts_with("left out tool `three`: "),
            "{:?}",
            trimmed.notes
        );
    }

    #[test]
    fn another_answer_nested_too_deep_becomes_an_error_for_its_request() {
        let deep = format!("{}1{}", "[".repeat(200), "]".repeat(200));
        let text = format!(r#"{{"jsonrpc":"2.0","id":"r-1","result":{{"contents":{deep}}}}}"#);
        let trimmed = trim(&text).unwrap();
        assert_eq!(trimmed.value["id"], "r-1");
        assert_eq!(trimmed.value["error"]["code"], -32700);
        let message = trimmed.value["error"]["message"].as_str().unwrap();
        assert!(
            message.starts_with("mcp-client: the server's answer nests deeper than 127 levels (at `result.contents[0][0]"),
            "{message}"
        );
        // A notification or request so deep has no one to answer: left to be dropped.
        let note = format!(r#"{{"jsonrpc":"2.0","method":"x","params":{{"a":{deep}}}}}"#);
        assert!(trim(&note).is_none());
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
        let trimmed = trim(&text).unwrap();
        let note = &trimmed.notes[0];
        assert!(note.starts_with("left out tool `x\\u{1b}[2Jyyy"), "{note}");
        assert!(!note.contains('\u{1b}'), "{note}");
        assert!(note.chars().count() < 300, "{note}");
    }

    #[test]
    fn unpaired_brackets_are_not_json() {
        let text = format!("{{\"a\":{}", "[".repeat(300));
        assert!(trim(&text).is_none());
        let text = format!("{}{}", "[".repeat(300), "]".repeat(301));
        assert!(trim(&text).is_none());
    }
}
