//! Plain reads of stdin on the reader's thread: [`Plain`] reads lines through a buffer of its
//! own (so a read can stop waiting, and what it read ahead can be dropped), and on a terminal
//! an approval's answer key by key ([`KeyByKey`]), so a Ctrl-C is seen in its place among the
//! keys. The line editor and the thread itself are `input`'s.

use std::{io::Write as _, sync::Arc, time::Duration};

use tokio::sync::oneshot;

/// What a read gave.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(in crate::cli) enum Line {
    /// A line, without its end.
    Text(String),
    /// Ctrl-C at the line editor.
    Interrupted,
    /// Ctrl-D, or stdin closed.
    End,
}

/// What a Ctrl-C typed at a question does, called before the question gets its answer.
pub(super) type OnInterrupt = Arc<std::sync::Mutex<Option<Box<dyn Fn() + Send + Sync>>>>;

/// How often a plain read looks whether its caller still waits.
pub(super) const TICK: Duration = Duration::from_millis(50);

/// Plain line reads of stdin, by this thread alone, through a buffer of its own (so a read can
/// stop waiting, and what it read ahead can be dropped).
#[derive(Default)]
pub(super) struct Plain {
    /// Stdin is a terminal.
    terminal: bool,
    /// Read, not yet handed out.
    pub(super) pending: Vec<u8>,
    /// Stdin ended (Ctrl-D at a terminal, the end of a pipe).
    ended: bool,
}

impl Plain {
    /// A reader with nothing read yet; `terminal`: stdin is a terminal.
    pub(super) fn new(terminal: bool) -> Self {
        Self {
            terminal,
            ..Self::default()
        }
    }

    /// Whether stdin is a terminal.
    pub(super) fn is_terminal(&self) -> bool {
        self.terminal
    }

    /// On a terminal, drops whatever was typed before now: the terminal's input queue
    /// (`tcflush(TCIFLUSH)`) and what was read but not handed out. A Ctrl-D typed then is
    /// forgotten too. A pipe keeps its lines.
    pub(super) fn discard_typed_ahead(&mut self) {
        if !self.terminal {
            return;
        }
        self.pending.clear();
        self.ended = false;
        let _ = rustix::termios::tcflush(std::io::stdin(), rustix::termios::QueueSelector::IFlush);
    }

    /// Gives a line back, for the next reader, on a pipe; on a terminal it was typed for a
    /// question that is gone, and is dropped.
    pub(super) fn unread(&mut self, text: String) {
        if !self.terminal {
            let mut line = text.into_bytes();
            line.push(b'\n');
            line.append(&mut self.pending);
            self.pending = line;
        }
    }

    /// The next line; `None` when `reply`'s caller stopped waiting first.
    pub(super) fn line(&mut self, reply: &oneshot::Sender<Line>) -> Option<Line> {
        loop {
            if reply.is_closed() {
                // On a terminal, what was typed so far was for a question that is gone; a
                // pipe's lines stay for the next reader.
                self.discard_typed_ahead();
                return None;
            }
            if let Some(end) = self.pending.iter().position(|&b| b == b'\n') {
                let line: Vec<u8> = self.pending.drain(..=end).collect();
                return Some(Line::Text(text(&line)));
            }
            if self.ended {
                if self.pending.is_empty() {
                    return Some(Line::End);
                }
                let line = std::mem::take(&mut self.pending);
                return Some(Line::Text(text(&line)));
            }
            self.fill();
        }
    }

