//! Running a child process to its end with a deadline: every read of its output is bounded,
//! so a test whose child hangs fails with the command and the time it was given instead of
//! hanging the suite.

use std::{
    io::Write as _,
    process::{Command, Output, Stdio},
    sync::mpsc,
    time::Duration,
};

/// Runs `command` with `stdin` written to it (then closed), and returns its output once it
/// exits. A child that stops reading early (it refused its start-up) is fine: the rest of
/// `stdin` is dropped.
///
/// # Panics
/// When it cannot be started, or has not exited within `timeout` (it is then killed).
pub fn run(command: &mut Command, stdin: &[u8], timeout: Duration) -> Output {
    let (mut child, shown) = spawn_piped(command);
    let pid = child.id();
    let mut pipe = child.stdin.take();
    let input = stdin.to_vec();
    // Written from its own thread: a child that writes much before reading would otherwise
    // block on a full stdout pipe while we block on its full stdin pipe.
    let writer = std::thread::spawn(move || {
        if let Some(pipe) = pipe.as_mut()
            && let Err(err) = pipe.write_all(&input)
        {
            assert_eq!(
                err.kind(),
                std::io::ErrorKind::BrokenPipe,
                "writing the child's stdin: {err}"
            );
        }
    });
    let (sender, receiver) = mpsc::channel();
    std::thread::spawn(move || sender.send(child.wait_with_output()));
    let output = match receiver.recv_timeout(timeout) {
        Ok(output) => output.unwrap_or_else(|err| panic!("cannot wait for {shown}: {err}")),
        Err(_) => {
            let _ = Command::new("kill").args(["-9", &pid.to_string()]).status();
            panic!("{shown} did not finish within {timeout:?}; killed it");
        }
    };
    // A failed write other than a closed pipe fails the test, from here.
    if let Err(panic) = writer.join() {
        std::panic::resume_unwind(panic);
    }
    output
}

/// Starts `command` with all three pipes; returns it and how it is shown in messages.
fn spawn_piped(command: &mut Command) -> (std::process::Child, String) {
    let shown = format!("{command:?}");
    let child = command
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|err| panic!("cannot start {shown}: {err}"));
    (child, shown)
}

/// [`run`] with nothing on stdin.
///
/// # Panics
/// As [`run`].
pub fn output(command: &mut Command, timeout: Duration) -> Output {
    run(command, &[], timeout)
}

/// Peak resident memory of a running process (`VmHWM` in `/proc/<pid>/status`), in KiB.
///
/// # Panics
/// When the process is gone, or the system has no such line (not Linux).
pub fn peak_rss_kib(pid: u32) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .unwrap_or_else(|err| panic!("/proc/{pid}/status: {err}"))
        .lines()
        .find_map(|line| line.strip_prefix("VmHWM:"))
        .and_then(|rest| rest.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or_else(|| panic!("/proc/{pid}/status has no VmHWM"))
}

/// A running child whose stdin a test writes piece by piece, while its stdout and stderr are
/// collected in the background (a full pipe never blocks it). Killed if dropped unfinished.
pub struct Live {
    child: Option<std::process::Child>,
    stdin: Option<std::process::ChildStdin>,
    shown: String,
    /// Stdout, line by line, as the child writes it.
    lines: mpsc::Receiver<Vec<u8>>,
    /// The stdout lines taken so far.
    seen: Vec<u8>,
    stderr: std::thread::JoinHandle<Vec<u8>>,
}

impl Live {
    /// Starts `command` with all three pipes.
    ///
    /// # Panics
    /// When it cannot be started.
    pub fn start(command: &mut Command) -> Self {
        let (mut child, shown) = spawn_piped(command);
        let drain = |mut pipe: Box<dyn std::io::Read + Send>| {
            std::thread::spawn(move || {
                let mut bytes = Vec::new();
                let _ = pipe.read_to_end(&mut bytes);
                bytes
            })
        };
        let stdout = child.stdout.take().expect("stdout is piped");
        let (sender, lines) = mpsc::channel();
        std::thread::spawn(move || {
            use std::io::BufRead as _;
            let mut reader = std::io::BufReader::new(stdout);
            loop {
                let mut line = Vec::new();
                match reader.read_until(b'\n', &mut line) {
                    Ok(0) | Err(_) => return,
                    Ok(_) => {
                        if sender.send(line).is_err() {
                            return;
                        }
                    }
                }
            }
        });
        let stderr = drain(Box::new(child.stderr.take().expect("stderr is piped")));
        Self {
            stdin: child.stdin.take(),
            child: Some(child),
            shown,
            lines,
            seen: Vec::new(),
            stderr,
        }
    }

