//! A server process a test starts and owns: its output in a log file, ready once its port
//! accepts connections, killed when dropped — and with the thread that started it
//! (`setpriv --pdeathsig`) if the test process dies first. So start it on a thread that
//! lives as long as it must: the test's own, never a pool thread (`spawn_blocking`), which
//! ends when idle and takes the server along.
#![allow(
    clippy::unwrap_used,
    reason = "test support: a failure to set up must stop the test loudly"
)]

use std::{
    net::TcpStream,
    path::PathBuf,
    process::{Child, Command, Stdio},
    time::{Duration, Instant},
};

use crate::mosquitto::ScratchDir;

/// A running server.
pub struct Daemon {
    child: Child,
    log: PathBuf,
    what: String,
    dir: ScratchDir,
}

impl Daemon {
    /// Starts `command` (niced, in `dir`, with `env`) and waits at most `limit` for it to
    /// accept connections on loopback `port`.
    ///
    /// # Panics
    /// When it cannot start, exits, or does not listen in time: with the end of its log.
    pub fn start(
        command: &Command,
        dir: ScratchDir,
        port: u16,
        what: &str,
        limit: Duration,
    ) -> Self {
        let mut daemon = Self::spawn(command, dir, what);
        daemon.wait_listening(port, limit);
        daemon
    }

    /// Starts `command` and waits at most `limit` until its output holds `text`: for a
    /// server whose port must not be probed (zwave-js's mock controller takes any connection
    /// for the driver's serial line).
    ///
    /// # Panics
    /// When it cannot start, exits, or does not say it in time: with the end of its log.
    pub fn start_until_logged(
        command: &Command,
        dir: ScratchDir,
        text: &str,
        what: &str,
        limit: Duration,
    ) -> Self {
        let mut daemon = Self::spawn(command, dir, what);
        let deadline = Instant::now() + limit;
        while !std::fs::read_to_string(&daemon.log)
            .unwrap_or_default()
            .contains(text)
        {
            daemon.check_alive();
            assert!(
                Instant::now() < deadline,
                "{} did not say {text:?} within {limit:?}:\n{}",
                daemon.what,
                daemon.log()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        daemon
    }

    fn check_alive(&mut self) {
        if let Ok(Some(status)) = self.child.try_wait() {
            panic!("{} exited ({status}):\n{}", self.what, self.log());
        }
    }

    fn spawn(command: &Command, dir: ScratchDir, what: &str) -> Self {
        let log = dir.path().join(format!("{}.log", what.replace(' ', "-")));
        let log_file = std::fs::File::create(&log).unwrap();
        let child = Command::new("setpriv")
            .args(["--pdeathsig", "KILL", "nice", "-n", "10"])
            .arg(command.get_program())
            .args(command.get_args())
            .envs(
                command
                    .get_envs()
                    .filter_map(|(key, value)| value.map(|value| (key, value))),
            )
            .current_dir(command.get_current_dir().unwrap_or(dir.path()))
            .stdin(Stdio::null())
            .stdout(log_file.try_clone().unwrap())
            .stderr(log_file)
            .spawn()
            .unwrap_or_else(|err| panic!("cannot start {what}: {err}"));
        Self {
            child,
            log,
            what: what.to_owned(),
            dir,
        }
    }

    fn wait_listening(&mut self, port: u16, limit: Duration) {
        let deadline = Instant::now() + limit;
        let addr = ([127, 0, 0, 1], port).into();
        while TcpStream::connect_timeout(&addr, Duration::from_millis(200)).is_err() {
            self.check_alive();
            assert!(
                Instant::now() < deadline,
                "{} did not listen on {addr} within {limit:?}:\n{}",
                self.what,
                self.log()
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// The last 40 lines it wrote (for a failing test's message).
    pub fn log(&self) -> String {
        let text = std::fs::read_to_string(&self.log).unwrap_or_default();
        let lines: Vec<&str> = text.lines().collect();
        lines[lines.len().saturating_sub(40)..].join("\n")
    }

    /// Its folder (its working directory unless the command set one).
    pub fn dir(&self) -> &std::path::Path {
        self.dir.path()
    }
}

impl Drop for Daemon {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
