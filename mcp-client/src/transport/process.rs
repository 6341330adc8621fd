//! A spawned server's process group: its exit, its shutdown, and the rules that keep signals
//! on the right processes.
//!
//! - **Reaping**: the reaper learns of the leader's exit (`waitid` with `WNOWAIT` on each
//!   SIGCHLD) *without* reaping it,
//!   kills what the leader left in its group while the leader is a zombie (its pid, hence the
//!   group id, cannot be reused then), and only then reaps it. Once reaped, the group is never
//!   signalled again: the number may belong to someone else by then.
//! - **Parent death**: on Linux the server runs under `setpriv --pdeathsig KILL`, so a host
//!   killed with SIGKILL (no Drop, no signal handler) still takes its servers with it. The
//!   kernel sends that signal when the *thread* that spawned the child ends; tokio's worker
//!   threads and `block_on`'s thread live as long as the runtime, which is what we want.
//! - **Host signals**: every live group is registered in the host's [`ServerProcesses`], so a
//!   host that receives SIGINT or SIGTERM can stop them all with
//!   [`ServerProcesses::shutdown_all`] before exiting. The registry is a value the host owns
//!   (a host may run two pools, each with its own), never a process-wide static.

use std::{
    path::{Path, PathBuf},
    process::ExitStatus,
    sync::{Arc, Mutex, PoisonError, Weak},
    time::Duration,
};

use rustix::process::{Pid, Signal};
use tokio::{
    process::{Child, ChildStdin},
    sync::watch,
};
use tracing::{debug, warn};

use super::{ReadCounts, ReadStats, StderrTail};

/// How long shutdown waits after closing stdin, and again after SIGTERM.
pub const SHUTDOWN_GRACE: Duration = Duration::from_secs(2);

/// How a server process ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Exit {
    /// It ended with this status (an exit code or a signal).
    Status(ExitStatus),
    /// Waiting for it failed, so how it ended is unknown; the reason says why.
    Unknown(String),
}

impl Exit {
    /// Whether it exited with code 0.
    pub fn success(&self) -> bool {
        matches!(self, Self::Status(status) if status.success())
    }

    /// Whether it was killed with SIGKILL (it ignored both stdin closing and SIGTERM).
    pub fn killed(&self) -> bool {
        use std::os::unix::process::ExitStatusExt as _;
        matches!(self, Self::Status(status) if status.signal() == Some(Signal::KILL.as_raw()))
    }
}

impl From<ExitStatus> for Exit {
    fn from(status: ExitStatus) -> Self {
        Self::Status(status)
    }
}

/// "exit status: 1", "signal: 9 (SIGKILL)", or "unknown (why waiting failed)".
impl std::fmt::Display for Exit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Status(status) => status.fmt(f),
            Self::Unknown(reason) => write!(f, "unknown ({reason})"),
        }
    }
}

/// The part of a server process that shutdown, the reaper and the registry share.
#[derive(Debug)]
pub(super) struct Group {
    name: Arc<str>,
    pid: Option<Pid>,
    pub(super) stdin: Arc<tokio::sync::Mutex<Option<ChildStdin>>>,
    exit: watch::Receiver<Option<Exit>>,
    /// Whether the leader was reaped; held while signalling, so reaping waits for a signal
    /// being sent and no signal is sent after it.
    reaped: Arc<Mutex<bool>>,
}

/// The server processes a host started and still holds, so that it can stop them all at once
/// when it is asked to stop (SIGINT, SIGTERM), whatever its connections are doing. Clones share
/// one registry; a process leaves it when its [`ServerProcess`] is dropped.
#[derive(Debug, Clone, Default)]
pub struct ServerProcesses {
    groups: Arc<Mutex<Vec<Weak<Group>>>>,
}

impl ServerProcesses {
    /// An empty registry.
    pub fn new() -> Self {
        Self::default()
    }

    fn register(&self, group: &Arc<Group>) {
        let mut live = self.groups.lock().unwrap_or_else(PoisonError::into_inner);
        live.retain(|group| group.strong_count() > 0);
        live.push(Arc::downgrade(group));
    }

    fn held(&self) -> Vec<Arc<Group>> {
        self.groups
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .iter()
            .filter_map(Weak::upgrade)
            .collect()
    }

    /// How many processes are registered and still held (running or not yet reaped).
    pub fn len(&self) -> usize {
        self.held().len()
    }

    /// Whether no process is held.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Stops every process held here, concurrently, as [`ServerProcess::shutdown`] does: what a
    /// host does when it is asked to stop.
    pub async fn shutdown_all(&self) {
        let mut stops = tokio::task::JoinSet::new();
        for group in self.held() {
            stops.spawn(async move { group.shutdown().await });
        }
        while stops.join_next().await.is_some() {}
    }
}

