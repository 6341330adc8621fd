//! Cutting a model server's response into frames, with bounds: NDJSON lines (Ollama) and
//! server-sent events (OpenAI, Anthropic), never more than [`MAX_FRAME`] bytes buffered for
//! one frame and [`MAX_RESPONSE`] bytes read for one response, each byte scanned once (a long
//! line costs linear time, and an error at the cap, not the memory it asks for).
//!
//! Lines end with LF, CRLF or a lone CR (as the SSE format allows); a UTF-8 byte order mark
//! at the start of the response is dropped.

use std::fmt;

/// Most bytes of one line or one event: what the MCP transport allows a message.
pub(crate) const MAX_FRAME: usize = 16 * 1024 * 1024;
/// Most bytes of one response.
pub(crate) const MAX_RESPONSE: u64 = 64 * 1024 * 1024;

const BOM: &[u8] = b"\xEF\xBB\xBF";

/// A response that broke a bound.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum FrameError {
    /// One line or event is longer than the limit.
    FrameTooLong(usize),
    /// The response is longer than the limit.
    ResponseTooLong(u64),
}

impl fmt::Display for FrameError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::FrameTooLong(limit) => write!(
                f,
                "one line or event of the response is longer than {} MiB; the response was abandoned",
                limit / (1024 * 1024)
            ),
            Self::ResponseTooLong(limit) => write!(
                f,
                "the response is longer than {} MiB; it was abandoned",
                limit / (1024 * 1024)
            ),
        }
    }
}

/// Lines out of a byte stream.
#[derive(Debug)]
pub(crate) struct Lines {
    buffer: Vec<u8>,
    /// Where the next line starts in `buffer` (what is before it was handed out).
    start: usize,
    /// Where the search for a line end goes on (what is before it has none).
    scanned: usize,
    read: u64,
    started: bool,
    max_frame: usize,
    max_response: u64,
}

impl Default for Lines {
    fn default() -> Self {
        Self::with_limits(MAX_FRAME, MAX_RESPONSE)
    }
}

impl Lines {
    pub(crate) fn with_limits(max_frame: usize, max_response: u64) -> Self {
        Self {
            buffer: Vec::new(),
            start: 0,
            scanned: 0,
            read: 0,
            started: false,
            max_frame,
            max_response,
        }
    }

    /// Takes the next chunk of the response.
    pub(crate) fn push(&mut self, chunk: &[u8]) -> Result<(), FrameError> {
        self.read = self.read.saturating_add(chunk.len() as u64);
        if self.read > self.max_response {
            return Err(FrameError::ResponseTooLong(self.max_response));
        }
        // Lines handed out leave once per chunk, not once per line.
        self.buffer.drain(..self.start);
        self.scanned -= self.start;
        self.start = 0;
        self.buffer.extend_from_slice(chunk);
        if !self.started {
            if self.buffer.len() < BOM.len() && BOM.starts_with(&self.buffer) {
                return Ok(()); // Maybe a BOM, not all here yet.
            }
            self.started = true;
            if self.buffer.starts_with(BOM) {
                self.buffer.drain(..BOM.len());
            }
        }
        Ok(())
    }

    /// The next complete line (without its end), if one is here.
    pub(crate) fn next_line(&mut self) -> Result<Option<String>, FrameError> {
        if !self.started {
            return Ok(None);
        }
        let found = self.buffer[self.scanned..]
            .iter()
            .position(|&b| b == b'\n' || b == b'\r')
            .map(|offset| self.scanned + offset);
        let Some(end) = found else {
            self.scanned = self.buffer.len();
            return if self.buffer.len() - self.start > self.max_frame {
                Err(FrameError::FrameTooLong(self.max_frame))
            } else {
                Ok(None)
            };
        };
        let width = match (self.buffer[end], self.buffer.get(end + 1)) {
            (b'\r', Some(b'\n')) => 2,
            // A CR last in the buffer may be the first half of a CRLF: wait for the next byte.
            (b'\r', None) => {
                self.scanned = end;
                return Ok(None);
            }
            _ => 1,
        };
        if end - self.start > self.max_frame {
            return Err(FrameError::FrameTooLong(self.max_frame));
        }
        let line = String::from_utf8_lossy(&self.buffer[self.start..end]).into_owned();
        self.start = end + width;
        self.scanned = self.start;
        Ok(Some(line))
    }

    /// At the end of the response: what is left after the last line end (a line cut off),
    /// if anything.
    pub(crate) fn rest(&mut self) -> Option<String> {
        // A lone CR at the very end ended its line.
        let text = String::from_utf8_lossy(&self.buffer[self.start..]).into_owned();
        self.buffer.clear();
        self.start = 0;
        self.scanned = 0;
        let text = text.strip_suffix('\r').unwrap_or(&text).to_owned();
        (!text.is_empty()).then_some(text)
    }
}

