//! The real binary as a child process: the command that starts it, one-shot runs that feed it
//! a whole session and collect its output, and a live [`Conversation`] of calls in turn.

use std::{
    process::{Command, Output},
    time::Duration,
};

use serde_json::{Value, json};

use super::session::{lines, result_text, session};

/// The binary under test (Cargo builds it for this package's tests).
pub const BIN: &str = env!("CARGO_BIN_EXE_zwave-mcp-server");

/// The binary with `args`; `RUST_LOG` removed, so that only the flags decide what it logs.
pub fn command(args: &[&str]) -> Command {
    let mut command = Command::new(BIN);
    command.args(args).env_remove("RUST_LOG");
    command
}

/// Runs `command`, feeds it `messages` one a line, closes stdin, and returns its output once
/// it exited, at most `within` later. A server that refuses its start-up exits without
/// reading: the runner tolerates the closed pipe.
pub fn feed(command: &mut Command, messages: &[Value], within: Duration) -> Output {
    test_support::child::run(command, lines(messages).as_bytes(), within)
}

/// [`feed`] from async code, on the blocking pool.
pub async fn feed_blocking(mut command: Command, messages: &[Value], within: Duration) -> Output {
    let messages = messages.to_vec();
    tokio::task::spawn_blocking(move || feed(&mut command, &messages, within))
        .await
        .unwrap()
}

/// Runs the binary with `args`, feeds `input` lines, closes stdin, and waits (at most 20 s).
pub fn run(args: &[&str], input: &[Value]) -> Output {
    run_with_env(args, &[], input)
}

/// [`run`] with extra environment variables.
pub fn run_with_env(args: &[&str], env: &[(&str, &str)], input: &[Value]) -> Output {
    // One that does not exit after stdin's EOF fails the test after 20 s.
    feed(
        command(args).envs(env.iter().copied()),
        input,
        Duration::from_secs(20),
    )
}

/// An MQTT URL on which nothing listens.
pub fn closed_port_url() -> String {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    format!("mqtt://127.0.0.1:{port}")
}

/// How long a [`Conversation::call_until`] waits when the test has no reason to say otherwise.
pub const CALL_UNTIL_LIMIT: Duration = Duration::from_secs(30);

/// Kills the child when dropped, so a failing test leaves no process behind.
pub struct Reaper(pub std::process::Child);

impl Drop for Reaper {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// The binary in a session whose calls are made one after the other: each call's answer is
/// read before the next is sent (or, with [`Conversation::send`], when the test says).
pub struct Conversation {
    server: test_support::child::Live,
    next_id: u64,
    /// Answers read while waiting for another.
    early: Vec<Value>,
}

impl Conversation {
    /// Starts `command` (the binary with its flags) and initializes the session.
    pub fn over(command: &mut Command) -> Self {
        let mut server = test_support::child::Live::start(command);
        server.send(lines(&session(&[])).as_bytes());
        let _ = server.read_line(Duration::from_secs(20));
        Self {
            server,
            next_id: 100,
            early: Vec::new(),
        }
    }

    /// Starts `command` without a word sent: the test starts the session its own way (a
    /// 2026-07-28 client's `server/discover`).
    pub fn started(command: &mut Command) -> Self {
        Self {
            server: test_support::child::Live::start(command),
            next_id: 100,
            early: Vec::new(),
        }
    }

    /// Calls `tool` and returns `(is_error, text, structuredContent)` of its answer.
    pub fn call(&mut self, tool: &str, args: Value) -> (bool, String, Value) {
        let id = self.send(tool, args);
        self.answer(id)
    }

