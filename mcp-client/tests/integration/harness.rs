//! Test plumbing: fake servers, our server over HTTP, captured logs, process checks.

use std::{
    path::PathBuf,
    process::Command,
    sync::{Arc, Mutex, OnceLock},
    time::Duration,
};

use mcp_client::{ServerCommand, ServerConfig, connection::RetryPolicy};
use serde_json::{Map, Value};
use test_support::{daemon::Daemon, mosquitto::ScratchDir};

pub use test_support::fixture_path;

/// A fake server in `mode`, named uniquely, with short timeouts and a single attempt.
pub fn fake(name: &str, mode: &[&str]) -> ServerConfig {
    let script = fixture_path("fake-servers/fake_mcp_server.py");
    let mut args = vec![script.to_string_lossy().into_owned()];
    args.extend(mode.iter().map(|s| (*s).to_owned()));
    let mut config = ServerConfig::new(ServerCommand::new(name, "python3", args));
    config.init_timeout = Duration::from_secs(10);
    config.call_timeout = Duration::from_secs(10);
    config.retry = RetryPolicy {
        attempts: 1,
        base_delay: Duration::from_millis(100),
    };
    config
}

/// The bearer token of the test servers (at least 16 characters, as the server wants).
pub const TOKEN: &str = "t0ken-of-the-http-tests";

/// What `zwave-mcp-server --http` logs once it listens, followed by its URL.
const SERVING: &str = "serving MCP over Streamable HTTP";

/// A `zwave-mcp-server --demo --http ADDR` with [`TOKEN`], and its URL.
pub struct ZwaveHttp {
    daemon: Daemon,
    /// Its MCP endpoint, `http://127.0.0.1:PORT/mcp`.
    pub url: String,
}

impl ZwaveHttp {
    /// Starts the server at `addr` (`127.0.0.1:0` for any free port) and reads its URL from
    /// the line it logs once it listens.
    pub fn start(addr: &str) -> Self {
        let dir = ScratchDir::new();
        let token = dir.path().join("token");
        std::fs::write(&token, format!("{TOKEN}\n")).unwrap();
        let mut command = Command::new(test_support::workspace_bin("zwave-mcp-server"));
        command
            .args(["--demo", "--http", addr, "--http-token-file"])
            .arg(&token)
            .env("RUST_LOG", "info");
        let daemon = Daemon::start_until_logged(
            &command,
            dir,
            SERVING,
            "zwave http",
            Duration::from_secs(30),
        );
        let log = std::fs::read_to_string(Self::log_path(&daemon)).unwrap();
        let url = log
            .lines()
            .find(|line| line.contains(SERVING))
            .and_then(|line| line.split("url=").nth(1))
            .and_then(|rest| rest.split_whitespace().next())
            .unwrap_or_else(|| panic!("no url in the serving line:\n{log}"))
            .to_owned();
        Self { daemon, url }
    }

    fn log_path(daemon: &Daemon) -> PathBuf {
        daemon.dir().join("zwave-http.log")
    }

    /// How often the server's log says `text`.
    pub fn count(&self, text: &str) -> usize {
        std::fs::read_to_string(Self::log_path(&self.daemon))
            .unwrap()
            .matches(text)
            .count()
    }

    /// How many times its log says `text` once it says so at least `wanted` times (the server
    /// logs through a queue, so a line can come after the answer), or after 10 s.
    pub fn count_at_least(&self, text: &str, wanted: usize) -> usize {
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        loop {
            let count = self.count(text);
            if count >= wanted || std::time::Instant::now() > deadline {
                return count;
            }
            std::thread::yield_now();
        }
    }

    /// Its address, `127.0.0.1:PORT`.
    pub fn addr(&self) -> String {
        let rest = self.url.strip_prefix("http://").unwrap();
        rest.split('/').next().unwrap().to_owned()
    }
}

/// JSON object arguments.
pub fn args(value: Value) -> Map<String, Value> {
    match value {
        Value::Object(map) => map,
        _ => panic!("arguments must be an object"),
    }
}

/// Every log line written so far (all tests of this binary share the subscriber).
static LOGS: OnceLock<Arc<Mutex<Vec<u8>>>> = OnceLock::new();

#[derive(Clone)]
struct Capture(Arc<Mutex<Vec<u8>>>);

impl std::io::Write for Capture {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// Starts capturing logs (idempotent).
pub fn capture_logs() {
    LOGS.get_or_init(|| {
        let buffer = Arc::new(Mutex::new(Vec::new()));
        let writer = Capture(Arc::clone(&buffer));
        let _ = tracing_subscriber::fmt()
            .with_writer(move || writer.clone())
            .with_ansi(false)
            .with_env_filter("mcp_client=debug")
            .try_init();
        buffer
    });
}

/// Every captured log line.
pub fn all_logs() -> Vec<String> {
    let buffer = LOGS.get().expect("capture_logs() first").lock().unwrap();
    String::from_utf8_lossy(&buffer)
        .lines()
        .map(str::to_owned)
        .collect()
}

/// Captured log lines that mention `server`.
pub fn logs_of(server: &str) -> Vec<String> {
    let buffer = LOGS.get().expect("capture_logs() first").lock().unwrap();
    String::from_utf8_lossy(&buffer)
        .lines()
        .filter(|line| {
            line.contains(&format!("server={server}"))
                || line.contains(&format!("server=\"{server}\""))
        })
        .map(str::to_owned)
        .collect()
}

/// Whether a process with this id is still running (not a zombie).
pub fn is_running(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => !stat
            .split(") ")
            .nth(1)
            .is_some_and(|rest| rest.starts_with('Z')),
        Err(_) => false,
    }
}

/// A scratch file path, unique per call, in this run's folder under the target directory
/// (the next run removes it), so test runs leave nothing in the system's temporary folder.
pub fn scratch_file(name: &str) -> PathBuf {
    static NEXT: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
    static DIR: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    let dir = DIR.get_or_init(|| {
        let dir = test_support::target_dir().join("mcp-client-scratch");
        // What earlier runs left, by process id: those no longer running.
        if let Ok(entries) = std::fs::read_dir(&dir) {
            for entry in entries.flatten() {
                let pid = entry.file_name().to_string_lossy().parse::<u32>().ok();
                if pid.is_some_and(|pid| !PathBuf::from(format!("/proc/{pid}")).exists()) {
                    let _ = std::fs::remove_dir_all(entry.path());
                }
            }
        }
        let dir = dir.join(std::process::id().to_string());
        std::fs::create_dir_all(&dir).unwrap();
        dir
    });
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    dir.join(format!("{n}-{name}"))
}