/// One server-sent event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SseEvent {
    /// Its `event:` field (`message` when absent).
    pub(crate) kind: String,
    /// Its `data:` lines, joined with newlines.
    pub(crate) data: String,
}

/// Server-sent events out of lines.
#[derive(Debug, Default)]
pub(crate) struct SseEvents {
    kind: String,
    data: String,
    has_data: bool,
}

impl SseEvents {
    /// Takes one line; returns the event a blank line completes.
    pub(crate) fn line(&mut self, line: &str) -> Result<Option<SseEvent>, FrameError> {
        if line.is_empty() {
            let kind = std::mem::take(&mut self.kind);
            let data = std::mem::take(&mut self.data);
            return Ok(std::mem::take(&mut self.has_data).then(|| SseEvent {
                kind: if kind.is_empty() {
                    "message".to_owned()
                } else {
                    kind
                },
                data,
            }));
        }
        if line.starts_with(':') {
            return Ok(None); // A comment (keep-alive).
        }
        let (field, value) = line.split_once(':').unwrap_or((line, ""));
        let value = value.strip_prefix(' ').unwrap_or(value);
        match field {
            "data" => {
                if self.has_data {
                    self.data.push('\n');
                }
                self.data.push_str(value);
                self.has_data = true;
                if self.data.len() > MAX_FRAME {
                    return Err(FrameError::FrameTooLong(MAX_FRAME));
                }
            }
            "event" => value.clone_into(&mut self.kind),
            // `id`, `retry` and unknown fields mean nothing to a model's answer.
            _ => {}
        }
        Ok(None)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all_lines(chunks: &[&[u8]]) -> (Vec<String>, Option<String>) {
        let mut lines = Lines::default();
        let mut out = Vec::new();
        for chunk in chunks {
            lines.push(chunk).unwrap();
            while let Some(line) = lines.next_line().unwrap() {
                out.push(line);
            }
        }
        (out, lines.rest())
    }

    #[test]
    fn lines_end_with_lf_crlf_or_cr_also_split_across_chunks() {
        let (lines, rest) = all_lines(&[b"a\r", b"\nb\rc\n", b"\n", b"d"]);
        assert_eq!(lines, ["a", "b", "c", ""]);
        assert_eq!(rest.as_deref(), Some("d"));
        let (lines, rest) = all_lines(&[b"x\r"]);
        assert!(lines.is_empty());
        assert_eq!(rest.as_deref(), Some("x"));
    }

    #[test]
    fn a_byte_order_mark_at_the_start_is_dropped_even_split() {
        let (lines, _) = all_lines(&[b"\xEF", b"\xBB", b"\xBFdata: 1\n"]);
        assert_eq!(lines, ["data: 1"]);
        // Only at the start.
        let (lines, _) = all_lines(&[b"a\n\xEF\xBB\xBFb\n"]);
        assert_eq!(lines, ["a", "\u{feff}b"]);
    }

    #[test]
    fn a_line_past_the_frame_limit_is_an_error_without_waiting_for_its_end() {
        let mut lines = Lines::with_limits(8, 1000);
        lines.push(b"12345").unwrap();
        assert_eq!(lines.next_line(), Ok(None));
        lines.push(b"6789").unwrap();
        assert_eq!(lines.next_line(), Err(FrameError::FrameTooLong(8)));
        let mut lines = Lines::with_limits(8, 1000);
        lines.push(b"123456789\n").unwrap();
        assert_eq!(lines.next_line(), Err(FrameError::FrameTooLong(8)));
        assert_eq!(
            FrameError::FrameTooLong(MAX_FRAME).to_string(),
            "one line or event of the response is longer than 16 MiB; the response was abandoned"
        );
    }

    #[test]
    fn a_response_past_its_limit_is_an_error() {
        let mut lines = Lines::with_limits(100, 10);
        lines.push(b"a\nb\nc\n").unwrap();
        assert_eq!(
            lines.push(b"d\ne\nf\n"),
            Err(FrameError::ResponseTooLong(10))
        );
        assert_eq!(
            FrameError::ResponseTooLong(MAX_RESPONSE).to_string(),
            "the response is longer than 64 MiB; it was abandoned"
        );
    }

    #[test]
    fn events_join_data_lines_skip_comments_and_need_data() {
        let mut events = SseEvents::default();
        let mut out = Vec::new();
        for line in [
            ": keep-alive",
            "",
            "event: message_start",
            "data: {\"a\":",
            "data:1}",
            "id: 7",
            "",
            "data",
            "",
        ] {
            out.extend(events.line(line).unwrap());
        }
        assert_eq!(
            out,
            [
                SseEvent {
                    kind: "message_start".into(),
                    data: "{\"a\":\n1}".into()
                },
                SseEvent {
                    kind: "message".into(),
                    data: String::new()
                }
            ]
        );
    }
}
