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
    let shown = format!("{command:?}");
    let mut child = command
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|err| panic!("cannot start {shown}: {err}"));
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

/// [`run`] with nothing on stdin.
///
/// # Panics
/// As [`run`].
pub fn output(command: &mut Command, timeout: Duration) -> Output {
    run(command, &[], timeout)
}

#[cfg(test)]
mod tests {
    use super::*;

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