impl Group {
    /// Sends `signal` to the group, unless its leader has been reaped. Returns whether it did.
    fn signal(&self, signal: Signal) -> bool {
        let Some(pid) = self.pid else {
            return false;
        };
        let reaped = self.reaped.lock().unwrap_or_else(PoisonError::into_inner);
        if *reaped {
            debug!(server = %self.name, ?signal, "not signalling a reaped process group");
            return false;
        }
        rustix::process::kill_process_group(pid, signal).is_ok()
    }

    async fn wait_exit(&self, timeout: Duration) -> Option<Exit> {
        let mut exit = self.exit.clone();
        match tokio::time::timeout(timeout, exit.wait_for(Option::is_some)).await {
            Ok(Ok(exit)) => exit.clone(),
            _ => self.exit.borrow().clone(),
        }
    }

    /// Close stdin, wait, SIGTERM, wait, SIGKILL: see [`ServerProcess::shutdown`].
    async fn shutdown(&self) -> Option<Exit> {
        // A write blocked on a server that stops reading holds the stdin lock: do not wait for
        // it longer than the grace, go on to the signals (they end that write too).
        match tokio::time::timeout(SHUTDOWN_GRACE, self.stdin.lock()).await {
            Ok(mut stdin) => drop(stdin.take()),
            Err(_) => {
                warn!(server = %self.name, "stdin is blocked by a write the server does not read; stopping it with signals")
            }
        }
        if let Some(exit) = self.wait_exit(SHUTDOWN_GRACE).await {
            return Some(exit);
        }
        self.signal(Signal::TERM);
        if let Some(exit) = self.wait_exit(SHUTDOWN_GRACE).await {
            return Some(exit);
        }
        self.signal(Signal::KILL);
        self.wait_exit(SHUTDOWN_GRACE).await
    }
}

/// A running (or ended) server process: its identity, stderr, counters and exit.
#[derive(Debug)]
pub struct ServerProcess {
    command: String,
    group: Arc<Group>,
    stderr: Arc<StderrTail>,
    /// Becomes true when stderr has been read to its end.
    stderr_drained: watch::Receiver<bool>,
    stats: Arc<ReadStats>,
}

impl ServerProcess {
    /// Registers a spawned `child` in `registry` and starts its reaper; `stderr_drained` turns
    /// true when the task draining its stderr into `stderr` has read it to the end.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn start(
        registry: &ServerProcesses,
        name: Arc<str>,
        command: String,
        child: Child,
        stdin: Arc<tokio::sync::Mutex<Option<ChildStdin>>>,
        stderr: Arc<StderrTail>,
        stderr_drained: watch::Receiver<bool>,
        stats: Arc<ReadStats>,
    ) -> Self {
        let pid = child
            .id()
            .and_then(|pid| i32::try_from(pid).ok())
            .and_then(Pid::from_raw);
        let (exit_tx, exit_rx) = watch::channel(None);
        let reaped = Arc::new(Mutex::new(false));
        tokio::spawn(reap(
            Arc::clone(&name),
            child,
            pid,
            Arc::clone(&reaped),
            exit_tx,
        ));
        let group = Arc::new(Group {
            name,
            pid,
            stdin,
            exit: exit_rx,
            reaped,
        });
        registry.register(&group);
        Self {
            command,
            group,
            stderr,
            stderr_drained,
            stats,
        }
    }

    /// The server's name.
    pub fn name(&self) -> &str {
        &self.group.name
    }

    /// The command line it was started with.
    pub fn command(&self) -> &str {
        &self.command
    }

    /// Its process id (also its process group id).
    pub fn pid(&self) -> Option<u32> {
        self.group
            .pid
            .and_then(|pid| u32::try_from(pid.as_raw_nonzero().get()).ok())
    }

    /// Its stderr tail.
    pub fn stderr(&self) -> &StderrTail {
        &self.stderr
    }

    /// Waits at most `timeout` for its stderr to be read to the end, so that the tail holds
    /// everything a server that exited wrote (the tail is filled by a task of its own, which
    /// may not have read the last lines yet when the exit is known). Returns whether it was.
    pub async fn stderr_drained(&self, timeout: Duration) -> bool {
        let mut drained = self.stderr_drained.clone();
        matches!(
            tokio::time::timeout(timeout, drained.wait_for(|done| *done)).await,
            Ok(Ok(_))
        )
    }

    /// Its stdout counters.
    pub fn counts(&self) -> ReadCounts {
        self.stats.counts()
    }

    /// The last stdout lines dropped, as `<kind>: <preview>`.
    pub fn dropped_lines(&self) -> Vec<String> {
        self.stats.recent()
    }

    /// Why tools were left out of its `tools/list` answers (nested too deep), the last 20.
    pub fn tools_left_out(&self) -> Vec<String> {
        self.stats.tools_left_out()
    }

    /// How it ended, if it has.
    pub fn exit(&self) -> Option<Exit> {
        self.group.exit.borrow().clone()
    }

    /// Waits at most `timeout` for the process to end; returns how it ended.
    pub async fn wait_exit(&self, timeout: Duration) -> Option<Exit> {
        self.group.wait_exit(timeout).await
    }

    /// Stops the server as the MCP spec says: close stdin, wait, SIGTERM to its process group,
    /// wait, SIGKILL. Returns how it ended. What the server left in its group is killed when
    /// it exits.
    pub async fn shutdown(&self) -> Option<Exit> {
        self.group.shutdown().await
    }

    /// Sends `signal` to the server's process group, unless the server was reaped already
    /// (its group id may be reused from then on). Returns whether the signal was sent.
    pub fn signal_group(&self, signal: Signal) -> bool {
        self.group.signal(signal)
    }
}

