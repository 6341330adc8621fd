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
//!
//! | module | owns |
//! |---|---|
//! | this file | [`Input`]: the thread that owns stdin, and the line editor |
//! | `plain` | plain and key-by-key reads that can stop waiting, and what they give ([`Line`]) |
//! | `desk` | [`Desk`]: one question at a time on the screen |

mod desk;
mod plain;

use std::{
    io::{IsTerminal as _, Write as _},
    path::PathBuf,
    sync::{
        Arc, Mutex, PoisonError,
        atomic::{AtomicBool, Ordering},
        mpsc,
    },
};

use tokio::sync::oneshot;

pub(super) use desk::{Asked, Desk, MOST_QUESTIONS};
pub(super) use plain::Line;
use plain::{KeyByKey, OnInterrupt, Plain};

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

/// The reader of stdin.
pub(super) struct Input {
    requests: mpsc::Sender<Request>,
    on_interrupt: OnInterrupt,
    above: Above,
}

/// Prints a line above the question being typed in the line editor (it clears the prompt,
/// writes the line, and draws the prompt and what was typed again), while one is: the
/// editor's printer (on a terminal, once the editor is made) and whether it is reading.
#[derive(Clone, Default)]
struct Above {
    printer: Arc<Mutex<Option<Box<dyn rustyline::ExternalPrinter + Send>>>>,
    editing: Arc<AtomicBool>,
}

impl Input {
    /// Starts the thread that owns stdin. `editor`: use the line editor for questions (stdin
    /// is a terminal); `history`: where it keeps the questions asked.
    pub(super) fn start(editor: bool, history: Option<PathBuf>) -> Self {
        let (requests, incoming) = mpsc::channel::<Request>();
        let on_interrupt = OnInterrupt::default();
        let hook = Arc::clone(&on_interrupt);
        let above = Above::default();
        let editor_above = above.clone();
        let spawned = std::thread::Builder::new()
            .name("stdin".into())
            .spawn(move || serve(&incoming, (editor, &editor_above), history, &hook));
        if let Err(err) = spawned {
            tracing::error!(error = %err, "cannot start the thread that reads stdin");
        }
        Self {
            requests,
            on_interrupt,
            above,
        }
    }

    /// Prints `line` above the question being typed, if the line editor is reading one now;
    /// whether it did (if not, the caller shows it otherwise).
    pub(super) fn print_above_question(&self, line: &str) -> bool {
        if !self.above.editing.load(Ordering::SeqCst) {
            return false;
        }
        let mut printer = self
            .above
            .printer
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        printer
            .as_mut()
            .is_some_and(|printer| printer.print(format!("{line}\n")).is_ok())
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
    /// abandoned (within [`TICK`](plain::TICK)): what is typed afterwards goes to the next prompt shown.
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

fn serve(
    incoming: &mpsc::Receiver<Request>,
    (editor, above): (bool, &Above),
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
            // The editor draws on stdout: lines go above its prompt only when that is the
            // terminal too (never into an answer being saved).
            if std::io::stdout().is_terminal()
                && let Ok(printer) = editor.create_external_printer()
            {
                *above.printer.lock().unwrap_or_else(PoisonError::into_inner) =
                    Some(Box::new(printer));
            }
            editor
        });
    let mut stdin = Plain::new(std::io::stdin().is_terminal());
    while let Ok(request) = incoming.recv() {
        if request.reply.is_closed() {
            // Its caller left before its turn: nothing is shown for it.
            continue;
        }
        let line = match (request.ask, editor.as_mut()) {
            (Ask::Question, Some(editor)) => {
                // Bytes a plain read left behind were typed before this prompt showed.
                stdin.pending.clear();
                above.editing.store(true, Ordering::SeqCst);
                let line = edited(editor, history.as_ref(), &request.prompt);
                above.editing.store(false, Ordering::SeqCst);
                Some(line)
            }
            (Ask::Question, None) => stdin.line(&request.reply),
            (Ask::Approval, _) => {
                // Key by key from before the prompt shows: a Ctrl-C typed at it is never the
                // terminal's signal racing the keys that follow it.
                let keys = stdin.is_terminal().then(KeyByKey::enter).flatten();
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
