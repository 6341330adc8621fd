//! How `chat` shows the agent's events: the answer on stdout as it streams, one line on
//! stderr per tool call (its arguments, duration and ✓/✗), refinements and why a question
//! stopped, a spinner while tools run (on a terminal only); or every event as a JSON line.

use std::{
    io::IsTerminal as _,
    sync::{Mutex, PoisonError},
    time::Duration,
};

use super::{emit, write_stdout};
use crate::agent::{AgentEvent, DoneReason};

/// Renders events: the answer on stdout, the agent's progress on stderr (or JSON lines).
pub(super) struct View {
    json: bool,
    max_turns: u32,
    /// A spinner while tools run, on a terminal only.
    terminal: bool,
    state: Mutex<ViewState>,
}

#[derive(Default)]
struct ViewState {
    /// The answer's text so far ends without a newline.
    open_line: bool,
    running: Vec<String>,
    spinner: Option<indicatif::ProgressBar>,
    /// Questions on the screen: no spinner is drawn while any is, and the lines noted
    /// meanwhile wait in `kept` (nothing is written into a line the person is typing).
    held: u32,
    kept: Vec<String>,
}

impl View {
    pub(super) fn new(json: bool, max_turns: u32) -> Self {
        Self {
            json,
            max_turns,
            terminal: !json && std::io::stderr().is_terminal(),
            state: Mutex::new(ViewState::default()),
        }
    }

    pub(super) fn show(&self, event: &AgentEvent) {
        if self.json {
            if let Ok(line) = serde_json::to_string(event) {
                emit(&line);
            }
            return;
        }
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        match event {
            AgentEvent::TextDelta { text } => {
                // Nothing may write under a spinner: its line would stay on screen.
                Self::stop_spinner(&mut state);
                write_stdout(text);
                state.open_line = !text.ends_with('\n');
            }
            AgentEvent::ToolCall { name, .. } => self.tool_started(&mut state, name),
            AgentEvent::ToolResult {
                name,
                normalized_args,
                success,
                duration_ms,
                text,
                ..
            } => {
                Self::close_line(&mut state);
                Self::tool_finished(&mut state, name);
                let mark = if *success { '✓' } else { '✗' };
                let detail = if *success {
                    String::new()
                } else {
                    format!(": {}", short(text.lines().next().unwrap_or_default()))
                };
                // What the server was sent (the model's names normalized), as approval showed.
                let line = format!(
                    "{mark} {} {} ({duration_ms} ms){detail}",
                    common::clip(name, 100),
                    short(&super::shown::escaped(
                        &normalized_args.to_string(),
                        super::shown::Quote::Json
                    ))
                );
                Self::note(&mut state, &line);
            }
            AgentEvent::ToolProgress {
                progress, total, ..
            } => {
                if let Some(spinner) = &state.spinner {
                    let of = total.map(|t| format!("/{t}")).unwrap_or_default();
                    spinner.set_message(format!(
                        "running {} ({progress}{of})",
                        state.running.join(", ")
                    ));
                }
            }
            AgentEvent::Refinement { iteration, tool } => {
                Self::close_line(&mut state);
                Self::note(
                    &mut state,
                    &format!(
                        "Model requesting refinement search (iteration {iteration}, tool {})",
                        common::clip(tool, 100)
                    ),
                );
            }
            AgentEvent::TurnFinished { .. } => {}
            AgentEvent::EmptyAnswer => {
                Self::close_line(&mut state);
                Self::note(
                    &mut state,
                    "warning: the model's answer is empty (the model server may have failed mid-answer)",
                );
            }
            AgentEvent::Error { message } => {
                Self::stop_spinner(&mut state);
                Self::close_line(&mut state);
                Self::note(&mut state, &format!("error: {message}"));
            }
            AgentEvent::Done { reason, .. } => {
                // The last event: whatever still shows as running (calls cut short by a
                // cancel) is no longer.
                Self::stop_spinner(&mut state);
                state.running.clear();
                Self::close_line(&mut state);
                let stopped = self.why_stopped(*reason);
                if let Some(line) = stopped {
                    Self::note(&mut state, &line);
                }
            }
        }
    }