impl Drop for ServerProcess {
    fn drop(&mut self) {
        // No orphans: whatever the server started goes with it.
        self.group.signal(Signal::KILL);
    }
}

/// Waits for the leader to exit, kills what it left in its group, then reaps it.
async fn reap(
    name: Arc<str>,
    mut child: Child,
    pid: Option<Pid>,
    reaped: Arc<Mutex<bool>>,
    exit_tx: watch::Sender<Option<Exit>>,
) {
    let status = match pid.map(wait_unreaped) {
        Some(waiting) => match waiting.await {
            Ok(()) => {
                // The leader is a zombie: its group id is still ours.
                let mut reaped = reaped.lock().unwrap_or_else(PoisonError::into_inner);
                if let Some(pid) = pid {
                    let _ = rustix::process::kill_process_group(pid, Signal::KILL);
                }
                let status = child.try_wait();
                *reaped = true;
                status.map(|status| status.ok_or_else(|| std::io::Error::other("not exited")))
            }
            Err(err) => {
                debug!(server = %name, error = %err, "cannot wait without reaping; reaping");
                let status = child.wait().await;
                *reaped.lock().unwrap_or_else(PoisonError::into_inner) = true;
                Ok(status)
            }
        },
        None => Ok(child.wait().await),
    };
    let exit = match status.and_then(|status| status) {
        Ok(status) => Exit::from(status),
        Err(err) => Exit::Unknown(err.to_string()),
    };
    let _ = exit_tx.send(Some(exit));
}

/// Resolves once `pid` has exited, leaving it unreaped (a zombie until `try_wait`).
///
/// Each SIGCHLD wakes the check; the listener exists before the first check, so an exit
/// between the two is not missed.
async fn wait_unreaped(pid: Pid) -> std::io::Result<()> {
    use rustix::process::{WaitId, WaitIdOptions, waitid};
    let mut sigchld = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::child())?;
    let options = WaitIdOptions::EXITED | WaitIdOptions::NOHANG | WaitIdOptions::NOWAIT;
    loop {
        if waitid(WaitId::Pid(pid), options)?.is_some() {
            return Ok(());
        }
        if sigchld.recv().await.is_none() {
            return Err(std::io::Error::other("the SIGCHLD listener ended"));
        }
    }
}

/// `setpriv`, where the host has it: it sets the parent-death signal, then execs the server.
pub(super) fn parent_death_wrapper() -> Option<&'static Path> {
    static SETPRIV: std::sync::OnceLock<Option<PathBuf>> = std::sync::OnceLock::new();
    SETPRIV
        .get_or_init(|| {
            if !cfg!(target_os = "linux") {
                return None;
            }
            let found = ["/usr/bin/setpriv", "/bin/setpriv"]
                .into_iter()
                .map(PathBuf::from)
                .find(|path| path.is_file());
            if found.is_none() {
                warn!(
                    "setpriv (util-linux) not found: servers will not be killed if this host is killed with SIGKILL"
                );
            }
            found
        })
        .as_deref()
}

/// The file `program` names: itself when it holds a `/`, else the first executable file of
/// that name in `path` (a `PATH` value).
pub(super) fn find_program(program: &str, path: &str) -> Option<PathBuf> {
    if program.contains('/') {
        return Some(PathBuf::from(program));
    }
    std::env::split_paths(path)
        .map(|dir| dir.join(program))
        .find(|candidate| is_executable(candidate))
}

fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::metadata(path)
        .is_ok_and(|meta| meta.is_file() && meta.permissions().mode() & 0o111 != 0)
}

#[cfg(test)]
mod tests {
    use std::os::unix::process::ExitStatusExt as _;

    use super::*;

    #[test]
    fn an_exit_reads_as_its_status_or_says_why_it_is_unknown() {
        let killed = Exit::from(ExitStatus::from_raw(9));
        assert_eq!(killed.to_string(), "signal: 9 (SIGKILL)");
        assert!(killed.killed() && !killed.success());
        let ok = Exit::from(ExitStatus::from_raw(0));
        assert!(ok.success() && !ok.killed());
        let unknown = Exit::Unknown("No child processes (os error 10)".into());
        assert_eq!(
            unknown.to_string(),
            "unknown (No child processes (os error 10))"
        );
        assert!(!unknown.success() && !unknown.killed());
    }
}
