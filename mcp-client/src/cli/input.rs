//! Who reads stdin in `chat`: one thread, for the questions and the approval prompts alike.
//! Before, each read had a blocking thread of its own, and a read abandoned by Ctrl-C (an
//! approval of a cancelled question) stayed blocked on stdin and took the next line typed.
//! Here a line read for someone who stopped waiting is kept for the next reader, and only
//! one read is ever waiting on stdin.
//!
//! Questions on a terminal are read with a line editor (history, arrow keys); approvals
//! with a plain line read, their prompt on stderr.

use std::{
    io::{BufRead as _, Write as _},
    path::PathBuf,
    sync::mpsc,
};

use tokio::sync::oneshot;

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
    /// A yes/no prompt on stderr, answered with a plain line.
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
}

impl Input {
    /// Starts the thread that owns stdin. `editor`: use the line editor for questions (stdin
    /// is a terminal); `history`: where it keeps the questions asked.
    pub(super) fn start(editor: bool, history: Option<PathBuf>) -> Self {
        let (requests, incoming) = mpsc::channel::<Request>();
        let spawned = std::thread::Builder::new()
            .name("stdin".into())
            .spawn(move || serve(&incoming, editor, history));
        if let Err(err) = spawned {
            tracing::error!(error = %err, "cannot start the thread that reads stdin");
        }
        Self { requests }
    }

    /// Shows `prompt` and reads one line. When the caller stops waiting, the line still
    /// comes, and goes to the next caller.
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

fn serve(incoming: &mpsc::Receiver<Request>, editor: bool, history: Option<PathBuf>) {
    let mut editor = editor
        .then(|| rustyline::DefaultEditor::new().ok())
        .flatten()
        .map(|mut editor| {
            if let Some(path) = &history {
                let _ = editor.load_history(path);
            }
            editor
        });
    // A line read for a caller who stopped waiting, for the next one.
    let mut kept: Option<Line> = None;
    while let Ok(mut request) = incoming.recv() {
        loop {
            let line = match kept.take() {
                Some(line) => line,
                None => read(&mut editor, history.as_ref(), request.ask, &request.prompt),
            };
            match request.reply.send(line) {
                Ok(()) => break,
                Err(line) => {
                    kept = Some(line);
                    // That caller is gone: the next one gets the line.
                    match incoming.recv() {
                        Ok(next) => request = next,
                        Err(_) => return,
                    }
                }
            }
        }
    }
}

fn read(
    editor: &mut Option<rustyline::DefaultEditor>,
    history: Option<&PathBuf>,
    ask: Ask,
    prompt: &str,
) -> Line {
    match (ask, editor.as_mut()) {
        (Ask::Question, Some(editor)) => match editor.readline(prompt) {
            Ok(line) => {
                let _ = editor.add_history_entry(line.as_str());
                if let Some(path) = history {
                    let _ = editor.save_history(path);
                }
                Line::Text(line)
            }
            Err(rustyline::error::ReadlineError::Interrupted) => Line::Interrupted,
            Err(_) => Line::End,
        },
        (ask, _) => {
            if ask == Ask::Approval {
                eprint!("{prompt}");
                let _ = std::io::stderr().flush();
            }
            let mut line = String::new();
            match std::io::stdin().lock().read_line(&mut line) {
                Ok(0) | Err(_) => Line::End,
                Ok(_) => Line::Text(line.trim_end_matches(['\n', '\r']).to_owned()),
            }
        }
    }
}
