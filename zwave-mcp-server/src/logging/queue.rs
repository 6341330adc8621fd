//! [`Queued`]: a writer whose lines go through a bounded queue to a thread of their own, so a
//! slow or stuck output (a host that never reads our stderr) can never block the caller. A
//! line that finds the queue full is dropped and counted. At exit the thread is given a
//! second to write what is queued, and is then left behind: nothing here ever blocks for
//! longer, and nothing is printed anywhere else (tracing-appender's worker guard, used before,
//! prints to stdout when its queue is full and then waits on that write: with fd 1 pointing at
//! a full stderr pipe, the server never exited).

use std::{
    io::Write,
    sync::{
        Arc,
        atomic::{AtomicUsize, Ordering},
        mpsc::{Receiver, SyncSender, TrySendError, sync_channel},
    },
    time::Duration,
};

/// The writing end, cheap to clone: one per formatted event.
#[derive(Clone)]
pub(super) struct Queued {
    lines: SyncSender<Vec<u8>>,
    dropped: Arc<AtomicUsize>,
}

/// Keeps the writer thread's queue open; dropping it lets the thread write what is queued,
/// waiting for that at most [`FLUSH_AT_EXIT`].
pub(super) struct QueueGuard {
    lines: Option<SyncSender<Vec<u8>>>,
    done: Receiver<()>,
    dropped: Arc<AtomicUsize>,
}

/// The longest wait at exit for queued lines to be written.
const FLUSH_AT_EXIT: Duration = Duration::from_secs(1);

/// A queue of at most `capacity` lines in front of `output`, written by a thread named `name`.
pub(super) fn queued(
    mut output: impl Write + Send + 'static,
    capacity: usize,
    name: &str,
) -> std::io::Result<(Queued, QueueGuard)> {
    let (lines, queue) = sync_channel::<Vec<u8>>(capacity);
    let (finished, done) = sync_channel(1);
    std::thread::Builder::new()
        .name(name.to_owned())
        .spawn(move || {
            for line in queue {
                // An empty line is the guard asking whether everything before it is written.
                if line.is_empty() {
                    let _ = finished.try_send(());
                    continue;
                }
                // An output that fails (a closed pipe) drops the line; there is nowhere to say so.
                let _ = output.write_all(&line);
                let _ = output.flush();
            }
        })?;
    let dropped = Arc::new(AtomicUsize::new(0));
    Ok((
        Queued {
            lines: lines.clone(),
            dropped: Arc::clone(&dropped),
        },
        QueueGuard {
            lines: Some(lines),
            done,
            dropped,
        },
    ))
}

impl Write for Queued {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        match self.lines.try_send(buf.to_vec()) {
            Ok(()) | Err(TrySendError::Disconnected(_)) => {}
            Err(TrySendError::Full(_)) => {
                self.dropped.fetch_add(1, Ordering::Relaxed);
            }
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl QueueGuard {
    /// Lines dropped so far because the queue was full.
    pub(super) fn dropped(&self) -> usize {
        self.dropped.load(Ordering::Relaxed)
    }
}

impl Drop for QueueGuard {
    fn drop(&mut self) {
        // The subscriber keeps a writer for the process's life, so the queue never closes:
        // a marker behind the last line says when everything before it is written.
        let Some(lines) = self.lines.take() else {
            return;
        };
        let deadline = std::time::Instant::now() + FLUSH_AT_EXIT;
        loop {
            match lines.try_send(Vec::new()) {
                Ok(()) => break,
                Err(TrySendError::Disconnected(_)) => return,
                Err(TrySendError::Full(_)) if std::time::Instant::now() < deadline => {
                    std::thread::sleep(Duration::from_millis(5));
                }
                Err(TrySendError::Full(_)) => return,
            }
        }
        let _ = self
            .done
            .recv_timeout(deadline.saturating_duration_since(std::time::Instant::now()));
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use super::*;

    /// An output that takes nothing until it is let go.
    struct Stuck(Arc<Mutex<()>>);

    impl Write for Stuck {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            drop(self.0.lock());
            Ok(buf.len())
        }

        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn a_stuck_output_drops_and_counts_lines_and_never_blocks_the_writer() {
        let gate = Arc::new(Mutex::new(()));
        let held = gate.lock().unwrap();
        let (mut writer, guard) = queued(Stuck(Arc::clone(&gate)), 4, "test-log").unwrap();
        for n in 0..100 {
            writer.write_all(format!("line {n}\n").as_bytes()).unwrap();
        }
        // One line in the thread's hands, four queued: the rest were dropped.
        assert!((95..=96).contains(&guard.dropped()), "{}", guard.dropped());
        let started = std::time::Instant::now();
        drop(guard);
        assert!(
            started.elapsed() < Duration::from_secs(5),
            "the guard waits a second at most"
        );
        drop(held);
    }

    #[test]
    fn queued_lines_are_written_in_order_by_exit() {
        let written = Arc::new(Mutex::new(Vec::new()));
        struct Into(Arc<Mutex<Vec<u8>>>);
        impl Write for Into {
            fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
                self.0.lock().unwrap().extend_from_slice(buf);
                Ok(buf.len())
            }
            fn flush(&mut self) -> std::io::Result<()> {
                Ok(())
            }
        }
        let (mut writer, guard) = queued(Into(Arc::clone(&written)), 16, "test-log").unwrap();
        writer.write_all(b"one\n").unwrap();
        writer.write_all(b"two\n").unwrap();
        // The writer stays alive, as the subscriber's does.
        drop(guard);
        assert_eq!(*written.lock().unwrap(), b"one\ntwo\n");
        drop(writer);
    }
}
