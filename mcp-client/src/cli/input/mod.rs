//! Who reads stdin in `chat`, and how people are asked: one thread reads stdin for the
//! questions typed at the prompt, the approvals and a server's questions alike; the [`Desk`]
//! asks approvals and a server's questions one at a time.
//!
//! A read whose caller stopped waiting (Ctrl-C, a question withdrawn) is abandoned: what is
//! typed afterwards is never an answer to it. Before each prompt of an approval or a server's
//! question, what was typed before it showed is discarded (the terminal's input queue, and
//! whatever this thread read but nobody took): a `y` typed ahead never answers a question the
//! person had not seen. A pipe's lines are kept: a script's answers stay its answers.
//!
//! Questions on a terminal are read with a line editor (history, arrow keys); approvals
//! with a plain line read, their prompt on stderr.

use std::{
    io::{IsTerminal as _, Write as _},
    path::PathBuf,
    sync::{Arc, Mutex, PoisonError, mpsc},
    time::Duration,
};

use tokio::sync::oneshot;
use tokio_util::sync::CancellationToken;

use super::view::View;

/// What a read gave.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Line {
    /// A line, without its end.
    Text(String),
    /// Ctrl-C at the line editor.
    Interrupted,
    /// Ctrl-D, or stdin closed.
    End,
}

/// How to ask.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Ask {
    /// A question: the line editor on a terminal, kept in the prompt history.
    Question,
    /// A prompt of an approval or of a server's question, on stderr, answered with a plain
    /// line; on a terminal, what was typed before it showed is discarded first.
    Approval,
}

struct Request {
    ask: Ask,
    prompt: String,
    reply: oneshot::Sender<Line>,
}

/// What a Ctrl-C typed at a question does, called before the question gets its answer.
type OnInterrupt = Arc<std::sync::Mutex<Option<Box<dyn Fn() + Send + Sync>>>>;

/// The reader of stdin.
pub(super) struct Input {
    requests: mpsc::Sender<Request>,
    on_interrupt: OnInterrupt,
}

impl Input {
    /// Starts the thread that owns stdin. `editor`: use the line editor for questions (stdin
    /// is a terminal); `history`: where it keeps the questions asked.
    pub(super) fn start(editor: bool, history: Option<PathBuf>) -> Self {
        let (requests, incoming) = mpsc::channel::<Request>();
        let on_interrupt = OnInterrupt::default();
        let hook = Arc::clone(&on_interrupt);
        let spawned = std::thread::Builder::new()
            .name("stdin".into())
            .spawn(move || serve(&incoming, editor, history, &hook));
        if let Err(err) = spawned {
            tracing::error!(error = %err, "cannot start the thread that reads stdin");
        }
        Self {
            requests,
            on_interrupt,
        }
    }

    /// What a Ctrl-C typed at a question does (the terminal's signal is off while a question
    /// is read): called on this reader's thread before the question is answered, so what it
    /// cancels is cancelled before anything else happens.
    pub(super) fn on_interrupt(&self, hook: impl Fn() + Send + Sync + 'static) {
        *self
            .on_interrupt
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = Some(Box::new(hook));
    }

    /// Shows `prompt` and reads one line. When the caller stops waiting, a plain read is
    /// abandoned (within [`TICK`]): what is typed afterwards goes to the next prompt shown.
    pub(super) async fn read(&self, ask: Ask, prompt: &str) -> Line {
        let (reply, answer) = oneshot::channel();
        let request = Request {
            ask,
            prompt: prompt.to_owned(),
            reply,
        };
        if self.requests.send(request).is_err() {
            return Line::End;
        }
        answer.await.unwrap_or(Line::End)
    }
}

/// How often a plain read looks whether its caller still waits.
const TICK: Duration = Duration::from_millis(50);

