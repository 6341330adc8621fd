//! Connection retry ([`RetryPolicy`]) with its constants in one place; its waits, like every
//! wait after failures in this crate (server restarts, model requests, tool retries), come
//! from `common::Backoff`.
//!
//! Connection retry with exponential backoff: 3 attempts, delays 0 s, 2 s, 4 s.

use std::{future::Future, time::Duration};

use common::Backoff;

use tracing::{info, warn};

/// Total attempts (1 initial + 2 retries).
pub const MCP_RETRY_ATTEMPTS: u32 = 3;
/// Delay before the first retry; each further retry doubles it.
pub const MCP_RETRY_BASE_DELAY: Duration = Duration::from_secs(2);

/// How often and how patiently to try connecting.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetryPolicy {
    /// Total attempts, at least 1.
    pub attempts: u32,
    /// Delay before the second attempt; doubled for each later one.
    pub base_delay: Duration,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        Self {
            attempts: MCP_RETRY_ATTEMPTS,
            base_delay: MCP_RETRY_BASE_DELAY,
        }
    }
}

impl RetryPolicy {
    /// The delay before attempt `attempt` (1-based): 0, then `base`, `2 × base`, ... (exact, no
    /// jitter: the schedule is part of the contract).
    pub fn delay_before(&self, attempt: u32) -> Duration {
        Backoff::exponential(self.base_delay, Duration::MAX).after(attempt.saturating_sub(1))
    }

    /// Runs `attempt` until it succeeds or the attempts run out, sleeping the backoff delays
    /// between tries and logging each. Returns the last error and the attempts made.
    ///
    /// # Errors
    /// The last attempt's error, when every attempt failed.
    pub async fn run<T, E: std::fmt::Display, F: Future<Output = Result<T, E>>>(
        &self,
        server: &str,
        attempt: impl FnMut(u32) -> F,
    ) -> Result<T, (E, u32)> {
        self.run_if(server, attempt, |_| true).await
    }

    /// [`RetryPolicy::run`], trying again only after an error `retryable` accepts: one it
    /// refuses (a failure that would repeat, such as a missing program) ends the run at once,
    /// without the delays or the warnings of attempts that cannot succeed.
    ///
    /// # Errors
    /// The last attempt's error, when every attempt failed or one failed for good.
    pub async fn run_if<T, E: std::fmt::Display, F: Future<Output = Result<T, E>>>(
        &self,
        server: &str,
        mut attempt: impl FnMut(u32) -> F,
        retryable: impl Fn(&E) -> bool,
    ) -> Result<T, (E, u32)> {
        let attempts = self.attempts.max(1);
        let mut number = 1;
        loop {
            let delay = self.delay_before(number);
            if !delay.is_zero() {
                tokio::time::sleep(delay).await;
            }
            info!(server, attempt = number, of = attempts, delay = ?delay, "connecting to MCP server");
            match attempt(number).await {
                Ok(value) => {
                    info!(server, "MCP connection succeeded on attempt {number}");
                    return Ok(value);
                }
                Err(err) if number < attempts && retryable(&err) => {
                    warn!(server, attempt = number, error = %err, retry_in = ?self.delay_before(number + 1), "MCP connection attempt failed");
                }
                Err(err) => {
                    if number < attempts {
                        info!(
                            server,
                            attempt = number,
                            "not trying again: the next attempt would fail the same way"
                        );
                    }
                    return Err((err, number));
                }
            }
            number += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::{Arc, Mutex};

    use super::*;

    #[test]
    fn the_default_schedule_is_0_2_4_seconds() {
        let policy = RetryPolicy::default();
        let delays: Vec<u64> = (1..=3).map(|n| policy.delay_before(n).as_secs()).collect();
        assert_eq!(delays, [0, 2, 4]);
    }

    // Exponential backoff delays
    #[tokio::test(start_paused = true)]
    async fn attempts_happen_at_0_2_and_6_seconds_then_give_up() {
        let start = tokio::time::Instant::now();
        let seen = Arc::new(Mutex::new(Vec::new()));
        let result: Result<(), (String, u32)> = RetryPolicy::default()
            .run("fake", |attempt| {
                let seen = Arc::clone(&seen);
                async move {
                    seen.lock()
                        .unwrap()
                        .push((attempt, start.elapsed().as_secs()));
                    Err(format!("refused {attempt}"))
                }
            })
            .await;
        assert_eq!(result.unwrap_err(), ("refused 3".to_owned(), 3));
        assert_eq!(*seen.lock().unwrap(), [(1, 0), (2, 2), (3, 6)]);
    }

    // Successful connection after retry
    #[tokio::test(start_paused = true)]
    async fn a_later_success_stops_retrying() {
        let start = tokio::time::Instant::now();
        let result = RetryPolicy::default()
            .run("fake", |attempt| async move {
                if attempt == 2 {
                    Ok(attempt)
                } else {
                    Err("not yet")
                }
            })
            .await;
        assert_eq!(result.unwrap(), 2);
        assert_eq!(start.elapsed(), Duration::from_secs(2));
    }

    #[tokio::test(start_paused = true)]
    async fn a_failure_that_would_repeat_is_not_retried() {
        let start = tokio::time::Instant::now();
        let result: Result<(), (&str, u32)> = RetryPolicy::default()
            .run_if(
                "fake",
                |_| async { Err("missing program") },
                |err: &&str| *err != "missing program",
            )
            .await;
        assert_eq!(result.unwrap_err(), ("missing program", 1));
        assert_eq!(start.elapsed(), Duration::ZERO);
    }
}
