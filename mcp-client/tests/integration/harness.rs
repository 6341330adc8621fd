//! Test plumbing: fake servers, captured logs, process checks.

use std::{
    path::PathBuf,
    sync::{Arc, Mutex, OnceLock},
    time::Duration,
};

use mcp_client::{ServerCommand, ServerConfig, connection::RetryPolicy};
use serde_json::{Map, Value};

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