fn serve(
    incoming: &mpsc::Receiver<Request>,
    editor: bool,
    history: Option<PathBuf>,
    on_interrupt: &OnInterrupt,
) {
    let mut editor = editor
        .then(|| rustyline::DefaultEditor::new().ok())
        .flatten()
        .map(|mut editor| {
            if let Some(path) = &history {
                let _ = editor.load_history(path);
            }
            editor
        });
    let mut stdin = Plain {
        terminal: std::io::stdin().is_terminal(),
        ..Plain::default()
    };
    while let Ok(request) = incoming.recv() {
        if request.reply.is_closed() {
            // Its caller left before its turn: nothing is shown for it.
            continue;
        }
        let line = match (request.ask, editor.as_mut()) {
            (Ask::Question, Some(editor)) => {
                // Bytes a plain read left behind were typed before this prompt showed.
                stdin.pending.clear();
                Some(edited(editor, history.as_ref(), &request.prompt))
            }
            (Ask::Question, None) => stdin.line(&request.reply),
            (Ask::Approval, _) => {
                // Key by key from before the prompt shows: a Ctrl-C typed at it is never the
                // terminal's signal racing the keys that follow it.
                let keys = stdin.terminal.then(KeyByKey::enter).flatten();
                stdin.discard_typed_ahead();
                eprint!("{}", request.prompt);
                let _ = std::io::stderr().flush();
                let answer = match &keys {
                    Some(_) => stdin.keys(&request.reply, on_interrupt),
                    None => stdin.line(&request.reply),
                };
                drop(keys);
                answer
            }
        };
        // None: the caller stopped waiting, and the read was abandoned.
        if let Some(line) = line
            && let Err(Line::Text(text)) = request.reply.send(line)
        {
            // The caller left as the line came: a pipe's line goes to the next reader.
            stdin.unread(text);
        }
    }
}

fn edited(editor: &mut rustyline::DefaultEditor, history: Option<&PathBuf>, prompt: &str) -> Line {
    match editor.readline(prompt) {
        Ok(line) => {
            let _ = editor.add_history_entry(line.as_str());
            if let Some(path) = history {
                let _ = editor.save_history(path);
            }
            Line::Text(line)
        }
        Err(rustyline::error::ReadlineError::Interrupted) => Line::Interrupted,
        Err(_) => Line::End,
    }
}

/// Plain line reads of stdin, by this thread alone, through a buffer of its own (so a read can
/// stop waiting, and what it read ahead can be dropped).
#[derive(Default)]
struct Plain {
    /// Stdin is a terminal.
    terminal: bool,
    /// Read, not yet handed out.
    pending: Vec<u8>,
    /// Stdin ended (Ctrl-D at a terminal, the end of a pipe).
    ended: bool,
}

impl Plain {
    /// On a terminal, drops whatever was typed before now: the terminal's input queue
    /// (`tcflush(TCIFLUSH)`) and what was read but not handed out. A Ctrl-D typed then is
    /// forgotten too. A pipe keeps its lines.
    fn discard_typed_ahead(&mut self) {
        if !self.terminal {
            return;
        }
        self.pending.clear();
        self.ended = false;
        let _ = rustix::termios::tcflush(std::io::stdin(), rustix::termios::QueueSelector::IFlush);
    }

    /// Gives a line back, for the next reader, on a pipe; on a terminal it was typed for a
    /// question that is gone, and is dropped.
    fn unread(&mut self, text: String) {
        if !self.terminal {
            let mut line = text.into_bytes();
            line.push(b'\n');
            line.append(&mut self.pending);
            self.pending = line;
        }
    }