    /// A call starts: it joins the spinner's list (on a terminal).
    fn tool_started(&self, state: &mut ViewState, name: &str) {
        Self::close_line(state);
        // A name is what the model wrote: shown one line long and without controls.
        state.running.push(common::clip(name, 100));
        self.draw_spinner(state);
    }

    /// The spinner for the calls running, on a terminal, unless a prompt holds it.
    fn draw_spinner(&self, state: &mut ViewState) {
        if !self.terminal || state.held > 0 || state.running.is_empty() {
            return;
        }
        let message = format!("running {}", state.running.join(", "));
        let spinner = state.spinner.get_or_insert_with(|| {
            let bar = indicatif::ProgressBar::new_spinner();
            bar.set_draw_target(indicatif::ProgressDrawTarget::stderr());
            bar.enable_steady_tick(Duration::from_millis(100));
            bar
        });
        spinner.set_message(message);
    }

    /// A question is about to be shown: the spinner goes (its line cleared), the answer's
    /// open line is ended, and the lines noted meanwhile are kept back, until released.
    pub(super) fn hold(&self) {
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        state.held += 1;
        Self::stop_spinner(&mut state);
        Self::close_line(&mut state);
    }

    /// The question is done: the lines kept back are written, and the spinner comes back if
    /// calls are still running.
    pub(super) fn release(&self) {
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        state.held = state.held.saturating_sub(1);
        if state.held == 0 {
            for line in std::mem::take(&mut state.kept) {
                eprintln!("{line}");
            }
        }
        self.draw_spinner(&mut state);
    }

    /// A line on stderr from outside the agent (a question refused or withdrawn), kept back
    /// while a question is on the screen.
    pub(super) fn notice(&self, line: &str) {
        Self::note(
            &mut self.state.lock().unwrap_or_else(PoisonError::into_inner),
            line,
        );
    }

    /// A call ended: it leaves the list, and the spinner goes with the last one (before the
    /// call's line is written, so it is not drawn again under it).
    fn tool_finished(state: &mut ViewState, name: &str) {
        let name = common::clip(name, 100);
        if let Some(position) = state.running.iter().position(|n| *n == name) {
            state.running.remove(position);
        }
        if state.running.is_empty() {
            Self::stop_spinner(state);
        } else if let Some(spinner) = &state.spinner {
            spinner.set_message(format!("running {}", state.running.join(", ")));
        }
    }

    /// The note for a question that ended short of an answer, if it did.
    fn why_stopped(&self, reason: DoneReason) -> Option<String> {
        match reason {
            DoneReason::MaxTurnsReached => Some(format!(
                "stopped: max turns reached ({}); ask again to continue, or raise --max-turns",
                self.max_turns
            )),
            DoneReason::TokenBudgetReached => Some(
                "stopped: another turn would go past the token budget (--token-budget)".to_owned(),
            ),
            DoneReason::Cancelled => Some("cancelled".to_owned()),
            DoneReason::Truncated => Some(
                "stopped: the answer was cut off at the output token limit; raise --max-tokens"
                    .to_owned(),
            ),
            DoneReason::Completed | DoneReason::Error => None,
        }
    }

    fn stop_spinner(state: &mut ViewState) {
        if let Some(spinner) = state.spinner.take() {
            spinner.finish_and_clear();
        }
    }

    fn close_line(state: &mut ViewState) {
        if state.open_line {
            write_stdout("\n");
            state.open_line = false;
        }
    }

    /// Ends the answer's last line on stdout.
    pub(super) fn end_answer(&self) {
        if !self.json {
            Self::close_line(&mut self.state.lock().unwrap_or_else(PoisonError::into_inner));
        }
    }

    /// One line on stderr, above the spinner if one is showing; kept back while a question
    /// is on the screen.
    fn note(state: &mut ViewState, line: &str) {
        let line = common::printable(line);
        if state.held > 0 {
            state.kept.push(line.into_owned());
            return;
        }
        match &state.spinner {
            Some(spinner) => spinner.suspend(|| eprintln!("{line}")),
            None => eprintln!("{line}"),
        }
    }
}

fn short(text: &str) -> String {
    common::clip(text, 160)
}
