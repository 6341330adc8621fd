//! Shutdown: the server exits when stdin closes.

use std::time::Duration;

use super::report::{Outcome, Verdict};
use crate::session::{ANSWER_TIMEOUT, Session};

pub(super) async fn check_exit(session: &mut Session) -> Outcome {
    if session
        .request("ping", None, ANSWER_TIMEOUT)
        .await
        .is_none()
    {
        return (
            Verdict::Fail,
            "no answer to ping before closing stdin".into(),
        );
    }
    let before = session.violations().len();
    let exited = session.close_and_wait(Duration::from_secs(2)).await;
    let after = session.drain(Duration::from_millis(200)).await;
    let late = after.len() + session.violations().len() - before;
    match exited {
        None => (
            Verdict::Fail,
            "still running 2 s after stdin closed (killed)".into(),
        ),
        Some(_) if late > 0 => (
            Verdict::Fail,
            format!("wrote {late} messages to stdout after stdin closed"),
        ),
        Some(took) => (
            Verdict::Pass,
            format!(
                "exited {} ms after stdin closed, nothing written after",
                took.as_millis()
            ),
        ),
    }
}
