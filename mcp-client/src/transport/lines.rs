//! A cancel-safe, bounded line reader for a server's stdout.
//!
//! rmcp polls `receive` inside `select!`, so a read may be dropped at any await point: all
//! partial-line state lives on the struct, and the only await is `fill_buf`, which keeps unread
//! bytes in the buffer. A line longer than the limit is skipped to its newline (never buffered
//! whole), and reported with its length and first bytes.

use tokio::io::{AsyncBufReadExt as _, AsyncRead, BufReader};

/// Bytes of an oversized line kept for the error message.
const HEAD: usize = 256;

/// One line read from the stream, without its newline.
#[derive(Debug, PartialEq, Eq)]
pub enum Line {
    /// A whole line.
    Complete(Vec<u8>),
    /// A line over the limit, skipped.
    Oversized {
        /// Its length in bytes.
        len: usize,
        /// Its first bytes.
        head: Vec<u8>,
    },
}

/// Reads `\n`-terminated lines of at most `max_line` bytes.
#[derive(Debug)]
pub struct LineReader<R> {
    inner: BufReader<R>,
    max_line: usize,
    /// The current line so far. Invariant: never longer than `max_line`.
    partial: Vec<u8>,
    /// Set while skipping the rest of an oversized line; `skipped` counts its bytes so far.
    skipping: bool,
    skipped: usize,
    head: Vec<u8>,
    /// Whether the stream ended in the middle of the line returned last.
    cut: bool,
}

impl<R: AsyncRead + Unpin> LineReader<R> {
    /// A reader of lines up to `max_line` bytes.
    pub fn new(inner: R, max_line: usize) -> Self {
        Self {
            inner: BufReader::with_capacity(64 * 1024, inner),
            max_line,
            partial: Vec::new(),
            skipping: false,
            skipped: 0,
            head: Vec::new(),
            cut: false,
        }
    }

    /// Whether the line returned last had no newline: the stream ended in the middle of it.
    pub fn last_line_was_cut(&self) -> bool {
        self.cut
    }

    /// The next line, or `None` at end of stream. Cancel-safe.
    ///
    /// # Errors
    /// Read errors of the underlying stream.
    pub async fn next_line(&mut self) -> std::io::Result<Option<Line>> {
        loop {
            let Self {
                inner,
                max_line,
                partial,
                skipping,
                skipped,
                head,
                cut: _,
            } = self;
            let available = inner.fill_buf().await?;
            if available.is_empty() {
                return Ok(self.finish_at_eof());
            }
            let newline = available.iter().position(|&b| b == b'\n');
            let chunk = &available[..newline.unwrap_or(available.len())];
            if !*skipping && partial.len() + chunk.len() > *max_line {
                // Keep only the head for the report; skip the rest of the line as it streams by.
                *skipping = true;
                *skipped = partial.len();
                *head = std::mem::take(partial);
                head.truncate(HEAD);
            }
            if *skipping {
                *skipped += chunk.len();
                let room = HEAD.saturating_sub(head.len());
                head.extend_from_slice(&chunk[..chunk.len().min(room)]);
            } else {
                partial.extend_from_slice(chunk);
            }
            let used = chunk.len() + usize::from(newline.is_some());
            inner.consume(used);
            if newline.is_some() {
                return Ok(Some(if self.skipping {
                    self.take_oversized()
                } else {
                    Line::Complete(std::mem::take(&mut self.partial))
                }));
            }
        }
    }

    fn take_oversized(&mut self) -> Line {
        self.skipping = false;
        Line::Oversized {
            len: std::mem::take(&mut self.skipped),
            head: std::mem::take(&mut self.head),
        }
    }

    fn finish_at_eof(&mut self) -> Option<Line> {
        self.cut = self.skipping || !self.partial.is_empty();
        if self.skipping {
            Some(self.take_oversized())
        } else if self.partial.is_empty() {
            None
        } else {
            Some(Line::Complete(std::mem::take(&mut self.partial)))
        }
    }
}

#[cfg(test)]
mod tests {
    use tokio::io::AsyncWriteExt as _;

    use super::*;