    /// The next line; `None` when `reply`'s caller stopped waiting first.
    fn line(&mut self, reply: &oneshot::Sender<Line>) -> Option<Line> {
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
    /// does what the signal would have done ([`Input::on_interrupt`]), before the answer.
    fn keys(&mut self, reply: &oneshot::Sender<Line>, on_interrupt: &OnInterrupt) -> Option<Line> {
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
struct KeyByKey(rustix::termios::Termios);

impl KeyByKey {
    /// `None` when stdin's modes cannot be read or set (then lines are read as they come).
    fn enter() -> Option<Self> {
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

/// Most questions at the desk at once, the one asked included; more are refused.
pub(super) const MOST_QUESTIONS: usize = 8;

/// How a question at the [`Desk`] went.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Asked<T> {
    /// Its prompts gave this.
    Answered(T),
    /// Ctrl-C, while it was on the screen (`true`) or still waiting its turn.
    Interrupted(bool),
    /// No longer needed (the call that asked it ended), on the screen (`true`) or before.
    Withdrawn(bool),
    /// [`MOST_QUESTIONS`] were at the desk already.
    Refused,
}

/// Asks approvals and a server's questions one at a time, in the order they came, each with
/// its words right above its prompt; the spinner is held and the agent's lines kept back
/// meanwhile (nothing is written into a line the person is typing). Ctrl-C dismisses every
/// question at the desk.
pub(super) struct Desk {
    view: Arc<View>,
    state: Mutex<DeskState>,
    /// Held by the question on the screen; tokio's lock is fair, so questions go in order.
    turn: tokio::sync::Mutex<()>,
}

struct DeskState {
    /// Questions at the desk: on the screen or waiting.
    questions: usize,
    /// Cancelled by Ctrl-C, then replaced: what every question at the desk then watches.
    interrupt: CancellationToken,
    /// A question's line is on the screen, not ended by the person's Enter.
    open_line: bool,
}

impl Desk {
    pub(super) fn new(view: Arc<View>) -> Self {
        Self {
            view,
            state: Mutex::new(DeskState {
                questions: 0,
                interrupt: CancellationToken::new(),
                open_line: false,
            }),
            turn: tokio::sync::Mutex::new(()),
        }
    }

    fn state(&self) -> std::sync::MutexGuard<'_, DeskState> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Asks one question once the ones before it are done: `words` (if any) on a line, then
    /// `prompts` (its reads of stdin) run. Refused when [`MOST_QUESTIONS`] are at the desk;
    /// withdrawn, asked or not, when `withdrawn` is cancelled; dismissed by Ctrl-C.
    pub(super) async fn ask<T>(
        &self,
        words: Option<&str>,
        withdrawn: &CancellationToken,
        prompts: impl Future<Output = T>,
    ) -> Asked<T> {
        let interrupt = {
            let mut state = self.state();
            if state.questions >= MOST_QUESTIONS {
                return Asked::Refused;
            }
            state.questions += 1;
            state.interrupt.clone()
        };
        let _at_desk = AtDesk(self);
        let _turn = tokio::select! {
            biased;
            () = interrupt.cancelled() => return Asked::Interrupted(false),
            () = withdrawn.cancelled() => return Asked::Withdrawn(false),
            turn = self.turn.lock() => turn,
        };
        let on_screen = OnScreen::show(self, words);
        tokio::select! {
            biased;
            () = interrupt.cancelled() => Asked::Interrupted(true),
            () = withdrawn.cancelled() => Asked::Withdrawn(true),
            answer = prompts => {
                on_screen.answered();
                Asked::Answered(answer)
            }
        }
    }

    /// Ctrl-C: every question at the desk is dismissed, and the line of the one on the screen
    /// ended. Whether there was any.
    pub(super) fn interrupt(&self) -> bool {
        let mut state = self.state();
        if state.open_line {
            eprintln!();
            state.open_line = false;
        }
        state.interrupt.cancel();
        state.interrupt = CancellationToken::new();
        state.questions > 0
    }

    /// A line on stderr, kept back while a question is on the screen.
    pub(super) fn note(&self, line: &str) {
        self.view.notice(line);
    }
}

/// A question at the desk: it leaves when dropped.
struct AtDesk<'a>(&'a Desk);

impl Drop for AtDesk<'_> {
    fn drop(&mut self) {
        let mut state = self.0.state();
        state.questions = state.questions.saturating_sub(1);
    }
}

/// A question on the screen: the view held (no spinner, the agent's lines kept back) until
/// dropped; its line ended then if the person did not end it.
struct OnScreen<'a>(&'a Desk);

impl<'a> OnScreen<'a> {
    fn show(desk: &'a Desk, words: Option<&str>) -> Self {
        desk.view.hold();
        if let Some(words) = words {
            eprintln!("{}", common::printable(words));
        }
        desk.state().open_line = true;
        Self(desk)
    }

