//! A server's stderr, drained continuously into a bounded tail for error messages.
//!
//! A full pipe (64 KiB) blocks the server, so stderr is read all the time, whether anyone
//! looks at it or not. Each line also goes to tracing at debug with the server's name.

use std::{
    collections::VecDeque,
    sync::{
        Arc, Mutex, PoisonError,
        atomic::{AtomicU64, Ordering},
    },
};

use tokio::io::AsyncRead;
use tracing::debug;

use super::lines::{Line, LineReader};

/// The last lines a server wrote to stderr.
#[derive(Debug)]
pub struct StderrTail {
    lines: Mutex<VecDeque<String>>,
    max_lines: usize,
    max_line_len: usize,
    total: AtomicU64,
}

impl StderrTail {
    /// Keeps the last `max_lines` lines, each cut to `max_line_len` bytes.
    pub fn new(max_lines: usize, max_line_len: usize) -> Self {
        Self {
            lines: Mutex::new(VecDeque::new()),
            max_lines,
            max_line_len,
            total: AtomicU64::new(0),
        }
    }

    /// Adds a line, dropping the oldest beyond the limit.
    pub fn push(&self, line: &str) {
        let mut cut = line.to_owned();
        if cut.len() > self.max_line_len {
            let mut end = self.max_line_len;
            while !cut.is_char_boundary(end) {
                end -= 1;
            }
            cut.truncate(end);
            cut.push_str(" …");
        }
        let mut lines = self.lines.lock().unwrap_or_else(PoisonError::into_inner);
        if lines.len() == self.max_lines {
            lines.pop_front();
        }
        lines.push_back(cut);
        self.total.fetch_add(1, Ordering::Relaxed);
    }

    /// The kept lines, oldest first.
    pub fn lines(&self) -> Vec<String> {
        self.lines
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .iter()
            .cloned()
            .collect()
    }

    /// Lines written in total, kept or not.
    pub fn total(&self) -> u64 {
        self.total.load(Ordering::Relaxed)
    }
}

/// Control characters of peer text escaped (`\u{1b}`, `\r`, …), so a server cannot forge log
/// lines or rewrite a terminal through what we print of its output; tabs stay.
pub fn escape_controls(text: &str) -> std::borrow::Cow<'_, str> {
    if !text.chars().any(|c| c.is_control() && c != '\t') {
        return std::borrow::Cow::Borrowed(text);
    }
    std::borrow::Cow::Owned(
        text.chars()
            .map(|c| {
                if c.is_control() && c != '\t' {
                    c.escape_default().to_string()
                } else {
                    c.to_string()
                }
            })
            .collect(),
    )
}

/// Reads `stderr` to its end into `tail`, logging each line at debug (control characters
/// escaped in both).
pub async fn drain(server: Arc<str>, stderr: impl AsyncRead + Unpin, tail: Arc<StderrTail>) {
    let mut reader = LineReader::new(stderr, 64 * 1024);
    loop {
        match reader.next_line().await {
            Ok(Some(Line::Complete(bytes))) => {
                let text = String::from_utf8_lossy(&bytes);
                let text = escape_controls(text.trim_end_matches('\r'));
                debug!(server = %server, "stderr: {text}");
                tail.push(&text);
            }
            Ok(Some(Line::Oversized { len, head })) => {
                let text = format!(
                    "{} … ({len} bytes)",
                    escape_controls(&String::from_utf8_lossy(&head))
                );
                debug!(server = %server, "stderr: {text}");
                tail.push(&text);
            }
            Ok(None) | Err(_) => return,
        }
    }
}

#[cfg(test)]
mod escape_tests {
    use super::*;

    #[tokio::test]
    async fn control_characters_in_stderr_cannot_forge_lines() {
        let tail = Arc::new(StderrTail::new(10, 1000));
        let input: &[u8] = b"ok\x1b[2Jwiped\rforged INFO line\tend\r\nplain\n";
        drain(Arc::from("s"), input, Arc::clone(&tail)).await;
        assert_eq!(
            tail.lines(),
            ["ok\\u{1b}[2Jwiped\\rforged INFO line\tend", "plain"]
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_tail_keeps_the_last_lines_each_capped() {
        let tail = StderrTail::new(2, 8);
        tail.push("one");
        tail.push("two");
        tail.push("three is long");
        assert_eq!(tail.lines(), ["two", "three is …"]);
        assert_eq!(tail.total(), 3);
    }

    #[test]
    fn capping_respects_character_boundaries() {
        let tail = StderrTail::new(1, 4);
        tail.push("ééé");
        assert_eq!(tail.lines(), ["éé …"]);
    }
}
