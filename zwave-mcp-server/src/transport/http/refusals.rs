//! [`Refusals`]: how often a kind of refused request is logged. A client without the token
//! can send thousands of requests a second; a line for each would fill the owner's disk
//! (`--log-dir`) and drown every other line, so each kind is logged at most once per
//! [`LOG_EVERY`], with how many were refused since its last line.

use std::{sync::Mutex, time::Duration};

use tokio::time::Instant;

/// The shortest time between two lines about one kind of refusal.
pub const LOG_EVERY: Duration = Duration::from_secs(10);

/// The refusals of one kind, and when the last was logged.
#[derive(Debug, Default)]
pub struct Refusals {
    /// Invariant: `unlogged` counts the refusals since the line at `logged` (none before the
    /// first line).
    state: Mutex<State>,
}

#[derive(Debug, Default)]
struct State {
    logged: Option<Instant>,
    unlogged: u64,
}

impl Refusals {
    /// Counts one refusal. When a line is due, returns how many refusals it reports (this
    /// one and those not logged since the last line); else `None`.
    pub fn count(&self) -> Option<u64> {
        let now = Instant::now();
        let mut state = self
            .state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        state.unlogged += 1;
        if state
            .logged
            .is_some_and(|logged| now.duration_since(logged) < LOG_EVERY)
        {
            return None;
        }
        state.logged = Some(now);
        Some(std::mem::take(&mut state.unlogged))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn a_burst_is_one_line_and_the_next_line_counts_what_was_not_logged() {
        let refusals = Refusals::default();
        assert_eq!(refusals.count(), Some(1), "the first is logged at once");
        for _ in 0..999 {
            assert_eq!(refusals.count(), None);
        }
        tokio::time::advance(LOG_EVERY - Duration::from_millis(1)).await;
        assert_eq!(refusals.count(), None);
        tokio::time::advance(Duration::from_millis(1)).await;
        assert_eq!(refusals.count(), Some(1001));
        tokio::time::advance(LOG_EVERY * 3).await;
        assert_eq!(
            refusals.count(),
            Some(1),
            "after a quiet time, at once again"
        );
    }
}
