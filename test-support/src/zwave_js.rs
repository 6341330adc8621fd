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
    server: Option<Daemon>,
    mock: Daemon,
    packages: PathBuf,
    serial: u16,
    ws: u16,
    /// The driver's settings and cache, kept across restarts of the server (as an add-on's
    /// are): names and locations survive them.
    storage: ScratchDir,
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
        let mut this = Self::without_server();
        this.start_server();
        this
    }

    /// Starts the mock network only: [`ZwaveJsServer::url`] is where the server will listen
    /// once [`ZwaveJsServer::start_server`] starts it (nothing listens there until then).
    ///
    /// # Panics
    /// When the packages cannot be installed or the mock does not start in time.
    pub fn without_server() -> Self {
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
        let storage = ScratchDir::new();
        let cache = storage.path().join("cache");
        std::fs::write(
            storage.path().join("driver.cjs"),
            format!(
                // zwave-server wants an S0 key whenever it reads a config (a test key).
                "module.exports = {{ storage: {{ cacheDir: {:?}, throttle: \"fast\" }}, securityKeys: {{ S0_Legacy: \"0102030405060708090a0b0c0d0e0f10\" }} }};\n",
                cache.display().to_string()
            ),
        )
        .unwrap();
        Self {
            server: None,
            mock,
            packages,
            serial,
            ws,
            storage,
            url: format!("ws://127.0.0.1:{ws}"),
            control,
        }
    }

    /// Starts zwave-js-server (again) on [`ZwaveJsServer::url`]; returns once it accepts
    /// connections. Its driver reads the network afresh, as after a restart of the add-on.
    ///
    /// # Panics
    /// When it does not listen in time.
    pub fn start_server(&mut self) {
        self.stop_server();
        let mut server = Command::new(self.packages.join("node_modules/.bin/zwave-server"));
        server
            .arg(format!("tcp://127.0.0.1:{}", self.serial))
            .args(["--host", "127.0.0.1", "--disable-dns-sd", "--port"])
            .arg(self.ws.to_string())
            .arg("--config")
            .arg(self.storage.path().join("driver.cjs"));
        self.server = Some(Daemon::start(
            &server,
            ScratchDir::new(),
            self.ws,
            "zwave-js-server",
            Duration::from_secs(180),
        ));
    }

    /// Stops zwave-js-server (killed, as by a crash); the mock network stays up.
    pub fn stop_server(&mut self) {
        self.server = None;
    }

    /// Asks the mock network to change (`POST /stuck {"node": 2, "on": true}`, `/ack`,
    /// `/send`, `/state`: see `run-mock-server.cjs`); returns its answer's body.
    ///
    /// # Panics
    /// When the mock does not answer 200.
    pub fn tell_mock(&self, path: &str, body: &str) -> String {
        use std::io::{Read as _, Write as _};
        let mut stream = std::net::TcpStream::connect(("127.0.0.1", self.control)).unwrap();
        write!(
            stream,
            "POST {path} HTTP/1.0\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
            body.len()
        )
        .unwrap();
        let mut answer = String::new();
        stream.read_to_string(&mut answer).unwrap();
        assert!(
            answer.starts_with("HTTP/1.1 200") || answer.starts_with("HTTP/1.0 200"),
            "the mock refused {path} {body}: {answer}"
        );
        answer
            .split_once("\r\n\r\n")
            .map(|(_, body)| body.to_owned())
            .unwrap_or_default()
    }

    /// The ends of both logs (for a failing test's message).
    pub fn logs(&self) -> String {
        format!(
            "zwave-js-server:\n{}\nmock controller:\n{}",
            self.server
                .as_ref()
                .map_or_else(|| "(not running)".to_owned(), Daemon::log),
            self.mock.log()
        )
    }
}
