//! The real zwave-js driver behind the real zwave-js-server, on zwave-js's mock controller
//! with the lab's simulated network (`fixtures/zwave-js-mock/`): what Home Assistant's Z-Wave JS
//! add-on runs, minus the radio. Installed from npm on first use, pinned, into
//! `target/peers/zwave-js`; never skipped.
#![allow(
    clippy::unwrap_used,
    reason = "test support: a failure to set up must stop the test loudly"
)]

use std::{path::PathBuf, process::Command, time::Duration};

use crate::{
    daemon::Daemon,
    fixture_path,
    mosquitto::{ScratchDir, free_port},
    peers,
};

/// zwave-js-server, pinned (the captures were taken with 3.10.2).
pub const ZWAVE_JS_SERVER: &str = "@zwave-js/server@3.10.2";
/// The driver, pinned (15.29.0: the npm mirror here has no 15.27.0).
pub const ZWAVE_JS: &str = "zwave-js@15.29.0";

/// The folder whose `node_modules` holds both, installing them when missing.
pub fn install() -> PathBuf {
    peers::npm_packages(
        "zwave-js",
        &[ZWAVE_JS_SERVER, ZWAVE_JS],
        "node_modules/.bin/zwave-server",
    )
}

/// The mock controller and zwave-js-server in front of it.
pub struct ZwaveJsServer {
    // Dropped in this order: the server before its controller.
    server: Daemon,
    mock: Daemon,
    /// `ws://127.0.0.1:<port>`.
    pub url: String,
    /// The mock's control port (`POST /send`, `/stuck`, `/ack`, `/state`; `GET /nodes`).
    pub control: u16,
}

impl ZwaveJsServer {
    /// Starts the mock network and the server; returns once the server accepts connections
    /// (it opens its port at driver ready, before the nodes' interviews end).
    ///
    /// # Panics
    /// When either cannot be installed or started in time.
    pub fn start() -> Self {
        let packages = install();
        let (serial, control, ws) = (free_port().port(), free_port().port(), free_port().port());
        let mut mock = Command::new("node");
        mock.arg(fixture_path("zwave-js-mock/run-mock-server.cjs"))
            .arg("--zui-src")
            .arg(&packages)
            .arg("--config")
            .arg(fixture_path("zwave-js-mock/mock-config.cjs"))
            .args(["--host", "127.0.0.1", "--port"])
            .arg(serial.to_string())
            .arg("--ctl-port")
            .arg(control.to_string());
        // Not probed on its port: it takes any connection there for the driver's serial line.
        let mock = Daemon::start_until_logged(
            &mock,
            ScratchDir::new(),
            "Server listening on tcp://",
            "the zwave-js mock controller",
            Duration::from_secs(60),
        );
        let mut server = Command::new(packages.join("node_modules/.bin/zwave-server"));
        server
            .arg(format!("tcp://127.0.0.1:{serial}"))
            .args(["--host", "127.0.0.1", "--disable-dns-sd", "--port"])
            .arg(ws.to_string());
        let server = Daemon::start(
            &server,
            ScratchDir::new(),
            ws,
            "zwave-js-server",
            Duration::from_secs(180),
        );
        Self {
            server,
            mock,
            url: format!("ws://127.0.0.1:{ws}"),
            control,
        }
    }

    /// The ends of both logs (for a failing test's message).
    pub fn logs(&self) -> String {
        format!(
            "zwave-js-server:\n{}\nmock controller:\n{}",
            self.server.log(),
            self.mock.log()
        )
    }
}
