//! Stopping the CLI on request: SIGINT, SIGTERM and SIGHUP end it only after its servers
//! have been stopped (close stdin, wait, SIGTERM, SIGKILL), so none is left running. A host
//! killed with SIGKILL runs no code at all; its servers die with it through their parent-death
//! signal (see [`crate::transport::process`]).
//!
//! The CLI races its command against [`stop_requested`], then stops the processes of its
//! [`crate::transport::ServerProcesses`]; a library host does the same with its own.

use tokio::signal::unix::{SignalKind, signal};

/// A signal that asks the host to stop.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StopSignal {
    /// SIGINT (Ctrl-C).
    Interrupt,
    /// SIGTERM.
    Terminate,
    /// SIGHUP (the terminal went away).
    Hangup,
}

impl StopSignal {
    /// The exit code shells use for a process ended by this signal (128 + its number).
    pub fn exit_code(self) -> u8 {
        match self {
            Self::Hangup => 129,
            Self::Interrupt => 130,
            Self::Terminate => 143,
        }
    }
}

/// Resolves when the host receives SIGTERM or SIGHUP, or SIGINT unless Ctrl-C means
/// something else: with `ctrl_c_taken`, a SIGINT counts only until that token is cancelled
/// (`chat`, once its own handler cancels questions with it; until then — while its servers
/// start, a sign-in waits — Ctrl-C stops it like any command).
///
/// # Errors
/// When the signal handlers cannot be installed.
pub async fn stop_requested(
    ctrl_c_taken: Option<tokio_util::sync::CancellationToken>,
) -> std::io::Result<StopSignal> {
    let mut terminate = signal(SignalKind::terminate())?;
    let mut hangup = signal(SignalKind::hangup())?;
    let mut ctrl_c = signal(SignalKind::interrupt())?;
    let interrupted = async {
        loop {
            ctrl_c.recv().await;
            match &ctrl_c_taken {
                Some(taken) if taken.is_cancelled() => {}
                _ => return,
            }
        }
    };
    Ok(tokio::select! {
        _ = terminate.recv() => StopSignal::Terminate,
        _ = hangup.recv() => StopSignal::Hangup,
        () = interrupted => StopSignal::Interrupt,
    })
}