    /// The child's process id.
    ///
    /// # Panics
    /// After [`Live::finish`].
    pub fn id(&self) -> u32 {
        self.child.as_ref().expect("running until finished").id()
    }

    /// The next line the child writes on stdout (with its newline), waiting at most `timeout`.
    ///
    /// # Panics
    /// When none comes within `timeout`, or stdout ended.
    pub fn read_line(&mut self, timeout: Duration) -> String {
        let line = self.lines.recv_timeout(timeout).unwrap_or_else(|err| {
            panic!(
                "no stdout line from {} within {timeout:?}: {err}",
                self.shown
            )
        });
        self.seen.extend_from_slice(&line);
        String::from_utf8_lossy(&line).into_owned()
    }

    /// Writes `bytes` to the child's stdin.
    ///
    /// # Panics
    /// When the child no longer reads its stdin.
    pub fn send(&mut self, bytes: &[u8]) {
        let pipe = self.stdin.as_mut().expect("stdin is open until finish");
        pipe.write_all(bytes)
            .and_then(|()| pipe.flush())
            .unwrap_or_else(|err| panic!("writing to {}: {err}", self.shown));
    }

    /// Closes stdin and returns the whole output once the child exits.
    ///
    /// # Panics
    /// When it has not exited within `timeout` (it is then killed).
    pub fn finish(mut self, timeout: Duration) -> Output {
        drop(self.stdin.take());
        let mut child = self.child.take().expect("finished once");
        let deadline = std::time::Instant::now() + timeout;
        let status = loop {
            match child.try_wait() {
                Ok(Some(status)) => break status,
                Ok(None) if std::time::Instant::now() < deadline => {
                    std::thread::sleep(Duration::from_millis(20));
                }
                _ => {
                    let _ = child.kill();
                    let _ = child.wait();
                    panic!(
                        "{} did not finish within {timeout:?}; killed it",
                        self.shown
                    );
                }
            }
        };
        let stderr = std::mem::replace(&mut self.stderr, std::thread::spawn(Vec::new))
            .join()
            .unwrap_or_default();
        let mut stdout = std::mem::take(&mut self.seen);
        // The reader ends with the child's stdout: what is left is in the channel.
        while let Ok(line) = self.lines.recv_timeout(Duration::from_secs(5)) {
            stdout.extend_from_slice(&line);
        }
        Output {
            status,
            stdout,
            stderr,
        }
    }
}

impl Drop for Live {
    fn drop(&mut self) {
        if let Some(child) = self.child.as_mut() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_live_child_gets_its_input_in_pieces_and_gives_back_everything() {
        let mut live = Live::start(Command::new("sh").args(["-c", "cat; echo done >&2"]));
        live.send(b"one\n");
        assert_eq!(live.read_line(Duration::from_secs(10)), "one\n");
        live.send(b"two\n");
        let output = live.finish(Duration::from_secs(10));
        assert!(output.status.success());
        assert_eq!(output.stdout, b"one\ntwo\n");
        assert_eq!(output.stderr, b"done\n");
    }

    #[test]
    fn the_output_of_a_child_that_reads_its_input_comes_back() {
        let output = run(
            Command::new("cat").arg("-"),
            b"one\ntwo\n",
            Duration::from_secs(10),
        );
        assert!(output.status.success());
        assert_eq!(output.stdout, b"one\ntwo\n");
    }

    #[test]
    fn a_child_that_ignores_its_input_is_fine() {
        let output = run(
            &mut Command::new("true"),
            &vec![b'x'; 1 << 20],
            Duration::from_secs(10),
        );
        assert!(output.status.success());
    }

    #[test]
    fn a_child_that_hangs_is_killed_and_named() {
        let outcome = std::panic::catch_unwind(|| {
            output(Command::new("sleep").arg("30"), Duration::from_millis(200))
        });
        let message = outcome.unwrap_err();
        let message = message
            .downcast_ref::<String>()
            .expect("the panic carries a message");
        assert_eq!(
            message,
            "\"sleep\" \"30\" did not finish within 200ms; killed it"
        );
    }
}
