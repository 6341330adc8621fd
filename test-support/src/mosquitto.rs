//! A real Mosquitto broker on a free loopback port, started and stopped by tests.
//!
//! When `mosquitto` is missing and the tests run as root, it is installed from Debian's
//! packages once (this is how a fresh CI machine gets it); otherwise the test fails with the
//! command to run. Never skipped.
#![allow(
    clippy::unwrap_used,
    reason = "test support: a failure to set up must stop the test loudly"
)]

use std::{
    net::{SocketAddr, TcpListener, TcpStream},
    path::{Path, PathBuf},
    process::{Child, Command, Stdio},
    sync::{
        Mutex,
        atomic::{AtomicU32, Ordering},
    },
    time::{Duration, Instant},
};

use crate::child;

/// Locates `mosquitto`, installing it with apt-get when missing and running as root.
///
/// # Panics
/// When it is missing and cannot be installed.
pub fn mosquitto_binary() -> PathBuf {
    static INSTALL: Mutex<()> = Mutex::new(());
    let _one_installer = INSTALL
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    if let Some(path) = find_mosquitto() {
        return path;
    }
    crate::debian::install_as_root(&["mosquitto"]);
    find_mosquitto().unwrap_or_else(|| {
        panic!("mosquitto is not installed and could not be installed: run `apt-get install mosquitto` as root")
    })
}

fn find_mosquitto() -> Option<PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .chain(["/usr/sbin".into(), "/usr/local/sbin".into()])
        .map(|dir| dir.join("mosquitto"))
        .find(|candidate| candidate.is_file())
}

fn user_name() -> String {
    let out = child::output(Command::new("id").arg("-un"), Duration::from_secs(10));
    String::from_utf8_lossy(out.stdout.trim_ascii()).into_owned()
}

/// A scratch directory removed on drop.
pub struct ScratchDir(PathBuf);

impl Default for ScratchDir {
    fn default() -> Self {
        Self::new()
    }
}

impl ScratchDir {
    /// A new empty directory under the system's temporary directory.
    ///
    /// # Panics
    /// When it cannot be created.
    pub fn new() -> Self {
        static NEXT: AtomicU32 = AtomicU32::new(0);
        let dir = std::env::temp_dir().join(format!(
            "zwave-mcp-test-{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        ));
        std::fs::create_dir_all(&dir).unwrap();
        Self(dir)
    }

    /// Its path.
    pub fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for ScratchDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// A CA and a server certificate for 127.0.0.1/localhost signed by it (openssl CLI).
pub struct TlsFiles {
    /// The CA certificate (PEM).
    pub ca: PathBuf,
    /// The server certificate (PEM).
    pub cert: PathBuf,
    /// The server key (PEM).
    pub key: PathBuf,
}

impl TlsFiles {
    /// Generates the files into `dir`, their names starting with `name`.
    ///
    /// # Panics
    /// When openssl fails.
    pub fn generate(dir: &Path, name: &str) -> Self {
        let file = |suffix: &str| dir.join(format!("{name}-{suffix}"));
        let openssl = |args: &[&str]| {
            let output = child::output(
                Command::new("openssl").args(args).current_dir(dir),
                Duration::from_secs(60),
            );
            assert!(
                output.status.success(),
                "openssl {args:?}: {}",
                String::from_utf8_lossy(&output.stderr)
            );
        };
        let (ca_key, ca, key, csr, cert, ext) = (
            file("ca.key"),
            file("ca.pem"),
            file("server.key"),
            file("server.csr"),
            file("server.pem"),
            file("ext.cnf"),
        );
        std::fs::write(&ext, "subjectAltName=IP:127.0.0.1,DNS:localhost\n").unwrap();
        let s = |p: &PathBuf| p.to_str().unwrap().to_owned();
        openssl(&[
            "req",
            "-x509",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-keyout",
            &s(&ca_key),
            "-out",
            &s(&ca),
            "-days",
            "2",
            "-subj",
            "/CN=zwave-mcp test CA",
        ]);
        openssl(&[
            "req",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-keyout",
            &s(&key),
            "-out",
            &s(&csr),
            "-subj",
            "/CN=localhost",
        ]);
        openssl(&[
            "x509",
            "-req",
            "-in",
            &s(&csr),
            "-CA",
            &s(&ca),
            "-CAkey",
            &s(&ca_key),
            "-CAcreateserial",
            "-out",
            &s(&cert),
            "-days",
            "2",
            "-extfile",
            &s(&ext),
        ]);
        Self { ca, cert, key }
    }
}

/// A running Mosquitto: a plain listener, and a TLS listener when asked for.
pub struct Mosquitto {
    child: Option<Child>,
    config: PathBuf,
    /// The plain-text listener.
    pub plain: SocketAddr,
    /// The TLS listener, when started with TLS files.
    pub tls: Option<SocketAddr>,
    _dir: ScratchDir,
}

/// A loopback address with a port free right now.
pub(crate) fn free_port() -> SocketAddr {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
}

impl Mosquitto {
    /// Starts Mosquitto on free loopback ports (installing it first if needed).
    ///
    /// # Panics
    /// When it cannot be installed or does not listen within 10 s.
    pub fn start(tls: Option<&TlsFiles>) -> Self {
        let binary = mosquitto_binary();
        let dir = ScratchDir::new();
        let plain = free_port();
        let mut config = format!(
            "per_listener_settings false\nallow_anonymous true\npersistence false\nuser {}\nlog_dest stderr\n\
             listener {} 127.0.0.1\n",
            user_name(),
            plain.port()
        );
        let tls_addr = tls.map(|files| {
            let addr = free_port();
            config.push_str(&format!(
                "listener {} 127.0.0.1\ncafile {}\ncertfile {}\nkeyfile {}\n",
                addr.port(),
                files.ca.display(),
                files.cert.display(),
                files.key.display()
            ));
            addr
        });
        let config_path = dir.path().join("mosquitto.conf");
        std::fs::write(&config_path, config).unwrap();
        let mut broker = Self {
            child: None,
            config: config_path,
            plain,
            tls: tls_addr,
            _dir: dir,
        };
        broker.child = Some(spawn(&binary, &broker.config));
        broker.wait_listening();
        broker
    }

    /// Kills the broker (its clients see the connection drop).
    pub fn stop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    /// Starts it again on the same ports.
    ///
    /// # Panics
    /// When it does not listen again within 10 s.
    pub fn restart(&mut self) {
        self.stop();
        self.child = Some(spawn(&mosquitto_binary(), &self.config));
        self.wait_listening();
    }

    /// `mqtt://127.0.0.1:<plain port>`.
    pub fn url(&self) -> String {
        format!("mqtt://127.0.0.1:{}", self.plain.port())
    }

    fn wait_listening(&self) {
        let deadline = Instant::now() + Duration::from_secs(10);
        for addr in std::iter::once(self.plain).chain(self.tls) {
            while TcpStream::connect_timeout(&addr, Duration::from_millis(100)).is_err() {
                assert!(
                    Instant::now() < deadline,
                    "mosquitto did not listen on {addr} within 10 s"
                );
                std::thread::sleep(Duration::from_millis(20));
            }
        }
    }
}

fn spawn(binary: &Path, config: &Path) -> Child {
    Command::new(binary)
        .arg("-c")
        .arg(config)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap_or_else(|err| panic!("cannot start {}: {err}", binary.display()))
}

impl Drop for Mosquitto {
    fn drop(&mut self) {
        self.stop();
    }
}