    async fn lines_of(input: &[u8], max_line: usize) -> Vec<Line> {
        let (mut writer, reader) = tokio::io::duplex(7);
        let input = input.to_vec();
        tokio::spawn(async move {
            writer.write_all(&input).await.unwrap();
        });
        let mut reader = LineReader::new(reader, max_line);
        let mut lines = Vec::new();
        while let Some(line) = reader.next_line().await.unwrap() {
            lines.push(line);
        }
        lines
    }

    #[tokio::test]
    async fn lines_split_on_newlines_across_small_reads() {
        let lines = lines_of(b"{\"a\":1}\n\nsecond line\nlast", 100).await;
        assert_eq!(
            lines,
            [
                Line::Complete(b"{\"a\":1}".to_vec()),
                Line::Complete(Vec::new()),
                Line::Complete(b"second line".to_vec()),
                Line::Complete(b"last".to_vec()),
            ]
        );
    }

    #[tokio::test]
    async fn an_oversized_line_is_skipped_with_its_length_and_head() {
        let mut input = vec![b'x'; 50];
        input.extend_from_slice(b"\nok\n");
        input.extend_from_slice(&[b'y'; 30]);
        let lines = lines_of(&input, 20).await;
        assert_eq!(lines.len(), 3);
        assert_eq!(
            lines[0],
            Line::Oversized {
                len: 50,
                head: vec![b'x'; 50]
            }
        );
        assert_eq!(lines[1], Line::Complete(b"ok".to_vec()));
        assert_eq!(
            lines[2],
            Line::Oversized {
                len: 30,
                head: vec![b'y'; 30]
            }
        );
    }

    #[tokio::test]
    async fn a_line_exactly_at_the_limit_is_kept() {
        let lines = lines_of(b"0123456789\n", 10).await;
        assert_eq!(lines, [Line::Complete(b"0123456789".to_vec())]);
    }

    proptest::proptest! {
        /// Whatever the lines, the limit and the size of the reads, every line comes out once,
        /// whole when it fits and reported with its length and head when it does not.
        #[test]
        fn every_line_comes_out_once_whatever_the_reads(
            lines in proptest::collection::vec(proptest::collection::vec(0_u8..=255, 0..300), 0..20),
            max_line in 1_usize..200,
            pipe in 1_usize..64,
        ) {
            let lines: Vec<Vec<u8>> = lines
                .into_iter()
                .map(|line| line.into_iter().map(|b| if b == b'\n' { b'x' } else { b }).collect())
                .collect();
            let mut input = Vec::new();
            for line in &lines {
                input.extend_from_slice(line);
                input.push(b'\n');
            }
            let runtime = tokio::runtime::Builder::new_current_thread().build().unwrap();
            let got = runtime.block_on(async {
                let (mut writer, reader) = tokio::io::duplex(pipe);
                tokio::spawn(async move { writer.write_all(&input).await.unwrap() });
                let mut reader = LineReader::new(reader, max_line);
                let mut got = Vec::new();
                while let Some(line) = reader.next_line().await.unwrap() {
                    got.push(line);
                }
                got
            });
            let expected: Vec<Line> = lines
                .iter()
                .map(|line| {
                    if line.len() <= max_line {
                        Line::Complete(line.clone())
                    } else {
                        Line::Oversized { len: line.len(), head: line[..line.len().min(HEAD)].to_vec() }
                    }
                })
                .collect();
            proptest::prop_assert_eq!(got, expected);
        }
    }

    #[tokio::test]
    async fn reading_survives_being_cancelled_mid_line() {
        let (mut writer, reader) = tokio::io::duplex(64);
        let mut reader = LineReader::new(reader, 1024);
        writer.write_all(b"{\"partial\":").await.unwrap();
        // The read is dropped while the line is incomplete, as select! does.
        let cancelled =
            tokio::time::timeout(std::time::Duration::from_millis(20), reader.next_line()).await;
        assert!(cancelled.is_err());
        writer.write_all(b"true}\n").await.unwrap();
        assert_eq!(
            reader.next_line().await.unwrap(),
            Some(Line::Complete(b"{\"partial\":true}".to_vec()))
        );
    }
}
