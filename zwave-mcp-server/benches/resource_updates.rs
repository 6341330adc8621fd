//! Latency of a resource update (issue 37): from a device's report at the backend to the
//! `notifications/resources/updated` line on the server's stdout; p50, p99 and max.
//!
//! Each row is the server (the binary `cargo bench` builds, release profile) on stdio,
//! subscribed with 2025-11-25's `resources/subscribe` to one resource of the demo home, behind
//! one simulated backend run in this process: the simulated Z-Wave JS UI gateway publishing to
//! a real Mosquitto (as installed: default settings), or the simulated zwave-js-server over
//! WebSocket. A sample starts just before the simulator is handed a report of node 2's switch
//! (it flips each time): `SimGateway::press` queues the retained MQTT publish,
//! `SimZwaveJsServer::report` the `value updated` event. It ends when the update's line has been
//! read from the server's stdout. In between: the simulator's send, the broker's hop (MQTT), the
//! server taking the report into its cache, waking the session's watcher, comparing what the
//! resource shows with what it showed, writing the notification, and the pipe.
//!
//! Coalescing is not in it. After telling of a change the watcher sleeps 250 ms (`COALESCE`);
//! a change in that sleep is told at its end. Every report here comes after [`QUIET`] = 2 ×
//! 250 ms + 50 ms in which that home changed nothing: the sleep after the last update is over,
//! and so is one more, should a late change of the last report have woken the watcher again.
//! So every sample is the first update after a quiet spell, which is what a host sees of a
//! device that changes now and then; the interval shows only as the rate (one report per row
//! per round). The rows take turns, one report in flight at a time, each with a home and a
//! server of its own, so a round takes QUIET plus the samples; which row goes first (right
//! after the quiet spell, when idle CPUs are slowest to wake) rotates. Updates beyond one per
//! report are counted, and the table shows them.
//!
//! Run: `cargo bench -p zwave-mcp-server --bench resource_updates` (env `REPORTS`, default
//! 200 per row: about two minutes).
#![expect(
    clippy::unwrap_used,
    clippy::print_stdout,
    reason = "a benchmark: a failed setup should stop it loudly, and it prints its table"
)]

#[path = "resource_updates/server.rs"]
mod server;

use std::time::{Duration, Instant};

use serde_json::json;
use server::Server;
use test_support::mosquitto::Mosquitto;
use tokio::runtime::Runtime;
use zwave_mcp_server::{
    network::{MqttSettings, MqttUrl, now_ms},
    sim::{ReportDelays, SimGateway, SimOptions, SimZwaveJsServer, home::demo_home},
};

/// The least time between an update and the next report of the same home: twice the
/// watcher's 250 ms coalescing sleep, and a margin.
const QUIET: Duration = Duration::from_millis(2 * 250 + 50);

/// Reports per row before the measured ones: connections and code warm.
const WARM_UP: usize = 5;

/// The switch of node 2 in the demo home.
const SWITCH: &str = "37-0-currentValue";

/// How the server reaches the home.
#[derive(Clone, Copy)]
enum Backend {
    Mqtt,
    ZwaveJsServer,
}

/// A simulated backend serving the demo home, run on the bench's runtime.
enum Home {
    /// The simulated Z-Wave JS UI gateway and the Mosquitto it publishes to.
    Mqtt {
        sim: SimGateway,
        broker: Mosquitto,
    },
    ZwaveJsServer(SimZwaveJsServer),
}

impl Home {
    fn start(runtime: &Runtime, backend: Backend) -> Self {
        let home = demo_home(now_ms());
        match backend {
            Backend::Mqtt => {
                let broker = Mosquitto::start(None);
                let url: MqttUrl = broker.url().parse().unwrap();
                let sim = runtime.block_on(async {
                    let settings = MqttSettings::new(url);
                    let sim = SimGateway::start_with(&settings, SimOptions::default(), home);
                    sim.wait_published(Duration::from_secs(10)).await.unwrap();
                    sim
                });
                Self::Mqtt { sim, broker }
            }
            Backend::ZwaveJsServer => Self::ZwaveJsServer(
                runtime
                    .block_on(SimZwaveJsServer::start(
                        "127.0.0.1:0",
                        home,
                        ReportDelays::default(),
                    ))
                    .unwrap(),
            ),
        }
    }

    /// The server's flags that point it at this home.
    fn server_args(&self) -> Vec<String> {
        match self {
            Self::Mqtt { broker, .. } => vec!["--mqtt-url".into(), broker.url()],
            Self::ZwaveJsServer(server) => vec!["--zwave-js-url".into(), server.url().into()],
        }
    }