    /// The person answered: their Enter ended the line.
    fn answered(&self) {
        self.0.state().open_line = false;
    }
}

impl Drop for OnScreen<'_> {
    fn drop(&mut self) {
        {
            let mut state = self.0.state();
            if state.open_line {
                eprintln!();
                state.open_line = false;
            }
        }
        self.0.view.release();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn desk() -> Arc<Desk> {
        Arc::new(Desk::new(Arc::new(View::new(true, 1))))
    }

    #[tokio::test]
    async fn one_question_at_a_time_in_order_and_at_most_eight() {
        let desk = desk();
        let never = CancellationToken::new();
        let (first_done, first_answer) = oneshot::channel::<u32>();
        let first = tokio::spawn({
            let (desk, never) = (Arc::clone(&desk), never.clone());
            async move {
                desk.ask(None, &never, async { first_answer.await.unwrap_or(0) })
                    .await
            }
        });
        let mut waiting = Vec::new();
        for n in 2..=MOST_QUESTIONS {
            tokio::task::yield_now().await;
            let (desk, never) = (Arc::clone(&desk), never.clone());
            waiting.push(tokio::spawn(async move {
                desk.ask(None, &never, async move { u32::try_from(n).unwrap_or(0) })
                    .await
            }));
        }
        for _ in 0..10 {
            tokio::task::yield_now().await;
        }
        // The first holds the screen; the others wait; a ninth is refused.
        assert!(waiting.iter().all(|task| !task.is_finished()));
        assert_eq!(desk.ask(None, &never, async { 9 }).await, Asked::Refused);
        first_done.send(1).unwrap();
        assert_eq!(first.await.unwrap(), Asked::Answered(1));
        for (n, task) in (2..).zip(waiting) {
            assert_eq!(task.await.unwrap(), Asked::Answered(n));
        }
        assert_eq!(
            desk.ask(None, &never, async { 10 }).await,
            Asked::Answered(10)
        );
    }

    #[tokio::test]
    async fn ctrl_c_dismisses_every_question_and_a_withdrawn_one_is_not_asked() {
        let desk = desk();
        let never = CancellationToken::new();
        let on_screen = tokio::spawn({
            let (desk, never) = (Arc::clone(&desk), never.clone());
            async move { desk.ask(None, &never, std::future::pending::<()>()).await }
        });
        tokio::task::yield_now().await;
        let withdrawn = CancellationToken::new();
        let asked = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let ended_call = tokio::spawn({
            let (desk, withdrawn, asked) =
                (Arc::clone(&desk), withdrawn.clone(), Arc::clone(&asked));
            async move {
                desk.ask(None, &withdrawn, async move {
                    asked.store(true, std::sync::atomic::Ordering::SeqCst);
                })
                .await
            }
        });
        let waiting = tokio::spawn({
            let (desk, never) = (Arc::clone(&desk), never.clone());
            async move { desk.ask(None, &never, std::future::pending::<()>()).await }
        });
        for _ in 0..10 {
            tokio::task::yield_now().await;
        }
        withdrawn.cancel();
        assert_eq!(ended_call.await.unwrap(), Asked::Withdrawn(false));
        assert!(!asked.load(std::sync::atomic::Ordering::SeqCst));
        assert!(desk.interrupt());
        assert_eq!(on_screen.await.unwrap(), Asked::Interrupted(true));
        assert_eq!(waiting.await.unwrap(), Asked::Interrupted(false));
        assert!(!desk.interrupt(), "nobody was waiting any more");
        // A question after Ctrl-C is asked as usual.
        assert_eq!(
            desk.ask(None, &never, async { 1 }).await,
            Asked::Answered(1)
        );
    }
}
