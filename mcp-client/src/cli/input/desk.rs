//! The [`Desk`]: approvals and a server's questions asked one at a time, in the order they
//! came, each with its words right above its prompt, while the spinner is held and the
//! agent's lines kept back. Reading the answers is [`Input`](super::Input)'s business.

use std::sync::{Arc, Mutex, PoisonError};

use tokio_util::sync::CancellationToken;

use crate::cli::view::View;

/// Most questions at the desk at once, the one asked included; more are refused.
pub(in crate::cli) const MOST_QUESTIONS: usize = 8;

/// How a question at the [`Desk`] went.
#[derive(Debug, PartialEq, Eq)]
pub(in crate::cli) enum Asked<T> {
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
pub(in crate::cli) struct Desk {
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
    pub(in crate::cli) fn new(view: Arc<View>) -> Self {
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
    pub(in crate::cli) async fn ask<T>(
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
    pub(in crate::cli) fn interrupt(&self) -> bool {
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
    pub(in crate::cli) fn note(&self, line: &str) {
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
    use tokio::sync::oneshot;

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