    /// The switch reports `on` by itself (operated by hand): returns once the simulator has
    /// been handed the report.
    fn report(&self, runtime: &Runtime, on: bool) {
        match self {
            Self::Mqtt { sim, .. } => runtime.block_on(sim.press(2, SWITCH, json!(on))),
            Self::ZwaveJsServer(server) => server.report(2, SWITCH, json!(on)),
        }
    }
}

/// One subscription measured: a home, a server subscribed to one of its resources, the samples.
struct Row {
    label: &'static str,
    uri: &'static str,
    server: Server,
    // Dropped after the server, which would otherwise log the home's loss on its way out.
    home: Home,
    samples: Vec<Duration>,
    updates: usize,
}

impl Row {
    fn start(
        runtime: &Runtime,
        binary: &str,
        backend: Backend,
        label: &'static str,
        uri: &'static str,
    ) -> Self {
        let home = Home::start(runtime, backend);
        let mut server = Server::start(binary, &home.server_args());
        server.subscribe(uri);
        Self {
            label,
            uri,
            server,
            home,
            samples: Vec::new(),
            updates: 0,
        }
    }

    /// One report and its update; the latency is kept when `measured`.
    fn sample(&mut self, runtime: &Runtime, on: bool, measured: bool) {
        let reported = Instant::now();
        self.home.report(runtime, on);
        let (read, update) = self.server.next_update();
        assert_eq!(update["params"]["uri"], self.uri, "{update}");
        self.updates += 1;
        if measured {
            self.samples.push(read - reported);
        }
    }

    fn print(&mut self) {
        self.samples.sort();
        let n = self.samples.len();
        println!(
            "| {} | `{}` | {n} | {} | {} | {} | {} |",
            self.label,
            self.uri,
            micros(self.samples[n / 2]),
            micros(self.samples[n * 99 / 100]),
            micros(self.samples[n - 1]),
            self.server.unexpected_updates,
        );
    }
}

/// A duration in µs, with a thousands separator past 1 ms (as the peers bench prints them).
fn micros(duration: Duration) -> String {
    let us = duration.as_secs_f64() * 1e6;
    if us >= 1000.0 {
        let whole = us.round() as u64;
        format!("{},{:03} µs", whole / 1000, whole % 1000)
    } else {
        format!("{us:.1} µs")
    }
}

fn main() {
    let reports: usize = std::env::var("REPORTS")
        .ok()
        .map_or(200, |n| n.parse().expect("REPORTS is a number"));
    // The simulators' tasks; the bench's own thread reports and reads.
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    let binary = env!("CARGO_BIN_EXE_zwave-mcp-server");
    let mqtt = "MQTT → simulated Z-Wave JS UI (Mosquitto)";
    let websocket = "WebSocket → simulated zwave-js-server";
    let mut rows = vec![
        Row::start(&runtime, binary, Backend::Mqtt, mqtt, "zwave://devices/2"),
        Row::start(&runtime, binary, Backend::Mqtt, mqtt, "zwave://home"),
        Row::start(
            &runtime,
            binary,
            Backend::ZwaveJsServer,
            websocket,
            "zwave://devices/2",
        ),
        Row::start(
            &runtime,
            binary,
            Backend::ZwaveJsServer,
            websocket,
            "zwave://home",
        ),
    ];
    for round in 0..WARM_UP + reports {
        // Node 2's switch starts off: every report changes it.
        let on = round % 2 == 0;
        // The first report of a round follows the quiet spell (idle CPUs take longer to
        // wake): each row takes that place in turn.
        let n = rows.len();
        for turn in 0..n {
            rows[(round + turn) % n].sample(&runtime, on, round >= WARM_UP);
        }
        std::thread::sleep(QUIET);
        for row in &mut rows {
            row.server.count_unexpected();
        }
    }
    println!(
        "| backend → peer | resource subscribed | reports | p50 | p99 | max | updates beyond one per report |"
    );
    println!("|---|---|---|---|---|---|---|");
    for row in &mut rows {
        row.print();
    }
    let updates: usize = rows.iter().map(|row| row.updates).sum();
    println!(
        "\nEach report after {QUIET:?} without a change of that home (the 250 ms coalescing \
         interval twice over, and a margin): the first update after a quiet spell. \
         {updates} updates in all."
    );
    drop(rows);
}