    /// Calls `tool` until `check` holds of its answer (`is_error`, text), at most `within`
    /// (each call a round trip to the binary: nothing is ordered by sleeping, the answers are
    /// waited for); returns that answer as [`Conversation::call`] does.
    pub fn call_until(
        &mut self,
        tool: &str,
        args: &Value,
        within: Duration,
        check: impl Fn(bool, &str) -> bool,
    ) -> (bool, String, Value) {
        let deadline = std::time::Instant::now() + within;
        loop {
            let (error, text, structured) = self.call(tool, args.clone());
            if check(error, &text) {
                return (error, text, structured);
            }
            assert!(
                std::time::Instant::now() < deadline,
                "`{tool}` {args} never answered as expected within {within:?}; last: {text}"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// Sends a call of `tool` without waiting for its answer; returns its id.
    pub fn send(&mut self, tool: &str, args: Value) -> u64 {
        self.next_id += 1;
        let id = self.next_id;
        let request = json!({"jsonrpc":"2.0","id": id,"method":"tools/call","params":{"name": tool, "arguments": args}});
        self.server.send(lines(&[request]).as_bytes());
        id
    }

    /// Sends a call of `tool` carrying progress token `token`; returns its id.
    pub fn send_with_progress(&mut self, tool: &str, args: Value, token: &str) -> u64 {
        self.next_id += 1;
        let id = self.next_id;
        let request = json!({"jsonrpc":"2.0","id": id,"method":"tools/call","params":{"name": tool, "arguments": args, "_meta": {"progressToken": token}}});
        self.server.send(lines(&[request]).as_bytes());
        id
    }

    /// Sends `message` as it is (a notification of the client's).
    pub fn send_message(&mut self, message: &Value) {
        self.server
            .send(lines(std::slice::from_ref(message)).as_bytes());
    }

    /// Reads messages until `check` holds of one (at most 30 s a line); returns it. Every
    /// message read before it is kept for its turn.
    pub fn wait_for(&mut self, check: impl Fn(&Value) -> bool) -> Value {
        if let Some(at) = self.early.iter().position(&check) {
            return self.early[at].clone();
        }
        loop {
            let line = self.server.read_line(Duration::from_secs(30));
            let message: Value = serde_json::from_str(&line).unwrap();
            self.early.push(message.clone());
            if check(&message) {
                return message;
            }
        }
    }

    /// The `notifications/progress` read so far for `token`, in order.
    pub fn progress(&self, token: &str) -> Vec<Value> {
        self.early
            .iter()
            .filter(|m| {
                m["method"] == "notifications/progress" && m["params"]["progressToken"] == token
            })
            .map(|m| m["params"].clone())
            .collect()
    }

    /// The answer to call `id`: `(is_error, text, structuredContent)`. Answers to other calls
    /// that come first are kept for their turn.
    pub fn answer(&mut self, id: u64) -> (bool, String, Value) {
        let message = match self.early.iter().position(|m| m["id"] == json!(id)) {
            Some(at) => self.early.remove(at),
            None => loop {
                let line = self.server.read_line(Duration::from_secs(30));
                let message: Value = serde_json::from_str(&line).unwrap();
                if message["id"] == json!(id) {
                    break message;
                }
                self.early.push(message);
            },
        };
        let result = &message["result"];
        let (error, text) = result_text(result);
        (error, text, result["structuredContent"].clone())
    }

    /// Sends a request of `method` with `params` without waiting; returns its id.
    pub fn send_request(&mut self, method: &str, params: Value) -> u64 {
        self.next_id += 1;
        let id = self.next_id;
        let request = json!({"jsonrpc":"2.0","id": id,"method": method,"params": params});
        self.server.send(lines(&[request]).as_bytes());
        id
    }

    /// Sends a request and returns the whole message answering it (`result` or `error`);
    /// notifications read meanwhile are kept for [`Conversation::next_notification`].
    pub fn request(&mut self, method: &str, params: Value) -> Value {
        let id = self.send_request(method, params);
        self.message(id)
    }

    /// The message answering request `id`.
    pub fn message(&mut self, id: u64) -> Value {
        if let Some(at) = self.early.iter().position(|m| m["id"] == json!(id)) {
            return self.early.remove(at);
        }
        loop {
            let message = self.read_message();
            if message["id"] == json!(id) {
                return message;
            }
            self.early.push(message);
        }
    }

    /// The next notification of `method` (kept ones first), waiting at most 30 s.
    pub fn next_notification(&mut self, method: &str) -> Value {
        if let Some(at) = self
            .early
            .iter()
            .position(|m| m["method"] == method && m.get("id").is_none())
        {
            return self.early.remove(at);
        }
        loop {
            let message = self.read_message();
            if message["method"] == method && message.get("id").is_none() {
                return message;
            }
            self.early.push(message);
        }
    }

    /// The notifications of `method` kept so far (read while waiting for something else),
    /// taken out.
    pub fn take_notifications(&mut self, method: &str) -> Vec<Value> {
        let (taken, kept) = std::mem::take(&mut self.early)
            .into_iter()
            .partition(|m| m["method"] == method && m.get("id").is_none());
        self.early = kept;
        taken
    }

    fn read_message(&mut self) -> Value {
        let line = self.server.read_line(Duration::from_secs(30));
        serde_json::from_str(&line).unwrap_or_else(|err| panic!("not JSON ({err}): {line:?}"))
    }

    /// The binary's process id (its `/proc/<pid>/status`).
    pub fn pid(&self) -> u32 {
        self.server.id()
    }

    /// Ends the session; returns everything the binary wrote.
    pub fn finish(self) -> Output {
        self.server.finish(Duration::from_secs(30))
    }
}
