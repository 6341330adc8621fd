//! Debian's Chromium driven through Debian's ChromeDriver, for the tests of the pages the
//! server serves: [`chromedriver`] starts ChromeDriver on a free loopback port (installing
//! `chromium` and `chromium-driver` when missing and the tests run as root, never skipped),
//! with the command line of a headless Chromium that asks nothing of the network but what
//! the test opens.

use std::{path::Path, process::Command, time::Duration};

use crate::{daemon::Daemon, mosquitto::ScratchDir};

/// Where Debian puts them.
const CHROMIUM: &str = "/usr/bin/chromium";
const CHROMEDRIVER: &str = "/usr/bin/chromedriver";

/// A running ChromeDriver and the folder its Chromium keeps its profile in.
pub struct ChromeDriver {
    /// Its WebDriver URL, `http://127.0.0.1:PORT`.
    pub url: String,
    profile: ScratchDir,
    _daemon: Daemon,
}

impl ChromeDriver {
    /// Chromium's path, for `goog:chromeOptions`' `binary`.
    pub fn chromium(&self) -> &'static str {
        CHROMIUM
    }

    /// The arguments of a headless Chromium with a new empty profile, `width`×`height` CSS
    /// pixels, for `goog:chromeOptions`' `args`.
    pub fn chromium_args(&self, width: u32, height: u32) -> Vec<String> {
        chromium_args(self.profile.path(), width, height)
    }
}

fn chromium_args(profile: &Path, width: u32, height: u32) -> Vec<String> {
    [
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-dev-shm-usage",
        // Without these Chromium reaches for Google's hosts at each start, and this
        // machine's closed network refuses them.
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--hide-scrollbars",
    ]
    .into_iter()
    .map(str::to_owned)
    .chain([
        format!("--user-data-dir={}", profile.display()),
        format!("--window-size={width},{height}"),
    ])
    .collect()
}

/// Starts ChromeDriver on a free loopback port.
///
/// # Panics
/// When Chromium or ChromeDriver is missing and cannot be installed, or ChromeDriver does
/// not listen within 30 s.
pub fn chromedriver() -> ChromeDriver {
    if !Path::new(CHROMIUM).is_file() || !Path::new(CHROMEDRIVER).is_file() {
        crate::debian::install_as_root(&["chromium", "chromium-driver"]);
    }
    assert!(
        Path::new(CHROMIUM).is_file() && Path::new(CHROMEDRIVER).is_file(),
        "Chromium and ChromeDriver are not installed and could not be installed: run `apt-get install chromium chromium-driver` as root"
    );
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|listener| listener.local_addr())
        .map(|addr| addr.port())
        .unwrap_or_else(|err| panic!("no free port for ChromeDriver: {err}"));
    let mut command = Command::new(CHROMEDRIVER);
    command.args([
        format!("--port={port}"),
        "--allowed-ips=127.0.0.1".to_owned(),
    ]);
    let daemon = Daemon::start(
        &command,
        ScratchDir::new(),
        port,
        "chromedriver",
        Duration::from_secs(30),
    );
    ChromeDriver {
        url: format!("http://127.0.0.1:{port}"),
        profile: ScratchDir::new(),
        _daemon: daemon,
    }
}
