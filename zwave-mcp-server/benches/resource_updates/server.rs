//! The server under test on stdio, driven with plain blocking pipe I/O: its stdout is read on a
//! thread of its own that stamps each line the moment it has been read, so handing the line
//! over to the bench's thread is not part of any figure.

use std::{
    io::{BufRead as _, BufReader, Write as _},
    process::{Child, ChildStdin, Command, Stdio},
    sync::mpsc,
    time::{Duration, Instant},
};

use serde_json::{Value, json};

/// How long any answer or update may take before the bench gives up.
const PATIENCE: Duration = Duration::from_secs(10);

/// One server process and its stdout, line by line with the instant each line was read.
pub struct Server {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: mpsc::Receiver<(Instant, Value)>,
    next_id: u64,
    /// `notifications/resources/updated` received while no update was awaited.
    pub unexpected_updates: usize,
}

impl Server {
    /// Starts `binary` with `args` (its log to /dev/null) and initializes a 2025-11-25
    /// session, the revision of `resources/subscribe`.
    pub fn start(binary: &str, args: &[String]) -> Self {
        let mut child = Command::new(binary)
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let stdout = BufReader::new(child.stdout.take().unwrap());
        let (sender, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in stdout.lines() {
                let Ok(line) = line else { return };
                let read = Instant::now();
                let Ok(message) = serde_json::from_str::<Value>(&line) else {
                    continue;
                };
                if sender.send((read, message)).is_err() {
                    return;
                }
            }
        });
        let mut server = Self {
            stdin: child.stdin.take(),
            child,
            lines,
            next_id: 0,
            unexpected_updates: 0,
        };
        let initialized = server.request(
            "initialize",
            json!({"protocolVersion": "2025-11-25", "capabilities": {},
                   "clientInfo": {"name": "resource-updates-bench", "version": "0"}}),
        );
        assert!(initialized["result"].is_object(), "{initialized}");
        server.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        server
    }

    fn send(&mut self, message: &Value) {
        let stdin = self.stdin.as_mut().unwrap();
        stdin.write_all(format!("{message}\n").as_bytes()).unwrap();
        stdin.flush().unwrap();
    }

    /// Sends a request and waits for its answer.
    pub fn request(&mut self, method: &str, params: Value) -> Value {
        self.next_id += 1;
        let id = self.next_id;
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        loop {
            let (_, message) = self.next_message();
            if message["id"] == id && message.get("method").is_none() {
                return message;
            }
        }
    }

    /// Reads `uri` until the server can (it loads the node list first), then subscribes to it.
    pub fn subscribe(&mut self, uri: &str) {
        let deadline = Instant::now() + PATIENCE;
        loop {
            let read = self.request("resources/read", json!({ "uri": uri }));
            if read["result"]["contents"].is_array() {
                break;
            }
            assert!(Instant::now() < deadline, "{uri} never read: {read}");
            std::thread::sleep(Duration::from_millis(50));
        }
        let subscribed = self.request("resources/subscribe", json!({ "uri": uri }));
        assert_eq!(subscribed["result"], json!({}), "{subscribed}");
    }

    /// The next `notifications/resources/updated` and when its line was read.
    pub fn next_update(&mut self) -> (Instant, Value) {
        loop {
            let (read, message) = self.next_message();
            if message["method"] == "notifications/resources/updated" {
                return (read, message);
            }
        }
    }

    /// Counts the updates that came while none was awaited (there should be none: one
    /// report, one update).
    pub fn count_unexpected(&mut self) {
        while let Ok((_, message)) = self.lines.try_recv() {
            if message["method"] == "notifications/resources/updated" {
                self.unexpected_updates += 1;
            }
        }
    }

    fn next_message(&mut self) -> (Instant, Value) {
        self.lines
            .recv_timeout(PATIENCE)
            .expect("the server answers and updates within 10 s")
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        // End of stdin ends the session; then the process.
        drop(self.stdin.take());
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