    /// The answer to a question, typed after it showed, read key by key ([`KeyByKey`]) with
    /// the terminal's own Ctrl-C turned off, so a Ctrl-C is seen in its place among the
    /// keys: "Ctrl-C y Enter" arriving in one burst (a paste, a slow link) is an interruption,
    /// never a yes that would beat the interruption's signal to the question. The Ctrl-C then
    /// does what the signal would have done ([`Input::on_interrupt`](super::Input::on_interrupt)), before the answer.
    pub(super) fn keys(
        &mut self,
        reply: &oneshot::Sender<Line>,
        on_interrupt: &OnInterrupt,
    ) -> Option<Line> {
        let mut typed: Vec<u8> = Vec::new();
        let mut escape = Escape::None;
        loop {
            if reply.is_closed() {
                self.discard_typed_ahead();
                eprint!("\r\n");
                return None;
            }
            while !self.pending.is_empty() {
                let byte = self.pending.remove(0);
                if escape.swallows(byte) {
                    continue;
                }
                match byte {
                    // Ctrl-C: whatever came with it or after it was not typed for this question.
                    0x03 => {
                        self.pending.clear();
                        eprint!("^C\r\n");
                        if let Some(hook) = on_interrupt
                            .lock()
                            .unwrap_or_else(std::sync::PoisonError::into_inner)
                            .as_ref()
                        {
                            hook();
                        }
                        return Some(Line::Interrupted);
                    }
                    b'\r' | b'\n' => {
                        eprint!("\r\n");
                        return Some(Line::Text(text(&typed)));
                    }
                    0x04 if typed.is_empty() => {
                        eprint!("\r\n");
                        return Some(Line::End);
                    }
                    // Backspace: the last character, all of its bytes.
                    0x7f | 0x08 => {
                        while let Some(last) = typed.pop() {
                            if last & 0xc0 != 0x80 {
                                break;
                            }
                        }
                        eprint!("\x08 \x08");
                    }
                    0x1b => escape = Escape::Started,
                    other if other < 0x20 => {}
                    other => {
                        typed.push(other);
                        let _ = std::io::stderr().write_all(&[other]);
                    }
                }
                let _ = std::io::stderr().flush();
            }
            self.fill();
        }
    }

    /// Waits up to [`TICK`] for stdin, and reads what came.
    fn fill(&mut self) {
        use rustix::{
            event::{PollFd, PollFlags, Timespec, poll},
            io::Errno,
        };
        let stdin = std::io::stdin();
        let tick = Timespec {
            tv_sec: 0,
            tv_nsec: i64::from(TICK.subsec_nanos()),
        };
        let mut fds = [PollFd::new(&stdin, PollFlags::IN)];
        match poll(&mut fds, Some(&tick)) {
            Ok(0) | Err(Errno::INTR) => return,
            Ok(_) if fds[0].revents().contains(PollFlags::NVAL) => {
                self.ended = true;
                return;
            }
            Ok(_) => {}
            Err(_) => {
                self.ended = true;
                return;
            }
        }
        let mut buffer = [0u8; 4096];
        match rustix::io::read(&stdin, &mut buffer) {
            Ok(0) => self.ended = true,
            Ok(n) => self.pending.extend_from_slice(&buffer[..n]),
            Err(Errno::INTR | Errno::AGAIN) => {}
            Err(_) => self.ended = true,
        }
    }
}

/// The terminal read key by key, without echo and without its own Ctrl-C, while this lives;
/// as it was before, after.
pub(super) struct KeyByKey(rustix::termios::Termios);

impl KeyByKey {
    /// `None` when stdin's modes cannot be read or set (then lines are read as they come).
    pub(super) fn enter() -> Option<Self> {
        use rustix::termios::{
            LocalModes, OptionalActions, SpecialCodeIndex, tcgetattr, tcsetattr,
        };
        let stdin = std::io::stdin();
        let before = tcgetattr(&stdin).ok()?;
        let mut keys = before.clone();
        keys.local_modes -= LocalModes::ICANON | LocalModes::ISIG | LocalModes::ECHO;
        keys.special_codes[SpecialCodeIndex::VMIN] = 1;
        keys.special_codes[SpecialCodeIndex::VTIME] = 0;
        tcsetattr(&stdin, OptionalActions::Now, &keys).ok()?;
        Some(Self(before))
    }
}

impl Drop for KeyByKey {
    fn drop(&mut self) {
        let _ = rustix::termios::tcsetattr(
            std::io::stdin(),
            rustix::termios::OptionalActions::Now,
            &self.0,
        );
    }
}

/// Where a read is in an escape sequence (an arrow key: ESC `[` `A`), which is no answer.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Escape {
    None,
    /// ESC came.
    Started,
    /// ESC `[` or ESC `O` came: bytes up to the final one (`@` to `~`) belong to it.
    Sequence,
}

impl Escape {
    /// Whether `byte` belongs to an escape sequence (and is dropped).
    fn swallows(&mut self, byte: u8) -> bool {
        match *self {
            Self::None => false,
            Self::Started => {
                *self = if matches!(byte, b'[' | b'O') {
                    Self::Sequence
                } else {
                    Self::None
                };
                true
            }
            Self::Sequence => {
                if (0x40..=0x7e).contains(&byte) {
                    *self = Self::None;
                }
                true
            }
        }
    }
}

/// A line's text, without its end.
fn text(line: &[u8]) -> String {
    String::from_utf8_lossy(line)
        .trim_end_matches(['\n', '\r'])
        .to_owned()
}
